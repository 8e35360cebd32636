package io.gospan.receiver.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.Attributes;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Starts the real telemetry HTTP endpoint on 127.0.0.1. */
class TelemetryServerIT {

  @Test
  void httpEndpointServesMetricsAndHealth() throws Exception {
    SelfTelemetry t = new SelfTelemetry();
    t.counter(SelfTelemetry.SPANS_DROPPED, "dropped").add(4, Attributes.of(SelfTelemetry.REASON, "queue_full"));
    AtomicBoolean healthy = new AtomicBoolean(true);
    try (TelemetryServer s = TelemetryServer.start(new InetSocketAddress("127.0.0.1", 0), t, healthy::get)) {
      HttpClient http = HttpClient.newHttpClient();
      String base = "http://127.0.0.1:" + s.address().getPort();
      HttpResponse<String> m = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(m.statusCode()).isEqualTo(200);
      assertThat(m.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).contains("version=0.0.4"));
      assertThat(m.body()).contains("gospan_spans_dropped_total{reason=\"queue_full\"} 4");
      HttpResponse<String> h = http.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(h.statusCode()).isEqualTo(200);
      healthy.set(false);
      h = http.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(h.statusCode()).isEqualTo(503);
      HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics"))
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(post.statusCode()).isEqualTo(405);
    }
  }
}
