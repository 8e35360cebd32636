package io.gospan.receiver.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.opentelemetry.exporter.prometheus.PrometheusHttpServer;
import io.opentelemetry.exporter.prometheus.PrometheusMetricReader;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * gospan's HTTP endpoint, the SDK's {@link PrometheusHttpServer} (opentelemetry-exporter-prometheus):
 * {@code GET /metrics} is every instrument of gospan's meter provider in the Prometheus text format
 * (OTel names with {@code .} → {@code _}, counters with {@code _total}, no {@code otel_scope_*}
 * labels, plus {@code target_info}); {@code GET /healthz} answers {@code 200 ok} while healthy and
 * {@code 503 unhealthy} otherwise. {@code /healthz} is served by the builder's default handler
 * ({@code setDefaultHandler}: the context {@code /}), on the same server and port; any other path
 * but {@code /metrics} and the Prometheus client's {@code /-/healthy} is {@code 404}.
 *
 * <p>The RED metrics of the traced processes join {@code /metrics} through a second reader of the
 * same exporter ({@link #redReader}) in the server's registry: the same name translation
 * ({@code rpc.server.call.duration} in {@code s} → {@code rpc_server_call_duration_seconds}), each
 * series labelled with its process's resource attributes named in {@link #isRedLabel} ({@code
 * service_name}, {@code process_pid}, {@code k8s_pod_name}, ...), no {@code target_info} of its own.
 */
public final class TelemetryServer {
  private TelemetryServer() {}

  /**
   * Starts listening on {@code address} ({@code host:port}); register the result on the meter
   * provider ({@code registerMetricReader}). With {@code red}, {@code /metrics} also serves the
   * RED metrics ({@link #redReader}) from the server's registry. Every Prometheus class gospan
   * uses is reached from here: with {@code telemetry.http.enabled: false} none is loaded.
   *
   * @param key the config key of {@code address}, named in the error
   * @param red the RED metrics to serve too, or {@code null}
   * @throws UncheckedIOException the address cannot be bound (in use, not a local address): one
   *     line naming {@code key}
   */
  public static MetricReader start(String key, InetSocketAddress address, BooleanSupplier healthy, RedMetrics.Reader red) {
    PrometheusRegistry registry = new PrometheusRegistry();
    PrometheusHttpServer server;
    try {
      server = PrometheusHttpServer.builder()
          .setPrometheusRegistry(registry)
          .setHost(address.getHostString())
          .setPort(address.getPort())
          .setOtelScopeLabelsEnabled(false)
          .setDefaultHandler(new HealthHandler(healthy))
          .build();
    } catch (UncheckedIOException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new UncheckedIOException(
          key + ": cannot listen on " + address.getHostString() + ":" + address.getPort() + ": " + cause.getMessage(),
          cause instanceof IOException io ? io : new IOException(cause));
    }
    if (red != null) {
      registry.register(redReader(red)); // after the server's own reader, as before
    }
    return server;
  }

  /** Resource attributes that label the RED series on {@code /metrics}, besides every {@code k8s.*}. */
  static final Set<String> RED_LABELS = Set.of(
      "service.name", "service.namespace", "service.instance.id", "process.pid", "process.executable.name", "container.id");

  /**
   * Whether a traced process's resource attribute {@code key} labels its RED series: {@link
   * #RED_LABELS} and every {@code k8s.*}. {@code process.pid} keeps two processes of one service
   * apart (two series with equal labels would make the scrape invalid).
   */
  public static boolean isRedLabel(String key) {
    return RED_LABELS.contains(key) || key.startsWith("k8s.");
  }

  /**
   * The Prometheus reader of the RED metrics: the SDK's {@link PrometheusMetricReader} over what
   * {@code red} collects at each scrape, in the server's registry.
   */
  static PrometheusMetricReader redReader(RedMetrics.Reader red) {
    PrometheusMetricReader reader = PrometheusMetricReader.builder()
        .setOtelScopeLabelsEnabled(false)
        .setTargetInfoMetricEnabled(false) // target_info is gospan's own (one target)
        .setAllowedResourceAttributesFilter(TelemetryServer::isRedLabel)
        .build();
    reader.register(new CollectionRegistration() {
      @Override
      public Collection<MetricData> collectAllMetrics() {
        return red.collect();
      }
    });
    return reader;
  }

  /** {@code /healthz}; {@code 404} for the other paths that reach the default context. */
  private static final class HealthHandler implements HttpHandler {
    private final BooleanSupplier healthy;

    HealthHandler(BooleanSupplier healthy) {
      this.healthy = healthy;
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
      try {
        String method = ex.getRequestMethod();
        if (!"/healthz".equals(ex.getRequestURI().getPath())) {
          respond(ex, 404, "not found\n");
        } else if (!"GET".equals(method) && !"HEAD".equals(method)) {
          respond(ex, 405, "method not allowed\n");
        } else {
          boolean ok = healthy.getAsBoolean();
          respond(ex, ok ? 200 : 503, ok ? "ok\n" : "unhealthy\n");
        }
      } finally {
        ex.close();
      }
    }

    private static void respond(HttpExchange ex, int code, String body) throws IOException {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
      boolean head = "HEAD".equals(ex.getRequestMethod());
      ex.sendResponseHeaders(code, head ? -1 : bytes.length);
      if (!head) {
        try (OutputStream out = ex.getResponseBody()) {
          out.write(bytes);
        }
      }
    }
  }
}
