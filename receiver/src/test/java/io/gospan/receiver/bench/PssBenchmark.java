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
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Benchmark (not a test): the memory a node pays for several sidecars from the same jar. Per build
 * ({@link LoadBenchmark#builds()}: {@code -Dgospan.bench.jars}, {@code -Dgospan.bench.jvm.LABEL},
 * {@code -Dgospan.bench.jvm.add.LABEL}), alternating over several rounds: one {@code gospan run}
 * alone, then {@value #DEFAULT_SIDECARS} ({@code -Dgospan.bench.sidecars}) at once, each with its
 * own telemetry and link ports and a selector that traces only its own example server, which its
 * own client calls at {@code -Dgospan.bench.pss.rate} calls/s (default {@value #DEFAULT_RATE}).
 * After {@code -Dgospan.bench.pss.load} s of that load (default {@value #DEFAULT_LOAD_S}) each
 * sidecar's {@code /proc/<pid>/smaps_rollup} is read ("load"), the clients stop, and {@code
 * -Dgospan.bench.pss.idle} s later (default {@value #DEFAULT_IDLE_S}) it is read again ("idle").
 *
 * <p>PSS (proportional set size) counts a page shared by k processes as 1/k to each: the sum over
 * all sidecars counts shared pages (the jar's and the JDK's mapped files, a class-data-sharing
 * archive) once. "Each additional sidecar" = (PSS of all N − PSS of one alone) / (N − 1), per round.
 * Other JVMs of the same JDK on the machine (the benchmark's own, builds) share the JDK's files
 * too, so their PSS falls a little for everyone; the table also gives Private and Shared (kB in
 * {@code smaps_rollup}, MiB here). Also per sidecar: the time from its start until it traced its
 * server ({@code gospan_processes_traced} ≥ 1) and its CPU in % of a core over the last 30 s of
 * the load.
 *
 * <p>Run: {@code scripts/bench-pss.sh [rounds]} (root).
 */
public final class PssBenchmark {
  private PssBenchmark() {}

  static final int DEFAULT_SIDECARS = 4;
  static final int DEFAULT_RATE = 200;
  static final int DEFAULT_LOAD_S = 60;
  static final int DEFAULT_IDLE_S = 30;
  static final int CPU_WINDOW_S = 30;

  /** One reading of {@code /proc/<pid>/smaps_rollup}, kB; the start-up and CPU figures of its sidecar. */
  record Smaps(long rss, long pss, long privateClean, long privateDirty, long sharedClean, long sharedDirty,
      long startMs, double cpuPercent) {
    long privateKb() {
      return privateClean + privateDirty;
    }

    long sharedKb() {
      return sharedClean + sharedDirty;
    }
  }

  /** The readings of one phase (1 or N sidecars, one build, one round), "load" and "idle". */
  record Phase(List<Smaps> load, List<Smaps> idle) {}

  /**
   * Reads {@code /proc/<pid>/smaps_rollup} (Linux ≥ 4.14).
   *
   * @throws IOException when the process is gone
   */
  static Smaps smaps(long pid, long startMs, double cpuPercent) throws IOException {
    Map<String, Long> kb = new LinkedHashMap<>();
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps_rollup"))) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.endsWith(" kB")) {
        kb.put(line.substring(0, colon), Long.parseLong(line.substring(colon + 1, line.length() - 3).trim()));
      }
    }
    return new Smaps(kb.get("Rss"), kb.get("Pss"), kb.get("Private_Clean"), kb.get("Private_Dirty"),
        kb.get("Shared_Clean"), kb.get("Shared_Dirty"), startMs, cpuPercent);
  }

  /** A sidecar's configuration: OTLP to {@code receiver}, its own ports, only {@code server}'s process traced. */
  static String configYaml(Path dir, CountingOtlpReceiver receiver, int telemetryPort, int linkPort, int serverPort)
      throws IOException {
    return "exporter:\n  type: otlp\n  otlp:\n    endpoint: " + receiver.endpoint() + "\n"
        + "metrics:\n  enabled: false\n"
        + "telemetry:\n  http:\n    enabled: true\n    address: 127.0.0.1:" + telemetryPort + "\n"
        + "link:\n  listen: 127.0.0.1:" + linkPort + "\n"
        + "discovery:\n  instrument:\n    - exe_path: \"" + dir.toRealPath() + "/*\"\n      open_port: " + serverPort + "\n";
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2;
    int n = Integer.getInteger("gospan.bench.sidecars", DEFAULT_SIDECARS);
    int rate = Integer.getInteger("gospan.bench.pss.rate", DEFAULT_RATE);
    int loadS = Integer.getInteger("gospan.bench.pss.load", DEFAULT_LOAD_S);
    int idleS = Integer.getInteger("gospan.bench.pss.idle", DEFAULT_IDLE_S);
    if (n < 2 || loadS < CPU_WINDOW_S) {
      throw new IllegalArgumentException("gospan.bench.sidecars ≥ 2 and gospan.bench.pss.load ≥ " + CPU_WINDOW_S + " s");
    }
    Path dir = ExampleApps.build();
    Map<String, LoadBenchmark.Build> builds = LoadBenchmark.builds();
    for (Map.Entry<String, LoadBenchmark.Build> b : builds.entrySet()) {
      if (!b.getValue().gospan()) {
        throw new IllegalArgumentException(b.getKey() + ": only gospan builds are measured here");
      }
    }
    Map<String, List<Phase>> alone = new LinkedHashMap<>();
    Map<String, List<Phase>> all = new LinkedHashMap<>();
    List<ExampleApps.Server> servers = new ArrayList<>();
    List<Path> configs = new ArrayList<>();
    List<Integer> telemetryPorts = new ArrayList<>();
    CountingOtlpReceiver receiver = new CountingOtlpReceiver();
    try {
      for (int i = 0; i < n; i++) {
        ExampleApps.Server server = ExampleApps.startServer(dir);
        servers.add(server);
        int telemetry = LoadBenchmark.freePort();
        telemetryPorts.add(telemetry);
        Path config = Files.createTempFile("gospan-pss-" + i + "-", ".yaml");
        Files.writeString(config, configYaml(dir, receiver, telemetry, LoadBenchmark.freePort(), server.port()));
        configs.add(config);
      }
      for (int round = 0; round < rounds; round++) {
        List<Map.Entry<String, LoadBenchmark.Build>> order = new ArrayList<>(builds.entrySet());
        Collections.rotate(order, -round);
        for (Map.Entry<String, LoadBenchmark.Build> build : order) {
          for (int k : List.of(1, n)) {
            Phase p = phase(build.getValue(), dir, servers.subList(0, k), configs, telemetryPorts, rate, loadS, idleS);
            (k == 1 ? alone : all).computeIfAbsent(build.getKey(), x -> new ArrayList<>()).add(p);
            System.err.printf("round %d %s, %d sidecar(s): PSS %s MiB under load, %s idle%n", round + 1, build.getKey(), k,
                mib(p.load().stream().mapToLong(Smaps::pss).sum()), mib(p.idle().stream().mapToLong(Smaps::pss).sum()));
          }
        }
      }
    } finally {
      for (ExampleApps.Server s : servers) {
        s.close();
      }
      receiver.close();
      for (Path c : configs) {
        Files.deleteIfExists(c);
      }
    }
    print(builds, alone, all, n, rounds, rate, loadS, idleS);
  }

  static String mib(long kb) {
    return String.format("%.1f", kb / 1024.0);
  }

  /**
   * Starts {@code servers.size()} sidecars one after the other (each once it traces its server),
   * then a client per server at {@code rate} calls/s; reads them after {@code loadS} s of load and
   * again {@code idleS} s after the clients stopped; stops the sidecars.
   */
  static Phase phase(LoadBenchmark.Build build, Path dir, List<ExampleApps.Server> servers, List<Path> configs,
      List<Integer> telemetryPorts, int rate, int loadS, int idleS) throws Exception {
    List<Process> sidecars = new ArrayList<>();
    List<Long> startMs = new ArrayList<>();
    List<Process> clients = new ArrayList<>();
    try {
      for (int i = 0; i < servers.size(); i++) {
        long t0 = System.nanoTime();
        sidecars.add(LoadBenchmark.startGospan(build, configs.get(i), telemetryPorts.get(i)));
        startMs.add((System.nanoTime() - t0) / 1_000_000);
      }
      for (ExampleApps.Server s : servers) {
        clients.add(new ProcessBuilder(dir.resolve("greeter-client").toString(), "-addr", s.address(), "-n", "0",
            "-rate", Integer.toString(rate), "-concurrency", "4", "-quiet")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT).start());
      }
      Thread.sleep((loadS - CPU_WINDOW_S) * 1000L);
      List<Long> cpu0 = new ArrayList<>();
      for (Process p : sidecars) {
        cpu0.add(LoadBenchmark.cpuNs(p.pid()));
      }
      Thread.sleep(CPU_WINDOW_S * 1000L);
      List<Smaps> load = new ArrayList<>();
      for (int i = 0; i < sidecars.size(); i++) {
        long pid = sidecars.get(i).pid();
        double cpu = (LoadBenchmark.cpuNs(pid) - cpu0.get(i)) / 1e7 / CPU_WINDOW_S;
        load.add(smaps(pid, startMs.get(i), cpu));
      }
      stopAll(clients);
      Thread.sleep(idleS * 1000L);
      List<Smaps> idle = new ArrayList<>();
      for (int i = 0; i < sidecars.size(); i++) {
        idle.add(smaps(sidecars.get(i).pid(), startMs.get(i), Double.NaN));
      }
      return new Phase(load, idle);
    } finally {
      stopAll(clients);
      stopAll(sidecars);
    }
  }

  static void stopAll(List<Process> ps) throws InterruptedException {
    ps.forEach(Process::destroy);
    for (Process p : ps) {
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
      }
    }
  }

  static void print(Map<String, LoadBenchmark.Build> builds, Map<String, List<Phase>> alone, Map<String, List<Phase>> all,
      int n, int rounds, int rate, int loadS, int idleS) {
    List<String> summary = new ArrayList<>();
    for (Map.Entry<String, LoadBenchmark.Build> build : builds.entrySet()) {
      LoadBenchmark.Build b = build.getValue();
      System.out.printf("%n%s (%s): %d rounds, %d cores, gospan JVM %s %s; %d calls/s per server; read after %d s of load"
              + " and %d s idle; MiB, median of rounds (min–max); per sidecar = median of the sidecars%n%n", build.getKey(), b.jar(),
          rounds, Runtime.getRuntime().availableProcessors(), b.env(), String.join(" ", b.jvm()), rate, loadS, idleS);
      System.out.println("| case | sidecars | RSS per sidecar | PSS per sidecar | Private | Shared | PSS of all | PSS of each additional sidecar | start to tracing ms | CPU % of a core |");
      System.out.println("|---|---|---|---|---|---|---|---|---|---|");
      for (String c : List.of("load", "idle")) {
        for (List<Phase> phases : List.of(alone.get(build.getKey()), all.get(build.getKey()))) {
          List<List<Smaps>> rs = readings(c, phases);
          List<List<Smaps>> alone1 = readings(c, alone.get(build.getKey()));
          int k = rs.get(0).size();
          List<Double> additional = new ArrayList<>();
          if (k > 1) {
            for (int r = 0; r < rs.size(); r++) {
              additional.add((total(rs.get(r), Smaps::pss) - alone1.get(r).get(0).pss()) / 1024.0 / (k - 1));
            }
          }
          System.out.printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |%n", c, k,
              stat(rs, s -> s.rss() / 1024.0, "%.1f"), stat(rs, s -> s.pss() / 1024.0, "%.1f"),
              stat(rs, s -> s.privateKb() / 1024.0, "%.1f"), stat(rs, s -> s.sharedKb() / 1024.0, "%.1f"),
              stat(totals(rs), "%.1f"), additional.isEmpty() ? "–" : stat(additional, "%.1f"),
              stat(rs, s -> (double) s.startMs(), "%.0f"), c.equals("load") ? stat(rs, Smaps::cpuPercent, "%.2f") : "–");
          if (k > 1) {
            summary.add(String.format("SUMMARY %s | %s | PSS of each additional sidecar %s MiB (target ≤ 70) | PSS alone %s | RSS per sidecar %s",
                build.getKey(), c, stat(additional, "%.1f"),
                stat(alone1, s -> s.pss() / 1024.0, "%.1f"), stat(rs, s -> s.rss() / 1024.0, "%.1f")));
          }
        }
      }
    }
    System.out.println();
    summary.forEach(System.out::println);
  }

  /** Each round's readings of case {@code c} ("load" or "idle"). */
  static List<List<Smaps>> readings(String c, List<Phase> phases) {
    List<List<Smaps>> out = new ArrayList<>();
    phases.forEach(p -> out.add(c.equals("load") ? p.load() : p.idle()));
    return out;
  }

  static double total(List<Smaps> ss, java.util.function.ToLongFunction<Smaps> f) {
    return ss.stream().mapToLong(f).sum();
  }

  static List<Double> totals(List<List<Smaps>> rs) {
    List<Double> out = new ArrayList<>();
    rs.forEach(r -> out.add(total(r, Smaps::pss) / 1024.0));
    return out;
  }

  /** Over rounds, the median sidecar of each round: median of those (min–max). */
  static String stat(List<List<Smaps>> rs, ToDoubleFunction<Smaps> f, String format) {
    List<Double> perRound = new ArrayList<>();
    for (List<Smaps> r : rs) {
      List<Double> v = new ArrayList<>();
      r.forEach(s -> v.add(f.applyAsDouble(s)));
      v.sort(Double::compare);
      perRound.add(v.get(v.size() / 2));
    }
    return stat(perRound, format);
  }

  static String stat(List<Double> values, String format) {
    List<Double> v = new ArrayList<>(values);
    v.sort(Double::compare);
    return String.format(format + " (" + format + "–" + format + ")", v.get(v.size() / 2), v.get(0), v.get(v.size() - 1));
  }
}
