package io.gospan.receiver.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gospan.receiver.discovery.ProcessSelector;
import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.bpf.BpfObject;
import io.gospan.receiver.bpf.RingBuffer;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.probe.GrpcProbes;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (not a test): what holding execs ({@code discovery.hold_new_binaries}) adds to an exec,
 * against gospan without the hold in the same run (A/B, alternating, {@code rounds} rounds), for
 *
 * <ul>
 *   <li>a binary gospan has judged already (a copy of {@code /bin/true} exec'd before): answered at once;
 *   <li>a new binary that is not Go (each exec a fresh copy of {@code /bin/true}: a new inode, read once);
 *   <li>a new Go binary linking grpc-go (each exec a fresh copy of the example greeter-client, run with
 *       {@code -h}): inspected and attached before it runs, or let go at the hold's limit (250 ms).
 * </ul>
 *
 * and, first, what the exec notice adds to every exec on the machine: the raw tracepoint {@code
 * sched_process_exec} of this build's {@code grpc.bpf.o} against no gospan and, with {@code
 * GOSPAN_BENCH_BASELINE} (scripts/bench-exec-hold.sh with {@code BASELINE_REV}), against that commit's
 * object (its notice: the pid alone), each object loaded alone with its ring buffer drained.
 *
 * <p>Each exec is timed from fork to the end of the wait by {@code execbench} (fork, exec, wait; no shell);
 * the medians per case, and their ratio to the baseline's, are printed per round and over all rounds.
 * Only the benchmark's own binaries are selected (every other exec on the machine is let through at once).
 *
 * <p>Run: {@code scripts/bench-exec-hold.sh [rounds]} (root).
 */
public final class ExecHoldBenchmark {
  private ExecHoldBenchmark() {}

  static final int KNOWN_EXECS = 200;
  static final int NEW_NON_GO = 40;
  static final int NEW_GO = 12;

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    Path execbench = Path.of(System.getProperty("execbench", "execbench"));
    Path client = ExampleApps.build().resolve("greeter-client");
    Path dir = Files.createTempDirectory("gospan-exec-hold").toRealPath();
    Path known = copy(Path.of("/bin/true"), dir.resolve("known/true"));
    Map<String, List<Double>> medians = new LinkedHashMap<>();
    int copies = 0;
    try {
      String baseline = System.getenv("GOSPAN_BENCH_BASELINE");
      List<String> objects = new ArrayList<>(List.of("none", GrpcProbes.OBJECT));
      if (baseline != null) {
        objects.add(1, baseline);
      }
      execs(execbench, List.of(), List.of(known)); // in the page cache
      for (int round = 1; round <= rounds; round++) {
        for (String object : objects) {
          List<Double> us = object.equals("none") ? execs(execbench, List.of(), repeat(known, KNOWN_EXECS))
              : withExecTracepoint(object, () -> execs(execbench, List.of(), repeat(known, KNOWN_EXECS)));
          record("exec notice", object.equals(baseline) ? "baseline " + System.getenv("BASELINE_REV") : object, round, us, medians);
        }
      }
      System.out.printf("%nmedian exec of a binary (fork to exit) over %d rounds, by the exec tracepoint loaded:%n", rounds);
      double none = median(medians.get("exec notice|none"));
      for (String object : objects) {
        String mode = object.equals(baseline) ? "baseline " + System.getenv("BASELINE_REV") : object;
        double m = median(medians.get("exec notice|" + mode));
        System.out.printf("  %-28s %8.0f us   %.3f x no gospan (%+.0f us)%n", mode, m, m / none, m - none);
      }
      System.out.println();
      for (int round = 1; round <= rounds; round++) {
        for (boolean hold : new boolean[] {false, true}) {
          Sidecar.Options d = Sidecar.Options.defaults();
          Sidecar.Options options = new Sidecar.Options(d.headerNames(), d.ringBufferBytes(), d.scanInterval(),
              new ProcessSelector(List.of(new ProcessSelector.Rule(dir + "/*/*", null, null, null)), List.of()), d.procFs(),
              d.maxSkippedBinaries(), d.preference(), d.linger(), d.maxLingeringBinaries(), hold, d.holdLimit());
          try (Sidecar sidecar = Sidecar.start(options, e -> { }, new Tracer.Listener() {})) {
            sidecar.awaitFirstScan(java.time.Duration.ofSeconds(10));
            if (hold && sidecar.hold().isEmpty()) {
              throw new IllegalStateException("execs could not be held (see the log)");
            }
            String mode = hold ? "hold" : "no hold";
            execs(execbench, List.of(), List.of(known)); // judged once
            Thread.sleep(500);
            record("binary judged already", mode, round, execs(execbench, List.of(), repeat(known, KNOWN_EXECS)), medians);
            List<Path> nonGo = new ArrayList<>();
            for (int i = 0; i < NEW_NON_GO; i++) {
              nonGo.add(copy(Path.of("/bin/true"), dir.resolve("c" + copies++ + "/true")));
            }
            record("new binary, not Go", mode, round, execs(execbench, List.of(), nonGo), medians);
            List<Path> go = new ArrayList<>();
            for (int i = 0; i < NEW_GO; i++) {
              go.add(copy(client, dir.resolve("c" + copies++ + "/greeter-client")));
            }
            record("new Go binary (grpc-go)", mode, round, execs(execbench, List.of("-h"), go), medians);
            sidecar.hold().ifPresent(h -> System.out.printf("  hold: %d execs held, %.1f ms on average; %d let go at the"
                    + " limit; %d answered at once%n", h.held(), h.held() == 0 ? 0 : h.heldNanos() / 1e6 / h.held(),
                h.heldToLimit(), h.allowedAtOnce()));
          }
        }
      }
      System.out.printf("%nmedian exec (fork to exit) over %d rounds, hold against no hold in the same run:%n", rounds);
      for (String c : List.of("binary judged already", "new binary, not Go", "new Go binary (grpc-go)")) {
        double a = median(medians.get(c + "|no hold"));
        double b = median(medians.get(c + "|hold"));
        System.out.printf("  %-26s no hold %8.0f us   hold %8.0f us   %.2f x  (+%.0f us)%n", c, a, b, b / a, b - a);
      }
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  static List<Path> repeat(Path p, int n) {
    List<Path> l = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      l.add(p);
    }
    return l;
  }

  /** Runs {@code body} with {@code object}'s exec tracepoint attached and its notices drained meanwhile. */
  static List<Double> withExecTracepoint(String object, java.util.concurrent.Callable<List<Double>> body) throws Exception {
    try (BpfObject o = BpfObject.openResource(object)) {
      o.load();
      o.program("raw_tp_sched_process_exec").attachRawTracepoint("sched_process_exec");
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      try (RingBuffer notices = RingBuffer.open(o.map("execs"), r -> { })) {
        Thread drain = new Thread(() -> {
          while (!stop.get()) {
            notices.poll(20);
          }
        });
        drain.start();
        try {
          return body.call();
        } finally {
          stop.set(true);
          drain.join();
        }
      }
    }
  }

  static void record(String what, String mode, int round, List<Double> us, Map<String, List<Double>> medians) {
    double m = median(us);
    medians.computeIfAbsent(what + "|" + mode, k -> new ArrayList<>()).add(m);
    System.out.printf("round %d, %-16s %-26s median %8.0f us (%.0f-%.0f, %d execs)%n", round, mode, what, m,
        us.stream().mapToDouble(x -> x).min().orElse(0), us.stream().mapToDouble(x -> x).max().orElse(0), us.size());
  }

  static Path copy(Path from, Path to) throws Exception {
    Files.createDirectories(to.getParent());
    Files.copy(from, to);
    to.toFile().setExecutable(true);
    return to;
  }

  /** Runs each program once with execbench; the microseconds of each exec, fork to exit. */
  static List<Double> execs(Path execbench, List<String> programArgs, List<Path> programs) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(execbench.toString()));
    for (String a : programArgs) {
      cmd.add("-arg");
      cmd.add(a);
    }
    programs.forEach(p -> cmd.add(p.toString()));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    List<Double> us = new ArrayList<>();
    ObjectMapper json = new ObjectMapper();
    for (String line : new String(p.getInputStream().readAllBytes()).split("\n")) {
      if (!line.isBlank()) {
        JsonNode n = json.readTree(line);
        us.add(n.get("us").asDouble());
      }
    }
    if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException("execbench failed");
    }
    return us;
  }

  static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    s.sort(Double::compare);
    return s.get(s.size() / 2);
  }
}
