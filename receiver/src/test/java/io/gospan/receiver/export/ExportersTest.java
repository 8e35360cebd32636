package io.gospan.receiver.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The exporters {@code exporter.*} builds. */
class ExportersTest {

  @Test
  void theOtlpGrpcSpanExporterConnectsBeforeItsFirstExport() throws Exception {
    try (ServerSocket collector = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      collector.setSoTimeout(10_000);
      GospanConfig c = ConfigLoader.parse(
          "exporter: {otlp: {endpoint: \"http://127.0.0.1:" + collector.getLocalPort() + "\"}}\n", "t", Map.of());
      SpanExporter exporter = Exporters.otlpSpanExporter(c.exporter().otlp(), c.exporter().retry());
      try (Socket connection = collector.accept()) {
        assertThat(connection.isConnected()).as("connected without an export").isTrue();
      } catch (SocketTimeoutException e) {
        throw new AssertionError("the exporter did not connect within 10 s of its creation", e);
      } finally {
        exporter.shutdown();
      }
    }
  }
}
