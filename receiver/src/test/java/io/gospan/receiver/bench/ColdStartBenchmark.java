package io.gospan.receiver.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gospan.receiver.testing.ExampleApps;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (not a test): a gospan started beside a service that is already busy. The example
 * server runs under a steady load of R spans/s (R/2 unary calls/s from the example client, both
 * traced: a client and a server span per call) before the sidecar starts; then {@code java -jar
 * gospan.jar run} (one or several builds, {@link LoadBenchmark#builds}: the recommended JVM settings
 * or {@code -Dgospan.bench.jvm.LABEL}) and, per start:
 *
 * <ul>
 *   <li>from exec to both programs traced ({@code gospan_processes_traced} ≥ 2, polled every 20 ms)
 *       and to the first span at the OTLP receiver ({@link CountingOtlpReceiver}, in this JVM);
 *   <li>over the window (60 s from the attach, {@code -Dgospan.bench.window=SECONDS}): spans shed
 *       and dropped at the queue's bound ({@code gospan.spans.dropped}), events lost in the ring
 *       buffer, the spans span assembly finished ({@code gospan.spans.finished}) and those received,
 *       against two per call made after the attach (an estimate: the client's average calls/s
 *       times the time traced, off by the poll's and the client's jitter, ~1–2 %); the sidecar's
 *       "behind" log lines are counted, and its start-up stages timed from its log lines' stamps.
 * </ul>
 *
 * <p>Run: {@code scripts/bench-cold-start.sh [starts per build and rate]} (root); {@code
 * -Dgospan.bench.rates=1000,20000} (spans/s). The builds alternate, their order turned by one each
 * start.
 */
public final class ColdStartBenchmark {
  private ColdStartBenchmark() {}

  /** One start: seconds from exec; spans and events over the window. */
  record Start(double attachS, double firstSpanS, long expected, long received, long shed, long queueFull,
               long eventsLost, long finished, int behindLines, Map<String, Double> stagesS) {
    /** From both programs traced to the first span received, s. */
    double tracedToFirstSpanS() {
      return firstSpanS - attachS;
    }
  }

  public static void main(String[] args) throws Exception {
    int starts = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    long windowS = Long.getLong("gospan.bench.window", 60);
    List<Integer> rates = new ArrayList<>();
    for (String r : System.getProperty("gospan.bench.rates", "1000,20000").split(",")) {
      rates.add(Integer.parseInt(r.trim()));
    }
    Path dir = ExampleApps.build();
    Map<String, LoadBenchmark.Build> builds = LoadBenchmark.builds();
    Map<String, Map<Integer, List<Start>>> results = new LinkedHashMap<>();
    try (CountingOtlpReceiver receiver = new CountingOtlpReceiver()) {
      Path config = Files.createTempFile("gospan-cold", ".yaml");
      Files.writeString(config, LoadBenchmark.configYaml(dir, "otlp", receiver));
      for (int i = 0; i < starts; i++) {
        for (int rate : rates) {
          List<Map.Entry<String, LoadBenchmark.Build>> order = new ArrayList<>(builds.entrySet());
          Collections.rotate(order, -i);
          for (Map.Entry<String, LoadBenchmark.Build> b : order) {
            Start s = start(dir, b.getValue(), config, receiver, rate, windowS);
            System.err.printf("%s at %,d spans/s: %s%n", b.getKey(), rate, s);
            results.computeIfAbsent(b.getKey(), k -> new LinkedHashMap<>()).computeIfAbsent(rate, k -> new ArrayList<>()).add(s);
          }
        }
      }
    }
    System.out.printf("%nCold start: %d start(s) per build and rate, window %d s from the attach%n%n", starts, windowS);
    System.out.println("| build | spans/s | exec → traced, s: median (range) | exec → first span received, s | traced → first span received, s | spans shed, per start"
        + " | queue_full | events lost | spans finished (sidecar) | received | expected (calls/s × time traced) | 'behind' lines |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (int rate : rates) {
      for (var b : results.entrySet()) {
        List<Start> runs = b.getValue().get(rate);
        System.out.printf("| %s | %,d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", b.getKey(), rate,
            range(runs, Start::attachS), range(runs, Start::firstSpanS), range(runs, Start::tracedToFirstSpanS), each(runs, Start::shed), each(runs, Start::queueFull),
            each(runs, Start::eventsLost), each(runs, Start::finished), each(runs, Start::received), each(runs, Start::expected),
            each(runs, Start::behindLines));
      }
    }
    System.out.println();
    System.out.println("Start-up stages (s from exec to the log line, median over every start of the build):");
    for (var b : results.entrySet()) {
      Map<String, List<Double>> stages = new LinkedHashMap<>();
      b.getValue().values().forEach(runs -> runs.forEach(r -> r.stagesS().forEach(
          (k, v) -> stages.computeIfAbsent(k, x -> new ArrayList<>()).add(v))));
      StringBuilder line = new StringBuilder("  " + b.getKey() + ":");
      stages.forEach((k, v) -> line.append(String.format(" %s %.2f;", k, median(v))));
      System.out.println(line);
    }
    System.out.println();
    System.out.println("SUMMARY target (issue 37): a start under 1,000 spans/s sheds nothing; exec → first exported span ≤ 2 s");
    for (int rate : rates) {
      for (var b : results.entrySet()) {
        List<Start> runs = b.getValue().get(rate);
        System.out.printf("SUMMARY %s, %,d spans/s: exec → first span received %s s (traced → first span %s s); spans shed per start %s;"
            + " events lost %s%n", b.getKey(), rate, range(runs, Start::firstSpanS), range(runs, Start::tracedToFirstSpanS),
            each(runs, Start::shed), each(runs, Start::eventsLost));
      }
    }
  }

  /**
   * One start of {@code build} under {@code rate} spans/s: a fresh example server, the load running
   * 2 s before exec, the window, then the sidecar stopped (SIGTERM) and the load ended.
   */
  static Start start(Path dir, LoadBenchmark.Build build, Path config, CountingOtlpReceiver receiver, int rate, long windowS)
      throws Exception {
    try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
      Path loadOut = Files.createTempFile("gospan-cold-load", ".json");
      Process load = new ProcessBuilder(dir.resolve("greeter-client").toString(), "-addr", server.address(), "-rpc", "unary",
          "-n", "0", "-rate", Integer.toString(rate / 2), "-concurrency", "16", "-conns", "4", "-quiet")
          .redirectOutput(loadOut.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      Thread.sleep(2000);
      long received0 = receiver.spans.sum();
      receiver.firstSpanNanos.set(0);
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(build.jvm());
      cmd.addAll(List.of("-jar", build.jar().toString(), "run", "--config", config.toString()));
      Path log = Files.createTempFile("gospan-cold", ".log");
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().putAll(build.env());
      long exec = System.nanoTime();
      long execMillis = System.currentTimeMillis();
      Process gospan = pb.start();
      System.err.println("gospan pid " + gospan.pid() + " logs to " + log);
      try {
        long attached = 0;
        long deadline = exec + TimeUnit.SECONDS.toNanos(60);
        while (attached == 0) {
          if (!gospan.isAlive() || System.nanoTime() > deadline) {
            throw new IllegalStateException("gospan did not trace both programs (its log: " + log + ")");
          }
          try {
            if (LoadBenchmark.sum(LoadBenchmark.scrape(), "gospan_processes_traced", null) >= 2) {
              attached = System.nanoTime();
            }
          } catch (IOException notYet) {
            // its telemetry endpoint is not up yet
          }
          Thread.sleep(20);
        }
        long end = attached + TimeUnit.SECONDS.toNanos(windowS);
        while (System.nanoTime() < end) {
          Thread.sleep(100);
        }
        load.destroy(); // SIGTERM: no new calls; the summary line
        if (!load.waitFor(10, TimeUnit.SECONDS)) {
          load.destroyForcibly();
        }
        long stopped = System.nanoTime();
        List<String> out = Files.readAllLines(loadOut);
        JsonNode summary = new ObjectMapper().readTree(out.get(out.size() - 1));
        // the calls made after the attach: the client runs at its rate, its calls/s times the time traced
        long expected = Math.round(2 * summary.path("calls_per_s").asDouble() * (stopped - attached) / 1e9);
        // the last batch: the batch processor's schedule delay (5 s) plus a link wait (2 s); until
        // every span the sidecar finished and did not drop has come
        long drain = System.nanoTime() + TimeUnit.SECONDS.toNanos(12);
        String metrics = LoadBenchmark.scrape();
        while (receiver.spans.sum() - received0 < LoadBenchmark.sum(metrics, "gospan_spans_finished_total", null)
            - LoadBenchmark.sum(metrics, "gospan_spans_dropped_total", null) && System.nanoTime() < drain) {
          Thread.sleep(200);
          metrics = LoadBenchmark.scrape();
        }
        long first = receiver.firstSpanNanos.get();
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        return new Start((attached - exec) / 1e9, first == 0 ? Double.NaN : (first - exec) / 1e9, expected,
            receiver.spans.sum() - received0,
            (long) LoadBenchmark.sum(metrics, "gospan_spans_dropped_total", "\"shed\""),
            (long) LoadBenchmark.sum(metrics, "gospan_spans_dropped_total", "queue_full"),
            (long) LoadBenchmark.lost(metrics),
            (long) LoadBenchmark.sum(metrics, "gospan_spans_finished_total", null),
            (int) lines.stream().filter(l -> l.contains(" behind (")).count(),
            stages(lines, execMillis));
      } finally {
        gospan.destroy();
        if (!gospan.waitFor(20, TimeUnit.SECONDS)) {
          gospan.destroyForcibly().waitFor();
        }
        load.destroyForcibly();
      }
    }
  }

  /**
   * Log lines that mark a start-up stage, by what their message starts with (printed in the order
   * the log has them).
   */
  static final Map<String, String> STAGES = Map.of(
      "telemetry endpoint", "telemetry endpoint on",
      "pipeline ready", "pipeline ready",
      "probes loaded, running", "gospan ",
      "first program traced", "tracing pid",
      "first 'behind'", "behind (",
      "'caught up'", "caught up");

  /**
   * Seconds from {@code execMillis} to the first log line of each stage ({@link #STAGES}: the
   * sidecar's lines are stamped {@code yyyy-MM-dd'T'HH:mm:ss.SSSXXX}).
   */
  static Map<String, Double> stages(List<String> lines, long execMillis) {
    Map<String, Double> at = new LinkedHashMap<>();
    for (String line : lines) {
      int sp = line.indexOf(' ');
      if (sp < 0) {
        continue;
      }
      long t;
      try {
        t = java.time.OffsetDateTime.parse(line.substring(0, sp)).toInstant().toEpochMilli();
      } catch (java.time.format.DateTimeParseException notStamped) {
        continue;
      }
      int dash = line.indexOf(" - ");
      String message = dash < 0 ? "" : line.substring(dash + 3);
      for (var s : STAGES.entrySet()) {
        if (message.startsWith(s.getValue()) && !at.containsKey(s.getKey())) {
          at.put(s.getKey(), (t - execMillis) / 1000.0);
        }
      }
    }
    return at;
  }

  interface D {
    double of(Start s);
  }

  static String range(List<Start> runs, D d) {
    List<Double> v = new ArrayList<>();
    runs.forEach(r -> v.add(d.of(r)));
    Collections.sort(v);
    return String.format("%.2f (%.2f–%.2f)", median(v), v.get(0), v.get(v.size() - 1));
  }

  static String each(List<Start> runs, D d) {
    StringBuilder s = new StringBuilder();
    for (Start r : runs) {
      s.append(s.length() == 0 ? "" : ", ").append(String.format("%,d", (long) d.of(r)));
    }
    return s.toString();
  }

  static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    Collections.sort(s);
    return s.get(s.size() / 2);
  }
}
