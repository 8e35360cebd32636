package io.gospan.receiver.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gospan's HTTP endpoint: {@code GET /metrics} (self-telemetry in Prometheus text format 0.0.4) and
 * {@code GET /healthz} ({@code 200 ok} while healthy, {@code 503} otherwise). One daemon thread.
 */
public final class TelemetryServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TelemetryServer.class);

  private final HttpServer server;
  private final ExecutorService executor;

  private TelemetryServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /** Starts serving on {@code address} (port 0 = any free port). */
  public static TelemetryServer start(InetSocketAddress address, SelfTelemetry telemetry, BooleanSupplier healthy)
      throws IOException {
    InetSocketAddress bind =
        address.isUnresolved() ? new InetSocketAddress(address.getHostString(), address.getPort()) : address;
    HttpServer server = HttpServer.create(bind, 16);
    server.createContext(
        "/metrics",
        ex -> {
          if (!allowGet(ex)) {
            return;
          }
          StringBuilder sb = new StringBuilder(4096);
          telemetry.writePrometheus(sb);
          respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", sb.toString());
        });
    server.createContext(
        "/healthz",
        ex -> {
          if (!allowGet(ex)) {
            return;
          }
          boolean ok = healthy.getAsBoolean();
          respond(ex, ok ? 200 : 503, "text/plain; charset=utf-8", ok ? "ok\n" : "unhealthy\n");
        });
    ExecutorService executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "gospan-telemetry-http");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.start();
    log.info("telemetry endpoint on http://{}:{}/metrics", bind.getHostString(), server.getAddress().getPort());
    return new TelemetryServer(server, executor);
  }

  public InetSocketAddress address() {
    return server.getAddress();
  }

  private static boolean allowGet(HttpExchange ex) throws IOException {
    if ("GET".equals(ex.getRequestMethod()) || "HEAD".equals(ex.getRequestMethod())) {
      return true;
    }
    respond(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
    return false;
  }

  private static void respond(HttpExchange ex, int code, String contentType, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", contentType);
    boolean head = "HEAD".equals(ex.getRequestMethod());
    ex.sendResponseHeaders(code, head ? -1 : bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      if (!head) {
        out.write(bytes);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
