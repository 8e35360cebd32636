package io.gospan.receiver.export;

import io.gospan.receiver.app.PipelineBuilder;
import static io.gospan.receiver.export.OtlpGrpcReceiver.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;

/** gospan → OTLP/HTTP protobuf (JDK HTTP client), gzip, custom headers → an in-JVM HTTP receiver. */
class OtlpHttpExportIT {

  @Test
  void spansAndMetricsArriveOverOtlpHttpWithHeadersAndGzip() throws Exception {
    List<ExportTraceServiceRequest> traces = new CopyOnWriteArrayList<>();
    List<ExportMetricsServiceRequest> metrics = new CopyOnWriteArrayList<>();
    List<String> apiKeys = new CopyOnWriteArrayList<>();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
    server.createContext("/otlp/v1/traces", ex -> {
      apiKeys.add(ex.getRequestHeaders().getFirst("api-key"));
      InputStream in = ex.getRequestBody();
      if ("gzip".equals(ex.getRequestHeaders().getFirst("Content-Encoding"))) {
        in = new GZIPInputStream(in);
      }
      traces.add(ExportTraceServiceRequest.parseFrom(in.readAllBytes()));
      byte[] body = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
      ex.getResponseHeaders().set("Content-Type", "application/x-protobuf");
      ex.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    server.createContext("/otlp/v1/metrics", ex -> {
      InputStream in = ex.getRequestBody();
      if ("gzip".equals(ex.getRequestHeaders().getFirst("Content-Encoding"))) {
        in = new GZIPInputStream(in);
      }
      metrics.add(ExportMetricsServiceRequest.parseFrom(in.readAllBytes()));
      byte[] body = ExportMetricsServiceResponse.getDefaultInstance().toByteArray();
      ex.getResponseHeaders().set("Content-Type", "application/x-protobuf");
      ex.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    server.start();
    try {
      GospanConfig config =
          ConfigLoader.parse(
              """
              exporter:
                otlp: {protocol: http/protobuf, compression: gzip, headers: {api-key: from-file}}
                batch: {schedule_delay: 50ms}
              metrics: {export_interval: 1h}
              telemetry: {http: {enabled: false}}
              """,
              "it",
              Map.of(
                  "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + server.getAddress().getPort() + "/otlp",
                  "OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cret"));
      try (Pipeline p = PipelineBuilder.create(config).processMetadata(new FakeMetadata()).build()) {
        Events conn = new Events(40000);
        long t0 = p.clock().monotonicNow();
        p.accept(conn.clientStart(1, t0));
        p.accept(conn.clientTrailersOnly(1, t0 + 1_000_000, 14, "unavailable"));
        assertThat(await(10_000, () -> !traces.isEmpty())).isTrue();
        Span span = traces.get(0).getResourceSpans(0).getScopeSpans(0).getSpans(0);
        assertThat(span.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_CLIENT);
        assertThat(span.getName()).isEqualTo("helloworld.Greeter/SayHello");
        assertThat(span.getStatus().getMessage()).isEqualTo("unavailable");
        assertThat(traces.get(0).getResourceSpans(0).getScopeSpans(0).getScope().getName()).isEqualTo("io.gospan");
        assertThat(apiKeys).containsOnly("s3cret");
        assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
        assertThat(await(10_000, () -> !metrics.isEmpty())).isTrue();
        assertThat(metrics.stream().flatMap(m -> m.getResourceMetricsList().stream())
                .flatMap(rm -> rm.getScopeMetricsList().stream()).flatMap(sm -> sm.getMetricsList().stream())
                .map(m -> m.getName()))
            .contains("rpc.client.call.duration", "gospan.events.read");
      }
    } finally {
      server.stop(0);
    }
  }
}
