package io.gospan.receiver.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.app.PipelineBuilder;
import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.event.ProcessInfo;
import io.gospan.receiver.export.Pipeline;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.gospan.receiver.span.ProcessMetadata;
import io.gospan.receiver.testing.PromText;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.resources.Resource;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code /metrics} (the SDK's Prometheus server) and {@code /healthz} of a real pipeline. */
class TelemetryServerIT {

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static Pipeline pipeline(int port) {
    return pipeline(port, "metrics: {enabled: false}\n");
  }

  static Pipeline pipeline(int port, String extra) {
    return pipeline(port, extra, new FakeMetadata());
  }

  static Pipeline pipeline(int port, String extra, ProcessMetadata metadata) {
    return PipelineBuilder.create(ConfigLoader.parse(
            extra + "exporter: {type: none}\nstreams: {link_wait: 0s}\n"
                + "telemetry: {http: {address: \"127.0.0.1:" + port + "\"}}\n",
            "t", Map.of()))
        .processMetadata(metadata)
        .build();
  }

  /** FakeMetadata's resources, plus a pod's attributes and some that are not labels. */
  static final class PodMetadata implements ProcessMetadata {
    final FakeMetadata fake = new FakeMetadata();

    @Override
    public void register(ProcessInfo info) {}

    @Override
    public Resource resource(int pid) {
      return fake.resource(pid).merge(Resource.create(Attributes.builder()
          .put("k8s.pod.name", "pod-" + pid).put("k8s.namespace.name", "shop")
          .put("host.name", "node-1").put("process.executable.path", "/app/svc").build()));
    }

    @Override
    public void forget(int pid) {
      fake.forget(pid);
    }

    @Override
    public int size() {
      return fake.size();
    }
  }

  /** {@code calls} unary calls from pid 100 to pid 200 ({@code svc-100} → {@code svc-200}), ending with {@code status}. */
  static void calls(Pipeline p, Events conn, int first, int calls, int status) {
    for (int i = 0; i < calls; i++) {
      int stream = first + 2 * i;
      long t0 = p.clock().monotonicNow();
      p.accept(conn.clientStart(stream, t0));
      p.accept(conn.serverStart(stream, t0 + 100_000));
      p.accept(conn.serverTrailersOnly(stream, t0 + 200_000, status, status == 0 ? null : "no"));
      p.accept(conn.clientTrailersOnly(stream, t0 + 300_000, status, status == 0 ? null : "no"));
    }
  }

  /**
   * The RED histograms on /metrics with the SDK's Prometheus names, one series per process and
   * status, labelled with the process's resource (service.name, process.pid, k8s.*; not host.name or
   * the executable's path), read
   * by Prometheus's own text parser, in both conventions ({@code semconv.rpc: dup}); with {@code
   * metrics.prometheus: false} they are not there.
   */
  @Test
  void redMetricsOnMetricsPerProcessUnlessSwitchedOff() throws Exception {
    for (boolean on : new boolean[] {true, false}) {
      int port = freePort();
      Pipeline p = pipeline(port, "semconv: {rpc: dup}\nmetrics: {enabled: false" + (on ? "" : ", prometheus: false") + "}\n",
          new PodMetadata());
      try {
        Events conn = new Events(100, 200, 0xc1, 0x51, 40001);
        calls(p, conn, 1, 3, 0);
        calls(p, conn, 101, 2, 5);
        Map<String, JsonNode> families = PromText.scrape("http://127.0.0.1:" + port + "/metrics");
        assertThat(families.keySet()).as("self-telemetry either way").contains("gospan_events_read_total");
        if (!on) {
          assertThat(families.keySet()).as("metrics.prometheus: false").noneMatch(n -> n.startsWith("rpc_"));
          continue;
        }
        JsonNode server = families.get("rpc_server_call_duration_seconds");
        JsonNode client = families.get("rpc_client_call_duration_seconds");
        assertThat(server).as("rpc_server_call_duration_seconds in %s", families.keySet()).isNotNull();
        assertThat(server.path("type").asText()).isEqualTo("HISTOGRAM");
        assertThat(client.path("type").asText()).isEqualTo("HISTOGRAM");
        assertThat(PromText.histogramCount(server, Map.of("service_name", "svc-200", "process_pid", "200",
            "rpc_response_status_code", "OK", "rpc_method", "helloworld.Greeter/SayHello", "rpc_system_name", "grpc"))).isEqualTo(3);
        assertThat(PromText.histogramCount(server, Map.of("service_name", "svc-200", "rpc_response_status_code", "NOT_FOUND")))
            .isEqualTo(2);
        assertThat(PromText.histogramCount(client, Map.of("service_name", "svc-100", "process_pid", "100"))).isEqualTo(5);
        assertThat(PromText.histogramCount(server, Map.of("service_name", "svc-100"))).as("no server series of the client").isZero();
        JsonNode old = families.get("rpc_server_duration_milliseconds");
        assertThat(old).as("rpc_server_duration_milliseconds in %s", families.keySet()).isNotNull();
        assertThat(PromText.histogramCount(old, Map.of("service_name", "svc-200", "rpc_grpc_status_code", "5"))).isEqualTo(2);
        for (JsonNode m : server.path("metric")) {
          assertThat(PromText.labels(m)).containsEntry("k8s_pod_name", "pod-200").containsEntry("k8s_namespace_name", "shop")
              .doesNotContainKeys("host_name", "process_executable_path", "otel_scope_name", "job", "instance");
        }
        assertThat(families.get("target_info").path("metric")).as("one target: gospan").hasSize(1);
      } finally {
        p.close();
      }
    }
  }

  @Test
  void httpEndpointServesMetricsWithTheirUserVisibleNamesAndHealth() throws Exception {
    int port = freePort();
    Pipeline p = pipeline(port);
    try {
      p.meter().counterBuilder("gospan.events.lost").buildWithCallback(
          m -> m.record(7, Attributes.of(AttributeKey.stringKey("probe"), "http2_server_operate_headers", AttributeKey.stringKey("reason"), "ring_buffer_full")));
      Events conn = new Events(40000);
      long t0 = p.clock().monotonicNow();
      p.accept(conn.clientStart(1, t0));
      p.accept(conn.clientTrailersOnly(1, t0 + 1000, 0, null));
      // the span processor counts a span once it is exported
      assertThat(p.flush().join(10, java.util.concurrent.TimeUnit.SECONDS).isSuccess()).isTrue();
      HttpClient http = HttpClient.newHttpClient();
      String base = "http://127.0.0.1:" + port;
      assertThat(p.telemetryAddress().getPort()).isEqualTo(port);
      HttpResponse<String> m = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(m.statusCode()).isEqualTo(200);
      assertThat(m.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).contains("text/plain"));
      String text = m.body();
      assertThat(text).containsPattern("(?m)^gospan_events_lost_total\\{probe=\"http2_server_operate_headers\",reason=\"ring_buffer_full\"\\} 7(\\.0)?$");
      assertThat(text).containsPattern("(?m)^gospan_events_read_total\\{probe=\"loopy_writer_write_header\"\\} 1(\\.0)?$");
      assertThat(text).containsPattern("(?m)^# TYPE gospan_processes_traced gauge$");
      assertThat(text).contains("otel_sdk_processor_span_processed");
      assertThat(text).doesNotContain("otel_scope_name");
      HttpResponse<String> h = http.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(h.statusCode()).isEqualTo(200);
      assertThat(h.body()).isEqualTo("ok\n");
      HttpResponse<String> other = http.send(HttpRequest.newBuilder(URI.create(base + "/nothing")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(other.statusCode()).isEqualTo(404);
    } finally {
      p.close();
    }
    assertThat(p.healthy()).isFalse();
    // closed: the port is free again
    try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      assertThat(again.getLocalPort()).isEqualTo(port);
    }
  }

  @Test
  void aPortInUseIsAConfigErrorNamingTheKey() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      assertThatThrownBy(() -> pipeline(taken.getLocalPort()))
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("telemetry.http.address: cannot listen on 127.0.0.1:" + taken.getLocalPort())
          .hasMessageContaining("in use");
    }
  }
}
