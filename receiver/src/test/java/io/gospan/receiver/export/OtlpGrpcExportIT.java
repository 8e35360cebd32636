package io.gospan.receiver.export;

import io.gospan.receiver.app.PipelineBuilder;
import static io.gospan.receiver.export.OtlpGrpcReceiver.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.ProcessInfo;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.ProcFsProcessMetadata;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.trace.v1.Span;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** gospan → OTLP/gRPC (grpc-java over Netty) → an in-JVM OTLP receiver; the decoded bytes are checked. */
class OtlpGrpcExportIT {
  static final long MS = 1_000_000L;

  @TempDir Path proc;

  static GospanConfig config(String endpoint, String extra) {
    return config(endpoint, extra, "{}");
  }

  static GospanConfig config(String endpoint, String extra, String queue) {
    return ConfigLoader.parse(
        """
        exporter:
          otlp: {endpoint: "%s", timeout: 2s}
          batch: {schedule_delay: 50ms, max_queue_size: 64, max_export_batch_size: 16}
          retry: {max_attempts: 2, initial_backoff: 100ms, max_backoff: 200ms}
          queue: %s
        streams: {link_wait: 300ms}
        metrics: {export_interval: 1h}
        telemetry: {http: {enabled: false}}
        %s
        """
            .formatted(endpoint, queue, extra),
        "it",
        Map.of());
  }

  ProcFsProcessMetadata procWith(int pid, String environ, String exe) throws Exception {
    Path dir = Files.createDirectories(proc.resolve(Integer.toString(pid)));
    Files.write(dir.resolve("environ"), environ.replace('|', '\0').getBytes(StandardCharsets.UTF_8));
    Files.writeString(dir.resolve("cgroup"), "0::/\n");
    Path bin = Files.createDirectories(proc.resolve("bin")).resolve(exe);
    Files.writeString(bin, "");
    Files.createSymbolicLink(dir.resolve("exe"), bin);
    return null;
  }

  static void unaryCall(Pipeline p, Events conn, int stream, int status) {
    long t0 = p.clock().monotonicNow();
    for (HeaderEvent e :
        List.of(
            conn.clientStart(stream, t0),
            conn.serverStart(stream, t0 + MS),
            conn.serverHeaders(stream, t0 + 2 * MS),
            conn.serverTrailers(stream, t0 + 3 * MS, status, status == 0 ? null : "boom"),
            conn.clientHeaders(stream, t0 + 4 * MS),
            conn.clientTrailers(stream, t0 + 5 * MS, status, status == 0 ? null : "boom"))) {
      p.accept(e);
    }
  }

  @Test
  void spansResourcesParentsAndMetricsArriveOverOtlpGrpc() throws Exception {
    procWith(Events.SERVER_PID, "OTEL_SERVICE_NAME=greeter-server|X=1", "greeter");
    procWith(Events.CLIENT_PID, "", "greeter-client");
    ProcFsProcessMetadata metadata = new ProcFsProcessMetadata(proc, Map.of("deployment.environment.name", "it"), "node-it");
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    ProcessedSpans processed = new ProcessedSpans(metrics);
    try (OtlpGrpcReceiver receiver = OtlpGrpcReceiver.start(0);
        Pipeline p = PipelineBuilder.create(config(receiver.endpoint(), "")).processMetadata(metadata).metricReader(metrics).build()) {
      p.registerProcess(new ProcessInfo(Events.SERVER_PID, null, "go1.22.3"));
      Events conn = new Events(40000);
      unaryCall(p, conn, 1, 0);
      unaryCall(p, conn, 3, 13);
      assertThat(await(10_000, () -> receiver.spans().size() >= 4)).as("4 spans received").isTrue();

      List<OtlpGrpcReceiver.ReceivedSpan> spans = receiver.spans();
      assertThat(spans).hasSize(4);
      for (OtlpGrpcReceiver.ReceivedSpan server : spans.stream().filter(s -> s.span().getKind() == Span.SpanKind.SPAN_KIND_SERVER).toList()) {
        OtlpGrpcReceiver.ReceivedSpan client =
            spans.stream()
                .filter(s -> s.span().getKind() == Span.SpanKind.SPAN_KIND_CLIENT)
                .filter(s -> s.span().getSpanId().equals(server.span().getParentSpanId()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no client parent for " + server));
        assertThat(server.span().getTraceId()).isEqualTo(client.span().getTraceId());
        assertThat(server.span().getTraceId()).isNotEqualTo(ByteString.copyFrom(new byte[16]));
        assertThat(client.span().getParentSpanId()).isEmpty();
        assertThat(server.span().getName()).isEqualTo("helloworld.Greeter/SayHello");
        assertThat(server.attr("rpc.method")).isEqualTo("helloworld.Greeter/SayHello");
        assertThat(server.attr("rpc.system.name")).isEqualTo("grpc");
        assertThat(server.attr("rpc.response.status_code")).isEqualTo(client.attr("rpc.response.status_code"));
        assertThat(server.attr("client.address")).isEqualTo("10.0.0.1");
        assertThat(client.attr("server.address")).isEqualTo("greeter.example");
        assertThat(server.span().getEndTimeUnixNano() - server.span().getStartTimeUnixNano()).isEqualTo(2 * MS);
        assertThat(client.span().getEndTimeUnixNano() - client.span().getStartTimeUnixNano()).isEqualTo(5 * MS);
        long epochNow = System.currentTimeMillis() * MS;
        assertThat(Math.abs(client.span().getStartTimeUnixNano() - epochNow)).isLessThan(60_000 * MS);

        assertThat(server.resourceAttr("service.name")).isEqualTo("greeter-server");
        assertThat(server.resourceAttr("process.runtime.version")).isEqualTo("go1.22.3");
        assertThat(server.resourceAttr("process.executable.name")).isEqualTo("greeter");
        assertThat(server.resourceAttr("host.name")).isEqualTo("node-it");
        assertThat(server.resourceAttr("deployment.environment.name")).isEqualTo("it");
        assertThat(client.resourceAttr("service.name")).isEqualTo("greeter-client");
        assertThat(client.resourceAttr("process.pid")).isEqualTo(String.valueOf(Events.CLIENT_PID));
      }
      OtlpGrpcReceiver.ReceivedSpan failed =
          spans.stream().filter(s -> "INTERNAL".equals(s.attr("rpc.response.status_code")))
              .filter(s -> s.span().getKind() == Span.SpanKind.SPAN_KIND_SERVER).findFirst().orElseThrow();
      assertThat(failed.span().getStatus().getCode()).isEqualTo(io.opentelemetry.proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR);
      assertThat(failed.span().getStatus().getMessage()).isEqualTo("boom");

      // Metrics: RED histograms under each traced process's resource, self-telemetry under gospan's.
      // (The exported count is bumped when the export call returns, just after the receiver has the spans.)
      assertThat(await(10_000, () -> processed.exported() == 4)).isTrue();
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(await(10_000, () -> receiver.metrics().stream().anyMatch(m -> m.metric().getName().equals("rpc.server.call.duration"))))
          .isTrue();
      var serverDuration =
          receiver.metrics().stream()
              .filter(m -> m.metric().getName().equals("rpc.server.call.duration"))
              .findFirst()
              .orElseThrow();
      assertThat(serverDuration.resourceAttr("service.name")).isEqualTo("greeter-server");
      assertThat(serverDuration.metric().getUnit()).isEqualTo("s");
      List<HistogramDataPoint> points = serverDuration.metric().getHistogram().getDataPointsList();
      assertThat(points).hasSize(2);
      assertThat(points).allSatisfy(pt -> {
        Map<String, String> a = OtlpGrpcReceiver.attrs(pt.getAttributesList());
        assertThat(a).containsEntry("rpc.method", "helloworld.Greeter/SayHello").containsEntry("rpc.system.name", "grpc");
        assertThat(pt.getCount()).isEqualTo(1);
        assertThat(pt.getSum()).isEqualTo(0.002, org.assertj.core.data.Offset.offset(1e-9));
      });
      assertThat(points).extracting(pt -> OtlpGrpcReceiver.attrs(pt.getAttributesList()).get("rpc.response.status_code"))
          .containsExactlyInAnyOrder("OK", "INTERNAL");
      assertThat(receiver.metrics())
          .anySatisfy(m -> {
            assertThat(m.metric().getName()).isEqualTo("rpc.client.call.duration");
            assertThat(m.resourceAttr("service.name")).isEqualTo("greeter-client");
          });
      assertThat(receiver.metrics())
          .anySatisfy(m -> {
            assertThat(m.metric().getName()).isEqualTo(ProcessedSpans.METRIC);
            assertThat(m.resourceAttr("service.name")).isEqualTo("gospan");
          });
      assertThat(processed.exported()).isEqualTo(4);
    }
  }

  @Test
  void keepsRunningWhileTheCollectorIsDownAndDeliversWhenItReturns() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    ProcessedSpans t = new ProcessedSpans(metrics);
    // Without the export queue (CollectorOutageIT has it): failed exports are counted by the span processor.
    try (Pipeline p = PipelineBuilder.create(config("http://127.0.0.1:" + port, "", "{max_bytes: 0}"))
        .processMetadata(new io.gospan.receiver.span.FakeMetadata())
        .metricReader(metrics).build()) {
      Events conn = new Events(40000);
      // The event reader never waits: 5,000 calls go in fast while nothing can be exported.
      long start = System.nanoTime();
      for (int i = 0; i < 5_000; i++) {
        unaryCall(p, conn, 2 * i + 1, 0);
      }
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
      // what did not fit was dropped before the processor's queue (whole traces), counted
      assertThat(t.admissionDropped()).isPositive();
      assertThat(t.queueFull()).isZero();
      assertThat(p.flush().join(30, TimeUnit.SECONDS).isDone()).isTrue();
      assertThat(await(30_000, () -> t.exportFailed() > 0)).isTrue();
      assertThat(t.exportFailed()).isPositive();
      assertThat(t.exported()).isZero();
      assertThat(p.healthy()).isTrue();

      try (OtlpGrpcReceiver receiver = OtlpGrpcReceiver.start(port)) {
        int[] stream = {100_001};
        boolean delivered =
            await(30_000, () -> {
              unaryCall(p, conn, stream[0], 0);
              stream[0] += 2;
              p.flush().join(10, TimeUnit.SECONDS);
              return !receiver.spans().isEmpty();
            });
        assertThat(delivered).as("spans delivered after the collector came back").isTrue();
        assertThat(t.exported()).isPositive();
      }
    }
  }
}
