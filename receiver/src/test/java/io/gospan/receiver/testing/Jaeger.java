package io.gospan.receiver.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Test helper: a real Jaeger v2 all-in-one (OTLP in, in-memory storage, query API out), built
 * from the Go module proxy by {@code scripts/jaeger.sh} and run with
 * {@code config/jaeger-e2e.yaml}. End-to-end tests export to {@link #otlpGrpcEndpoint()} and read
 * back through the query API: {@link #traces(String)} (the UI's {@code /api/traces}) and
 * {@link #tracesV3(String)} (the OTLP-shaped {@code /api/v3/traces}).
 *
 * <p>A Jaeger that cannot be built or started is an {@link AssertionError} with the script's or
 * the process's output: the test fails, it is never skipped.
 *
 * <pre>{@code
 * try (Jaeger jaeger = Jaeger.start()) {
 *   // export spans to jaeger.otlpGrpcEndpoint() ...
 *   List<JsonNode> traces = jaeger.awaitTraces("greeter-server", t -> !t.isEmpty(), Duration.ofSeconds(30));
 *   traces.get(0).path("spans").get(0).path("operationName").asText();
 * }
 * }</pre>
 */
public final class Jaeger implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
  private static Path binary;

  private final Process process;
  private final Path log;
  private final Supplier<String> externalLog;
  private final Ports ports;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** The addresses one instance listens on, all on 127.0.0.1. */
  public record Ports(int otlpGrpc, int otlpHttp, int queryHttp, int queryGrpc, int health) {
    /** The usual ports: OTLP 4317/4318, query 16686/16685, health 13133. */
    public static Ports defaults() {
      return new Ports(4317, 4318, 16686, 16685, 13133);
    }

    /** Five ports free at the time of the call. */
    public static Ports free() {
      return new Ports(freePort(), freePort(), freePort(), freePort(), freePort());
    }
  }

  private Jaeger(Process process, Path log, Supplier<String> externalLog, Ports ports) {
    this.process = process;
    this.log = log;
    this.externalLog = externalLog;
    this.ports = ports;
  }

  /**
   * A Jaeger this class did not start (e.g. a container's), read through its query API on
   * 127.0.0.1:{@code queryHttp}; {@code log} gives its log for failure messages. {@link #close()}
   * leaves it running; only the query methods and {@link #queryUrl()} apply.
   */
  public static Jaeger attach(int queryHttp, Supplier<String> log) {
    return new Jaeger(null, null, log, new Ports(0, 0, queryHttp, 0, 0));
  }

  /** Starts an instance on free ports and waits until it is ready. */
  public static Jaeger start() {
    return start(Ports.free());
  }

  /** Starts an instance on {@code ports} and waits (at most 60 s) until it accepts OTLP and queries. */
  public static Jaeger start(Ports ports) {
    Path bin = binary();
    Path config = ExampleApps.repoRoot().resolve("config/jaeger-e2e.yaml");
    Path log;
    try {
      log = Files.createTempFile("gospan-jaeger-", ".log");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ProcessBuilder pb = new ProcessBuilder(bin.toString(), "--config", config.toString())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile());
    Map<String, String> env = pb.environment();
    env.put("JAEGER_OTLP_GRPC", "127.0.0.1:" + ports.otlpGrpc());
    env.put("JAEGER_OTLP_HTTP", "127.0.0.1:" + ports.otlpHttp());
    env.put("JAEGER_QUERY_HTTP", "127.0.0.1:" + ports.queryHttp());
    env.put("JAEGER_QUERY_GRPC", "127.0.0.1:" + ports.queryGrpc());
    env.put("JAEGER_HEALTH", "127.0.0.1:" + ports.health());
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new AssertionError("cannot start " + bin + ": " + e, e);
    }
    Jaeger jaeger = new Jaeger(p, log, null, ports);
    try {
      jaeger.awaitReady();
    } catch (RuntimeException | AssertionError e) {
      jaeger.close();
      throw e;
    }
    return jaeger;
  }

  /** Builds Jaeger with {@code scripts/jaeger.sh} once per JVM (cached on disk across runs). */
  public static synchronized Path binary() {
    if (binary == null) {
      Path script = ExampleApps.repoRoot().resolve("scripts/jaeger.sh");
      String out = ExampleApps.run(List.of(script.toString()), 1800);
      String[] lines = out.strip().split("\n");
      Path p = Path.of(lines[lines.length - 1].strip());
      if (!Files.isExecutable(p)) {
        throw new AssertionError(script + " printed " + p + ", which is not an executable:\n" + out);
      }
      binary = p;
    }
    return binary;
  }

  public Ports ports() {
    return ports;
  }

  /** The OTLP/gRPC endpoint, e.g. {@code http://127.0.0.1:4317}. */
  public String otlpGrpcEndpoint() {
    return "http://127.0.0.1:" + ports.otlpGrpc();
  }

  /** The OTLP/HTTP base URL ({@code /v1/traces} is appended by exporters), e.g. {@code http://127.0.0.1:4318}. */
  public String otlpHttpEndpoint() {
    return "http://127.0.0.1:" + ports.otlpHttp();
  }

  /** The query API and UI base URL, e.g. {@code http://127.0.0.1:16686}. */
  public String queryUrl() {
    return "http://127.0.0.1:" + ports.queryHttp();
  }

  /** Service names with stored spans ({@code GET /api/services}, field {@code data}). */
  public List<String> services() {
    List<String> names = new ArrayList<>();
    getJson("/api/services").path("data").forEach(n -> names.add(n.asText()));
    return names;
  }

  /**
   * The traces of {@code service} from the last hour, through the UI's API: {@code GET
   * /api/traces?service=S&lookback=1h&limit=1000}, the elements of {@code data} (the answer is
   * {@code {data: [...], total: 0, limit: 0, offset: 0, errors: null}}; {@code total} stays 0).
   * Each trace is {@code {traceID, spans: [{traceID, spanID, operationName, references:
   * [{refType: "CHILD_OF", traceID, spanID}], startTime (µs since the epoch), duration (µs), tags:
   * [{key, type: string|bool|int64|float64, value}], logs, processID: "p1", warnings}],
   * processes: {p1: {serviceName, tags}}, warnings}}}. Ids are lower-case hex. The span kind is
   * the tag {@code span.kind} (client, server); an error status gives the tags {@code error=true},
   * {@code otel.status_code=ERROR} and {@code otel.status_description}. An unknown service gives
   * an empty list (HTTP 200, {@code data: []}).
   */
  public List<JsonNode> traces(String service) {
    JsonNode root = getJson("/api/traces?service=" + enc(service) + "&lookback=1h&limit=1000");
    List<JsonNode> traces = new ArrayList<>();
    root.path("data").forEach(traces::add);
    return traces;
  }

  /**
   * As {@link #traces(String)}, only the traces with a span that started at or after {@code
   * since} ({@code start} in µs since the epoch): a short answer for polling.
   */
  public List<JsonNode> tracesSince(String service, Instant since) {
    long startMicros = since.getEpochSecond() * 1_000_000 + since.getNano() / 1_000;
    JsonNode root = getJson("/api/traces?service=" + enc(service) + "&start=" + startMicros + "&limit=1000");
    List<JsonNode> traces = new ArrayList<>();
    root.path("data").forEach(traces::add);
    return traces;
  }

  /**
   * The traces of {@code service} from the last hour, through the API v3 (OTLP JSON): {@code GET
   * /api/v3/traces?query.service_name=S&query.start_time_min=..&query.start_time_max=..&query.num_traces=1000}
   * (both times are required, RFC 3339; {@code num_traces} must be between 1 and the memory
   * store's {@code max_traces}), the elements of {@code result.resourceSpans}. Jaeger returns one
   * element per span, each {@code {resource: {attributes: [{key, value: {stringValue}}]},
   * scopeSpans: [{scope: {name}, spans: [{traceId, spanId, parentSpanId (absent on roots), flags,
   * name, kind, startTimeUnixNano, endTimeUnixNano (decimal strings), attributes: [{key, value:
   * {stringValue | intValue (a decimal string) | boolValue | doubleValue}}], status: {code,
   * message}}]}]}}. Ids are lower-case hex, {@code kind} an integer (2 SERVER, 3 CLIENT), {@code
   * status.code} 2 for ERROR ({@code {}} when unset). An unknown service gives an empty list
   * (Jaeger answers HTTP 404 {@code {error: {httpCode: 404, message: "No traces found"}}}).
   */
  public List<JsonNode> tracesV3(String service) {
    Instant now = Instant.now();
    String path = "/api/v3/traces?query.service_name=" + enc(service)
        + "&query.start_time_min=" + enc(now.minus(1, ChronoUnit.HOURS).toString())
        + "&query.start_time_max=" + enc(now.plus(1, ChronoUnit.MINUTES).toString())
        + "&query.num_traces=1000";
    JsonNode root = getJson(path);
    List<JsonNode> resourceSpans = new ArrayList<>();
    root.path("result").path("resourceSpans").forEach(resourceSpans::add);
    return resourceSpans;
  }

  /**
   * Polls {@link #traces(String)} every 200 ms until {@code until} accepts the result; returns
   * that result. Fails with the last result and Jaeger's log when {@code timeout} passes.
   */
  public List<JsonNode> awaitTraces(String service, Predicate<List<JsonNode>> until, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<JsonNode> last;
    while (true) {
      last = traces(service);
      if (until.test(last)) {
        return last;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Jaeger: traces of service '" + service + "' did not match within " + timeout
            + "; last answer: " + last + "; services: " + services() + "\nlog:\n" + logTail());
      }
      sleep(200);
    }
  }

  /** The query API's answer to {@code pathAndQuery} (e.g. {@code /api/services}), parsed. */
  public JsonNode getJson(String pathAndQuery) {
    HttpResponse<String> r = get(pathAndQuery);
    if (r.statusCode() == 404 && pathAndQuery.startsWith("/api/v3/traces?") && r.body().contains("No traces found")) {
      // API v3 answers a search without results with 404 and an error object.
      return JSON.createObjectNode();
    }
    if (r.statusCode() != 200) {
      throw new AssertionError("Jaeger GET " + pathAndQuery + " -> " + r.statusCode() + ": " + r.body());
    }
    try {
      return JSON.readTree(r.body());
    } catch (IOException e) {
      throw new AssertionError("Jaeger GET " + pathAndQuery + ": not JSON: " + r.body(), e);
    }
  }

  private HttpResponse<String> get(String pathAndQuery) {
    HttpRequest req = HttpRequest.newBuilder(URI.create(queryUrl() + pathAndQuery))
        .timeout(Duration.ofSeconds(10))
        .GET()
        .build();
    try {
      return http.send(req, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new AssertionError("Jaeger GET " + pathAndQuery + ": " + e + "\nlog:\n" + logTail(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The last 8 KiB of Jaeger's stdout and stderr. */
  public String logTail() {
    if (externalLog != null) {
      return externalLog.get();
    }
    try {
      String s = Files.readString(log, StandardCharsets.UTF_8);
      return s.length() <= 8192 ? s : s.substring(s.length() - 8192);
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new AssertionError("Jaeger exited with status " + process.exitValue() + " before it was ready:\n"
            + logTail());
      }
      if (accepts(ports.otlpGrpc()) && accepts(ports.otlpHttp()) && queryAnswers()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Jaeger was not ready within " + READY_TIMEOUT + ":\n" + logTail());
      }
      sleep(100);
    }
  }

  private boolean queryAnswers() {
    HttpRequest req = HttpRequest.newBuilder(URI.create(queryUrl() + "/api/services"))
        .timeout(Duration.ofSeconds(2))
        .GET()
        .build();
    try {
      return http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Stops Jaeger (SIGTERM, then SIGKILL after 10 s) and deletes its log. */
  @Override
  public void close() {
    if (process == null) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      Files.deleteIfExists(log);
    } catch (IOException ignored) {
      // a temp file
    }
  }
}
