package io.gospan.receiver.export;

import io.gospan.receiver.app.PipelineBuilder;
import static io.gospan.receiver.export.OtlpGrpcReceiver.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** OTLP/gRPC over TLS with a private CA and a client certificate (mutual TLS). */
class OtlpGrpcTlsIT {
  @TempDir static Path dir;
  static TestCerts server;
  static TestCerts client;

  @BeforeAll
  static void certs() throws Exception {
    server = TestCerts.create(dir, "server");
    client = TestCerts.create(dir, "client");
  }

  static GospanConfig config(String endpoint, String tls) {
    return config(endpoint, tls, "{}");
  }

  static GospanConfig config(String endpoint, String tls, String queue) {
    return ConfigLoader.parse(
        """
        exporter:
          otlp: {endpoint: "%s", timeout: 2s, tls: %s}
          batch: {schedule_delay: 50ms}
          retry: {max_attempts: 1}
          queue: %s
        metrics: {enabled: false}
        telemetry: {http: {enabled: false}}
        """
            .formatted(endpoint, tls, queue),
        "it",
        Map.of());
  }

  static void call(Pipeline p) {
    Events conn = new Events(40000);
    long t0 = p.clock().monotonicNow();
    p.accept(conn.clientStart(1, t0));
    p.accept(conn.clientTrailersOnly(1, t0 + 1_000_000, 0, null));
  }

  @Test
  void mutualTlsWithPrivateCa() throws Exception {
    try (OtlpGrpcReceiver receiver = OtlpGrpcReceiver.startTls(server.cert.toFile(), server.key.toFile(), client.cert.toFile());
        Pipeline p =
            PipelineBuilder.create(
                    config(
                        receiver.tlsEndpoint(),
                        "{ca_file: \"%s\", cert_file: \"%s\", key_file: \"%s\"}".formatted(server.cert, client.cert, client.key)))
                .processMetadata(new FakeMetadata())
                .build()) {
      call(p);
      assertThat(await(15_000, () -> !receiver.spans().isEmpty())).isTrue();
      assertThat(receiver.spans().get(0).span().getName()).isEqualTo("helloworld.Greeter/SayHello");
    }
  }

  @Test
  void withoutTheClientCertificateExportFailsAndIsCounted() throws Exception {
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    // Without the export queue: the failed export is counted by the span processor.
    try (OtlpGrpcReceiver receiver = OtlpGrpcReceiver.startTls(server.cert.toFile(), server.key.toFile(), client.cert.toFile());
        Pipeline p =
            PipelineBuilder.create(config(receiver.tlsEndpoint(), "{ca_file: \"%s\"}".formatted(server.cert), "{max_bytes: 0}"))
                .processMetadata(new FakeMetadata())
                .metricReader(metrics)
                .build()) {
      call(p);
      p.flush().join(15, TimeUnit.SECONDS);
      assertThat(await(15_000, () -> new ProcessedSpans(metrics).exportFailed() > 0)).isTrue();
      assertThat(receiver.spans()).isEmpty();
    }
    // With it (the default): a failed handshake is UNAVAILABLE, retryable; the span waits in the queue, not sent.
    try (OtlpGrpcReceiver receiver = OtlpGrpcReceiver.startTls(server.cert.toFile(), server.key.toFile(), client.cert.toFile());
        Pipeline p =
            PipelineBuilder.create(config(receiver.tlsEndpoint(), "{ca_file: \"%s\"}".formatted(server.cert)))
                .processMetadata(new FakeMetadata())
                .build()) {
      call(p);
      p.flush().join(15, TimeUnit.SECONDS);
      assertThat(await(15_000, () -> p.exportQueue().orElseThrow().queuedSpans() == 1)).isTrue();
      assertThat(receiver.spans()).isEmpty();
    }
  }
}
