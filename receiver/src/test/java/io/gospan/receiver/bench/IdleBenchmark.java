package io.gospan.receiver.bench;

import io.gospan.receiver.testing.ExampleApps;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (not a test): what the sidecar costs when nothing it traces is called. Per build
 * ({@link LoadBenchmark#builds()}: {@code -Dgospan.bench.jars}, {@code -Dgospan.bench.jvm.LABEL}),
 * alternating over several rounds: {@code gospan.jar run} tracing the example server (exporting
 * over OTLP/gRPC to a receiver that only counts), one call, a 20,000-call warm-up (8 in flight),
 * then the server left alone; the sidecar's CPU and wake-ups per thread are read over a window
 * {@value #EARLY_S} s after the warm-up (the JIT may still compile) and one {@value #LATE_S} s after
 * it (settled), each {@value #WINDOW_S} s long. CPU from {@code /proc/<pid>/task/<tid>/schedstat}
 * (ns run on a CPU), wake-ups as voluntary + involuntary context switches from {@code status}.
 * Prints a table per build, the threads that woke most, and one SUMMARY line per build and window.
 *
 * <p>Run: {@code scripts/bench-idle.sh [rounds]} (root).
 */
public final class IdleBenchmark {
  private IdleBenchmark() {}

  static final int EARLY_S = 10;
  static final int LATE_S = 60;
  static final int WINDOW_S = 20;

  /** One thread's counters: ns on a CPU, context switches. */
  record Counters(long cpuNs, long switches) {}

  /** A window's figures: CPU % of a core and wake-ups per second, in all and by thread name. */
  record Window(double cpuPercent, double wakeupsPerS, Map<String, double[]> byThread, long rssKb) {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    Path dir = ExampleApps.build();
    Map<String, LoadBenchmark.Build> builds = LoadBenchmark.builds();
    CountingOtlpReceiver receiver = new CountingOtlpReceiver();
    Path config = Files.createTempFile("gospan-bench", ".yaml");
    Files.writeString(config, LoadBenchmark.configYaml(dir, "otlp", receiver));
    Map<String, List<Window>> early = new LinkedHashMap<>();
    Map<String, List<Window>> late = new LinkedHashMap<>();
    try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
      for (int round = 0; round < rounds; round++) {
        List<Map.Entry<String, LoadBenchmark.Build>> order = new ArrayList<>(builds.entrySet());
        Collections.rotate(order, -round);
        for (Map.Entry<String, LoadBenchmark.Build> build : order) {
          Process gospan = LoadBenchmark.startGospan(build.getValue(), config);
          try {
            long pid = gospan.pid();
            ExampleApps.runClient(dir, server.address(), "-n", "1");
            Thread.sleep(1500);
            ExampleApps.runClient(dir, server.address(), "-n", "20000", "-concurrency", "8", "-quiet");
            long warm = System.nanoTime();
            sleepUntil(warm, EARLY_S);
            early.computeIfAbsent(build.getKey(), k -> new ArrayList<>()).add(window(pid));
            sleepUntil(warm, LATE_S);
            late.computeIfAbsent(build.getKey(), k -> new ArrayList<>()).add(window(pid));
            System.err.printf("round %d %s: %.2f %% then %.2f %% of a core%n", round + 1, build.getKey(),
                last(early.get(build.getKey())).cpuPercent(), last(late.get(build.getKey())).cpuPercent());
          } finally {
            gospan.destroy();
            if (!gospan.waitFor(20, TimeUnit.SECONDS)) {
              gospan.destroyForcibly().waitFor();
            }
          }
        }
      }
    } finally {
      receiver.close();
    }
    List<String> summary = new ArrayList<>();
    for (Map.Entry<String, LoadBenchmark.Build> build : builds.entrySet()) {
      LoadBenchmark.Build b = build.getValue();
      System.out.printf("%n%s (%s): %d rounds, %d cores, gospan JVM %s %s; median of rounds (min–max)%n%n", build.getKey(), b.jar(),
          rounds, Runtime.getRuntime().availableProcessors(), b.env(), String.join(" ", b.jvm()));
      System.out.println("| window | CPU % of a core | wake-ups/s | RSS MiB | threads by CPU (ms/s; wake-ups/s), median |");
      System.out.println("|---|---|---|---|---|");
      for (var w : List.of(Map.entry(EARLY_S + "–" + (EARLY_S + WINDOW_S) + " s after the warm-up", early.get(build.getKey())),
          Map.entry(LATE_S + "–" + (LATE_S + WINDOW_S) + " s after the warm-up", late.get(build.getKey())))) {
        List<Window> ws = w.getValue();
        System.out.printf("| %s | %s | %s | %s | %s |%n", w.getKey(), stat(ws, Window::cpuPercent, "%.2f"),
            stat(ws, Window::wakeupsPerS, "%.1f"), stat(ws, x -> x.rssKb() / 1024.0, "%.0f"), threads(ws));
        summary.add(String.format("SUMMARY %s | idle %s | CPU %s %% of a core (target ≤ 0.5) | wake-ups/s %s", build.getKey(), w.getKey(),
            stat(ws, Window::cpuPercent, "%.2f"), stat(ws, Window::wakeupsPerS, "%.1f")));
      }
    }
    System.out.println();
    summary.forEach(System.out::println);
  }

  static Window last(List<Window> ws) {
    return ws.get(ws.size() - 1);
  }

  static void sleepUntil(long t0, int seconds) throws InterruptedException {
    long left = t0 + seconds * 1_000_000_000L - System.nanoTime();
    if (left > 0) {
      Thread.sleep(left / 1_000_000);
    }
  }

  /** Reads the counters now and {@link #WINDOW_S} s later. */
  static Window window(long pid) throws IOException, InterruptedException {
    Map<String, Counters> a = counters(pid);
    Thread.sleep(WINDOW_S * 1000L);
    Map<String, Counters> b = counters(pid);
    Map<String, double[]> byName = new TreeMap<>();
    double cpu = 0;
    double wakeups = 0;
    for (Map.Entry<String, Counters> e : b.entrySet()) {
      Counters before = a.getOrDefault(e.getKey(), new Counters(0, 0));
      double ms = (e.getValue().cpuNs() - before.cpuNs()) / 1e6 / WINDOW_S;
      double w = (double) (e.getValue().switches() - before.switches()) / WINDOW_S;
      cpu += ms;
      wakeups += w;
      String name = e.getKey().substring(e.getKey().indexOf(' ') + 1).replaceAll("[0-9]+", "#");
      byName.merge(name, new double[] {ms, w}, (x, y) -> new double[] {x[0] + y[0], x[1] + y[1]});
    }
    return new Window(cpu / 10, wakeups, byName, LoadBenchmark.rssKb(pid));
  }

  /** Per thread ("tid name"): ns on a CPU and context switches so far. */
  static Map<String, Counters> counters(long pid) throws IOException {
    Map<String, Counters> out = new TreeMap<>();
    try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          String name = Files.readString(task.resolve("comm")).strip();
          long ns = Long.parseLong(Files.readString(task.resolve("schedstat")).split(" ")[0]);
          long switches = 0;
          for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
              switches += Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
          }
          out.put(task.getFileName() + " " + name, new Counters(ns, switches));
        } catch (IOException gone) {
          // the thread ended meanwhile
        }
      }
    }
    return out;
  }

  interface F {
    double of(Window w);
  }

  static String stat(List<Window> ws, F f, String format) {
    List<Double> v = new ArrayList<>();
    ws.forEach(w -> v.add(f.of(w)));
    v.sort(Double::compare);
    return String.format(format + " (" + format + "–" + format + ")", v.get(v.size() / 2), v.get(0), v.get(v.size() - 1));
  }

  /** The threads above 0.05 ms/s or 0.5 wake-ups/s in the median, most CPU first. */
  static String threads(List<Window> ws) {
    Map<String, List<double[]>> all = new TreeMap<>();
    for (Window w : ws) {
      w.byThread().forEach((k, v) -> all.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
    }
    List<Map.Entry<String, double[]>> med = new ArrayList<>();
    all.forEach((k, list) -> {
      List<Double> ms = new ArrayList<>();
      List<Double> w = new ArrayList<>();
      list.forEach(x -> {
        ms.add(x[0]);
        w.add(x[1]);
      });
      while (ms.size() < ws.size()) { // a thread absent from some windows
        ms.add(0.0);
        w.add(0.0);
      }
      ms.sort(Double::compare);
      w.sort(Double::compare);
      med.add(Map.entry(k, new double[] {ms.get(ms.size() / 2), w.get(w.size() / 2)}));
    });
    med.sort((x, y) -> Double.compare(y.getValue()[0], x.getValue()[0]));
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, double[]> e : med) {
      if (e.getValue()[0] >= 0.05 || e.getValue()[1] >= 0.5) {
        out.add(String.format("%s %.2f; %.1f", e.getKey(), e.getValue()[0], e.getValue()[1]));
      }
    }
    return String.join(", ", out);
  }
}
