package io.gospan.receiver.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.ExampleApps;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (not a test): the traced application's throughput, latency and CPU per call
 * without gospan and with gospan attached (a separate {@code java -jar gospan.jar run}
 * process), alternating in the same run over several rounds, per workload; and the sidecar's
 * own CPU, RSS and event loss under that load. Prints a Markdown table.
 *
 * <p>Run: {@code scripts/bench-load.sh [rounds]} (root).
 */
public final class LoadBenchmark {
  private LoadBenchmark() {}

  /** The JVM settings the README recommends for the sidecar. */
  static final List<String> JVM = List.of("-Xms32m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:MaxMetaspaceSize=96m", "-Xss512k");

  record Workload(String name, List<String> clientArgs) {}

  static final List<Workload> WORKLOADS =
      List.of(
          new Workload("unary, 1 caller, full speed", List.of("-rpc", "unary", "-n", "4000", "-concurrency", "1")),
          new Workload("unary, 16 callers, full speed", List.of("-rpc", "unary", "-n", "40000", "-concurrency", "16", "-conns", "4")),
          new Workload("unary, 2,000 calls/s", List.of("-rpc", "unary", "-n", "10000", "-rate", "2000", "-concurrency", "16", "-conns", "4")),
          new Workload("server-streaming (10 replies), 4 callers", List.of("-rpc", "server-stream", "-reply-count", "10", "-n", "8000", "-concurrency", "4")));

  record Run(double callsPerS, double p50Us, double p99Us, double cpuUsPerCall, long calls,
             double sidecarCpuUsPerCall, long sidecarRssKb, double eventsPerS, long eventsLost) {}

  static final long TICK_NS = 10_000_000L; // USER_HZ = 100

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    Path dir = ExampleApps.build();
    // -Dgospan.bench.jars=label=path,label2=path2 measures several builds alternating in the same run
    // (per round and workload: without gospan, then each build in turn); default: this build's jar.
    Map<String, Path> jars = new LinkedHashMap<>();
    String jarsProperty = System.getProperty("gospan.bench.jars");
    if (jarsProperty == null || jarsProperty.isBlank()) {
      jars.put("gospan", ExampleApps.repoRoot().resolve("receiver/target/gospan.jar"));
    } else {
      for (String item : jarsProperty.split(",")) {
        int eq = item.indexOf('=');
        jars.put(item.substring(0, eq), Path.of(item.substring(eq + 1)));
      }
    }
    for (Path jar : jars.values()) {
      if (!Files.exists(jar)) {
        throw new IllegalStateException(jar + " missing: mvn -DskipTests package");
      }
    }
    Path config = Files.createTempFile("gospan-bench", ".yaml");
    // -Dgospan.bench.exporter=none leaves the span encoding out (the default writes OTLP JSON to
    // /dev/null); =otlp exports over OTLP/gRPC to a receiver in this JVM that only counts
    String exporter = System.getProperty("gospan.bench.exporter", "file");
    CountingOtlpReceiver receiver = exporter.equals("otlp") ? new CountingOtlpReceiver() : null;
    Files.writeString(config, "exporter:\n  type: " + exporter + "\n  file:\n    path: /dev/null\n"
        + (receiver != null ? "  otlp:\n    endpoint: " + receiver.endpoint() + "\n" : "")
        + "metrics:\n  enabled: false\n"
        + "telemetry:\n  http:\n    enabled: true\n    address: 127.0.0.1:19465\n");
    Map<String, List<Run>> without = new LinkedHashMap<>();
    Map<String, Map<String, List<Run>>> with = new LinkedHashMap<>();
    Map<String, Long> idleRss = new LinkedHashMap<>();
    try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
      ExampleApps.runClient(dir, server.address(), "-n", "2000", "-concurrency", "8"); // warm-up
      for (int round = 0; round < rounds; round++) {
        for (Workload w : WORKLOADS) {
          without.computeIfAbsent(w.name(), k -> new ArrayList<>()).add(run(dir, server, w, null));
          for (Map.Entry<String, Path> jar : jars.entrySet()) {
            Process gospan = startGospan(jar.getValue(), config);
            try {
              // one call so the client binary is known too; then a warm-up load so the measured
              // run sees the sidecar's steady state (a sidecar runs for days), not its JIT compiling
              ExampleApps.runClient(dir, server.address(), "-n", "1");
              Thread.sleep(1500);
              ExampleApps.runClient(dir, server.address(), "-n", "20000", "-concurrency", "8", "-quiet");
              Thread.sleep(1000);
              if (!idleRss.containsKey(jar.getKey())) {
                idleRss.put(jar.getKey(), rssKb(gospan.pid()));
              }
              with.computeIfAbsent(jar.getKey(), k -> new LinkedHashMap<>())
                  .computeIfAbsent(w.name(), k -> new ArrayList<>())
                  .add(run(dir, server, w, gospan));
            } finally {
              gospan.destroy();
              if (!gospan.waitFor(20, TimeUnit.SECONDS)) {
                System.err.println("gospan pid " + gospan.pid() + " did not stop on SIGTERM within 20 s; killing it");
                gospan.destroyForcibly().waitFor();
              }
            }
          }
        }
      }
    }
    if (receiver != null) {
      System.out.printf("%nOTLP/gRPC receiver counted %d spans%n", receiver.spans.sum());
      receiver.close();
    }
    for (Map.Entry<String, Path> jar : jars.entrySet()) {
      System.out.printf("%n%s (%s): %d rounds, %d cores, gospan JVM %s; median of rounds%n%n", jar.getKey(), jar.getValue(),
          rounds, Runtime.getRuntime().availableProcessors(), String.join(" ", JVM));
      System.out.println("| workload | calls/s without → with (ratio) | p50 µs without → with | p99 µs without → with | target CPU µs/call without → with (ratio) | sidecar CPU µs/call | sidecar RSS MiB | events/s | events lost |");
      System.out.println("|---|---|---|---|---|---|---|---|---|");
      for (Workload w : WORKLOADS) {
        List<Run> a = without.get(w.name());
        List<Run> b = with.get(jar.getKey()).get(w.name());
        System.out.printf("| %s | %.0f → %.0f (%.2f) | %.0f → %.0f | %.0f → %.0f | %.1f → %.1f (%.2f) | %.1f | %.0f | %.0f | %d |%n",
            w.name(),
            med(a, Run::callsPerS), med(b, Run::callsPerS), med(b, Run::callsPerS) / med(a, Run::callsPerS),
            med(a, Run::p50Us), med(b, Run::p50Us), med(a, Run::p99Us), med(b, Run::p99Us),
            med(a, Run::cpuUsPerCall), med(b, Run::cpuUsPerCall), med(b, Run::cpuUsPerCall) / med(a, Run::cpuUsPerCall),
            med(b, Run::sidecarCpuUsPerCall), med(b, r -> r.sidecarRssKb() / 1024.0), med(b, Run::eventsPerS),
            b.stream().mapToLong(Run::eventsLost).sum());
      }
      System.out.printf("%nsidecar RSS at idle (2 processes traced): %.0f MiB%n", idleRss.get(jar.getKey()) / 1024.0);
      System.out.println("sidecar CPU µs/call per round, by workload:");
      for (Workload w : WORKLOADS) {
        System.out.printf("  %s: %s%n", w.name(),
            with.get(jar.getKey()).get(w.name()).stream().map(r -> String.format("%.1f", r.sidecarCpuUsPerCall())).toList());
      }
    }
  }

  static Run run(Path dir, ExampleApps.Server server, Workload w, Process gospan) throws Exception {
    long serverCpu0 = cpuNs(server.pid());
    long gospanCpu0 = gospan == null ? 0 : cpuNs(gospan.pid());
    double events0 = gospan == null ? 0 : metric("gospan_events_read_total");
    double lost0 = gospan == null ? 0 : lost();
    long t0 = System.nanoTime();
    List<String> args = new ArrayList<>(w.clientArgs());
    args.add("-quiet");
    JsonNode r = ExampleApps.runClient(dir, server.address(), args.toArray(new String[0]));
    long wall = System.nanoTime() - t0;
    long calls = r.path("calls").asLong();
    double clientCpuNs = (r.path("cpu_user_ms").asDouble() + r.path("cpu_sys_ms").asDouble()) * 1e6;
    double serverCpuNs = cpuNs(server.pid()) - serverCpu0;
    double sidecarCpu = 0;
    long rss = 0;
    double eventsPerS = 0;
    long lostEvents = 0;
    if (gospan != null) {
      Thread.sleep(300); // let the sidecar drain the ring buffer
      sidecarCpu = (cpuNs(gospan.pid()) - gospanCpu0) / 1000.0 / calls;
      rss = rssKb(gospan.pid());
      eventsPerS = (metric("gospan_events_read_total") - events0) / (wall / 1e9);
      lostEvents = (long) (lost() - lost0);
    }
    return new Run(r.path("calls_per_s").asDouble(), r.path("p50_us").asDouble(), r.path("p99_us").asDouble(),
        (clientCpuNs + serverCpuNs) / 1000.0 / calls, calls, sidecarCpu, rss, eventsPerS, lostEvents);
  }

  static Process startGospan(Path jar, Path config) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(JVM);
    cmd.addAll(List.of("-jar", jar.toString(), "run", "--config", config.toString()));
    Path log = Files.createTempFile("gospan-bench", ".log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    System.err.println("gospan pid " + p.pid() + " logs to " + log);
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < deadline) {
      try {
        if (metric("gospan_processes_traced") >= 1) {
          return p;
        }
      } catch (IOException notYet) {
        // starting
      }
      Thread.sleep(200);
    }
    p.destroyForcibly();
    throw new IllegalStateException("gospan did not start tracing within 30 s");
  }

  /** utime + stime of all threads, ns (USER_HZ ticks). */
  static long cpuNs(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_NS;
  }

  static long rssKb(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return 0;
  }

  static double lost() throws IOException, InterruptedException {
    return sum("gospan_events_lost_total", "ring_buffer_full");
  }

  static double metric(String name) throws IOException, InterruptedException {
    return sum(name, null);
  }

  /** Sum of a Prometheus metric's samples on gospan's /metrics, optionally those whose labels contain {@code filter}. */
  static double sum(String name, String filter) throws IOException, InterruptedException {
    String body = HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:19465/metrics")).build(), HttpResponse.BodyHandlers.ofString())
        .body();
    double s = 0;
    for (String line : body.split("\n")) {
      if ((line.startsWith(name + " ") || line.startsWith(name + "{")) && (filter == null || line.contains(filter))) {
        s += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return s;
  }

  interface D {
    double of(Run r);
  }

  static double med(List<Run> runs, D d) {
    List<Double> v = new ArrayList<>();
    runs.forEach(r -> v.add(d.of(r)));
    v.sort(Double::compare);
    return v.get(v.size() / 2);
  }
}
