package io.gospan.receiver.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gospan.receiver.bpf.BpfObject;
import io.gospan.receiver.bpf.BpfProgram;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.probe.GrpcProbe;
import io.gospan.receiver.probe.GrpcProbes;
import io.gospan.receiver.probe.HeaderNames;
import io.gospan.receiver.probe.ProbeCounters;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.GoTruth;
import io.gospan.receiver.testing.TruthOffsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Benchmark (not a test): what gospan's BPF programs cost per probe hit, against an empty
 * program attached to the same three functions (grpc-go's transport), measured in the same run; and the traced
 * target's CPU time (server and client, ns-exact: schedstat and getrusage) and the client's latency
 * per unary call with no probes, empty probes and gospan's probes, alternating over several rounds.
 * The CPU the empty probes add over none is the floor, hits × the cost of an empty uprobe hit;
 * gospan's added CPU is compared against it per round. Needs root and kernel.bpf_stats_enabled
 * (set here, restored after).
 *
 * <p>Run: {@code scripts/bench-probes.sh [calls-per-round] [rounds] [calls-in-flight] [GOMAXPROCS]}; with {@code
 * BASELINE_REV=<git rev>} the script also builds that commit's grpc.bpf.c (env {@code
 * GOSPAN_BENCH_BASELINE}, a resource name) and this class runs it as a fourth configuration.
 */
public final class ProbeCostBenchmark {
  private ProbeCostBenchmark() {}

  enum Mode { NONE, EMPTY, BASELINE, GOSPAN }

  /** A baseline build of grpc.bpf.c under the resource directory (scripts/bench-probes.sh, BASELINE_REV), or null. */
  static final String BASELINE = System.getenv("GOSPAN_BENCH_BASELINE");

  /** grpc-go's own transport probes: what a gRPC call through grpc-go's server and client hits. */
  static final List<GrpcProbe> TRANSPORT =
      java.util.Arrays.stream(GrpcProbe.values()).filter(p -> !p.probe().serveHttp()).toList();

  public static void main(String[] args) throws Exception {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    // 1: sequential calls, each hit finds cold caches; more: back-to-back hits on busy cores
    int concurrency = args.length > 2 ? Integer.parseInt(args[2]) : 1;
    Path dir = ExampleApps.build();
    Path server = dir.resolve("greeter-server");
    Path client = dir.resolve("greeter-client");
    Map<Path, JsonNode> truth = new LinkedHashMap<>();
    for (Path b : List.of(server, client)) {
      truth.put(b, TruthOffsets.truth(b));
    }
    String statsBefore = Files.readString(Path.of("/proc/sys/kernel/bpf_stats_enabled")).strip();
    Files.writeString(Path.of("/proc/sys/kernel/bpf_stats_enabled"), "1");
    double trapHot = trapCost(0, 2_000_000, Math.max(rounds, 5));
    double trapCold = trapCost(1 << 20, 50_000, Math.max(rounds, 7));
    Map<Mode, List<Double>> p50 = new LinkedHashMap<>();
    Map<Mode, List<Double>> cpuNsPerCall = new LinkedHashMap<>();
    Map<Mode, List<Double>> nsPerHit = new LinkedHashMap<>();
    Map<String, List<Double>> perProgram = new LinkedHashMap<>();
    long hitsPerCall = -1;
    // GOMAXPROCS for the server and the client (default: the cores): 1 keeps the Go scheduler's
    // idle spinning, most of the whole-process CPU noise, out of the measurement
    Map<String, String> goEnv = args.length > 3 ? Map.of("GOMAXPROCS", args[3]) : Map.of();
    try (ExampleApps.Server s = ExampleApps.startServer(dir, goEnv)) {
      ExampleApps.runClient(dir, goEnv, s.address(), "-rpc", "unary", "-n", "500"); // warm-up
      for (int round = 0; round < rounds; round++) {
        for (Mode mode : Mode.values()) {
          if (mode == Mode.BASELINE && BASELINE == null) {
            continue;
          }
          BpfObject empty = null;
          GrpcProbes probes = null;
          AtomicLong events = new AtomicLong();
          try {
            if (mode == Mode.EMPTY) {
              empty = BpfObject.open(ExampleApps.repoRoot().resolve(EMPTY_OBJECT)).load();
              for (Path b : truth.keySet()) {
                for (GrpcProbe p : TRANSPORT) {
                  empty.program("uprobe_empty").attachUprobe(
                      b, GrpcProbes.probeFileOffset(b, GoTruth.fileOffset(truth.get(b), p.function())), BpfProgram.ALL_PIDS, 0);
                }
              }
            } else if (mode == Mode.GOSPAN || mode == Mode.BASELINE) {
              probes = mode == Mode.GOSPAN
                  ? GrpcProbes.open(GrpcProbes.Options.of(HeaderNames.defaults(), 1 << 24, e -> events.incrementAndGet()))
                  : GrpcProbes.open(
                      GrpcProbes.Options.of(HeaderNames.defaults(), 1 << 24, e -> events.incrementAndGet()).withObject(BASELINE));
              for (Path b : truth.keySet()) {
                probes.putBinary(ExeKey.of(b), TruthOffsets.forBinary(b), layout(b));
                for (GrpcProbe p : TRANSPORT) {
                  probes.attach(p, ExeKey.of(b), b, GoTruth.fileOffset(truth.get(b), p.function()));
                }
              }
            }
            GrpcProbes polled = probes;
            Thread poller = new Thread(() -> {
              while (!Thread.currentThread().isInterrupted()) {
                polled.poll(50);
              }
            });
            if (probes != null) {
              poller.start();
            }
            Map<String, long[]> before = progStats();
            long serverCpu0 = cpuNs(s.pid());
            JsonNode r = ExampleApps.runClient(
                dir, goEnv, s.address(), "-rpc", "unary", "-n", Integer.toString(calls), "-concurrency", Integer.toString(concurrency));
            long serverCpu = cpuNs(s.pid()) - serverCpu0;
            Map<String, long[]> after = progStats();
            double clientCpu = (r.path("cpu_user_ms").asDouble() + r.path("cpu_sys_ms").asDouble()) * 1e6;
            cpuNsPerCall.computeIfAbsent(mode, k -> new ArrayList<>()).add((serverCpu + clientCpu) / calls);
            poller.interrupt();
            poller.join();
            p50.computeIfAbsent(mode, k -> new ArrayList<>()).add(r.path("p50_us").asDouble());
            long cnt = 0;
            long ns = 0;
            for (String prog : after.keySet()) {
              boolean ours = (mode == Mode.GOSPAN || mode == Mode.BASELINE) && prog.startsWith("uprobe_")
                  && !prog.equals("uprobe_empty");
              boolean emptyProg = mode == Mode.EMPTY && prog.equals("uprobe_empty");
              if (!ours && !emptyProg) {
                continue;
              }
              long[] b = before.getOrDefault(prog, new long[2]);
              long dc = after.get(prog)[0] - b[0];
              long dn = after.get(prog)[1] - b[1];
              cnt += dc;
              ns += dn;
              if (ours && dc > 0) {
                perProgram.computeIfAbsent((mode == Mode.BASELINE ? "baseline " : "") + prog, k -> new ArrayList<>())
                    .add((double) dn / dc);
              }
            }
            if (mode != Mode.NONE) {
              nsPerHit.computeIfAbsent(mode, k -> new ArrayList<>()).add(cnt == 0 ? Double.NaN : (double) ns / cnt);
              if (mode == Mode.GOSPAN) {
                Map<GrpcProbe, ProbeCounters> c = probes.counters();
                long hits = c.values().stream().mapToLong(ProbeCounters::hits).sum();
                hitsPerCall = Math.round((double) hits / calls);
              }
            }
          } finally {
            if (probes != null) {
              probes.close();
            }
            if (empty != null) {
              empty.close();
            }
          }
        }
      }
    } finally {
      Files.writeString(Path.of("/proc/sys/kernel/bpf_stats_enabled"), statsBefore);
    }
    System.out.printf("probe cost benchmark: %d unary calls per round, %d in flight, %d rounds, %d cores, GOMAXPROCS %s%n",
        calls, concurrency, rounds, Runtime.getRuntime().availableProcessors(), goEnv.getOrDefault("GOMAXPROCS", "default"));
    System.out.printf("probe hits per unary call (client + server): %d%n", hitsPerCall);
    double empty = median(nsPerHit.get(Mode.EMPTY));
    double ours = median(nsPerHit.get(Mode.GOSPAN));
    System.out.printf("BPF run time per hit (median of rounds): empty program %.0f ns, gospan %.0f ns (%.1fx)%n",
        empty, ours, ours / empty);
    perProgram.forEach((prog, v) -> System.out.printf("  %-49s %.0f ns/hit%n", prog, median(v)));
    if (BASELINE != null) {
      List<Double> ratios = new ArrayList<>();
      for (int i = 0; i < nsPerHit.get(Mode.GOSPAN).size(); i++) {
        ratios.add(nsPerHit.get(Mode.GOSPAN).get(i) / nsPerHit.get(Mode.BASELINE).get(i));
      }
      System.out.printf("baseline (%s) %.0f ns per hit; gospan / baseline per round: median %.3f (rounds: %s)%n",
          System.getenv().getOrDefault("BASELINE_REV", BASELINE), median(nsPerHit.get(Mode.BASELINE)), median(ratios),
          ratios.stream().map(r -> String.format("%.3f", r)).toList());
    }
    System.out.printf("target CPU per call (server + client, median; with the default GOMAXPROCS +-10%% between rounds,"
            + " too noisy for a microsecond floor): no probes %.1f us, empty probes %.1f us, gospan %.1f us%n",
        median(cpuNsPerCall.get(Mode.NONE)) / 1000, median(cpuNsPerCall.get(Mode.EMPTY)) / 1000,
        median(cpuNsPerCall.get(Mode.GOSPAN)) / 1000);
    // The same per round (the three configurations ran back to back: the machine's drift between
    // rounds cancels out): CPU the empty probes and gospan's add over none, and their ratio.
    List<Double> addedEmpty = new ArrayList<>();
    List<Double> addedOurs = new ArrayList<>();
    List<Double> roundRatios = new ArrayList<>();
    for (int i = 0; i < cpuNsPerCall.get(Mode.NONE).size(); i++) {
      double none = cpuNsPerCall.get(Mode.NONE).get(i);
      addedEmpty.add(cpuNsPerCall.get(Mode.EMPTY).get(i) - none);
      addedOurs.add(cpuNsPerCall.get(Mode.GOSPAN).get(i) - none);
      roundRatios.add(addedOurs.get(i) / addedEmpty.get(i));
    }
    System.out.printf("target CPU added per call, per round (us): empty probes %s; gospan %s; gospan / empty: median %.2f (%s)%n",
        format(addedEmpty, 1000), format(addedOurs, 1000), median(roundRatios), format(roundRatios, 1));
    // The floor: what an empty uprobe hit costs the traced program (trap + empty program),
    // measured on trapbench: exactly with hot caches; with a working set between calls, as a
    // real program's hits meet them, less exactly (the working set's own time varies).
    System.out.printf("empty uprobe hit on a Go function (trap + empty program, trapbench CPU per call): %.0f ns with hot"
            + " caches, %.0f ns with 1 MiB touched between calls%n", trapHot, trapCold);
    for (double trap : new double[] {trapHot, trapCold}) {
      double perHit = trap - empty + ours;
      System.out.printf("added target CPU per unary call, %s-cache floor: %d hits x %.0f ns = %.1f us; gospan %d x (%.0f - %.0f"
              + " + %.0f) = %.1f us: %.2fx the floor%n",
          trap == trapHot ? "hot" : "cold", hitsPerCall, trap, hitsPerCall * trap / 1000, hitsPerCall, trap, empty, ours,
          hitsPerCall * perHit / 1000, perHit / trap);
    }
    double none = median(p50.get(Mode.NONE));
    System.out.printf("client p50 latency per call: no probes %.0f us, empty probes %.0f us (%.2fx), gospan %.0f us (%.2fx)%n",
        none, median(p50.get(Mode.EMPTY)), median(p50.get(Mode.EMPTY)) / none,
        median(p50.get(Mode.GOSPAN)), median(p50.get(Mode.GOSPAN)) / none);
    System.out.printf("added latency per call over empty probes: %.1f us (BPF time: %d hits x %.0f ns = %.1f us)%n",
        median(p50.get(Mode.GOSPAN)) - median(p50.get(Mode.EMPTY)), hitsPerCall, ours - empty,
        hitsPerCall * (ours - empty) / 1000);
  }

  static io.gospan.receiver.probe.BinaryLayout layout(Path binary) throws java.io.IOException {
    try (io.gospan.offsets.GoBinary g = io.gospan.offsets.GoBinary.open(binary)) {
      return io.gospan.receiver.probe.BinaryLayout.of(g);
    } catch (io.gospan.offsets.GoBinaryException e) {
      throw new IllegalStateException(binary + ": " + e.getMessage(), e);
    }
  }

  /**
   * CPU ns per call that an empty uprobe adds to trapbench's {@code main.Probed} (attached after
   * its stack-check prologue, as gospan's probes are), with {@code workBytes} of memory touched
   * between calls: median over {@code rounds} of (with - without), alternating.
   */
  static double trapCost(int workBytes, int calls, int rounds) throws Exception {
    Path trapbench = trapbench();
    long entry = probedEntry(trapbench);
    List<String> cmd = List.of(trapbench.toString(), "-n", Integer.toString(calls), "-work-bytes", Integer.toString(workBytes));
    ObjectMapper json = new ObjectMapper();
    List<Double> added = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      double none = json.readTree(ExampleApps.run(cmd, 300)).path("cpu_ns_per_call").asDouble();
      double with;
      try (BpfObject empty = BpfObject.open(ExampleApps.repoRoot().resolve(EMPTY_OBJECT)).load()) {
        empty.program("uprobe_empty").attachUprobe(
            trapbench, GrpcProbes.probeFileOffset(trapbench, entry), BpfProgram.ALL_PIDS, 0);
        with = json.readTree(ExampleApps.run(cmd, 300)).path("cpu_ns_per_call").asDouble();
      }
      added.add(with - none);
    }
    return median(added);
  }

  /** Builds examples/cmd/trapbench into receiver/target (Go on PATH). */
  static Path trapbench() {
    Path examples = ExampleApps.repoRoot().resolve("examples");
    Path trapbench = ExampleApps.repoRoot().resolve("receiver/target/trapbench");
    ExampleApps.run(List.of("go", "-C", examples.toString(), "build", "-o", trapbench.toString(), "./cmd/trapbench"), 300);
    return trapbench;
  }

  /** The file offset of trapbench's main.Probed. */
  static long probedEntry(Path trapbench) throws java.io.IOException {
    try (io.gospan.offsets.GoBinary g = io.gospan.offsets.GoBinary.open(trapbench)) {
      return g.function("main.Probed").orElseThrow(() -> new IllegalStateException("trapbench has no main.Probed"))
          .fileOffset();
    }
  }

  static final String EMPTY_OBJECT = "receiver/target/bpf-test-resources/io/gospan/bpf/test/empty.bpf.o";

  /** CPU time of every thread of a process, ns ({@code /proc/<pid>/task/<tid>/schedstat}, first field). */
  static long cpuNs(long pid) throws java.io.IOException {
    long sum = 0;
    try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path t : tasks.toList()) {
        try {
          sum += Long.parseLong(Files.readString(t.resolve("schedstat")).split(" ")[0]);
        } catch (java.nio.file.NoSuchFileException e) {
          // the thread exited meanwhile
        }
      }
    }
    return sum;
  }

  /** run_cnt and run_time_ns of every loaded program, by full name. */
  static Map<String, long[]> progStats() {
    Map<String, long[]> out = new LinkedHashMap<>();
    try {
      Process p = new ProcessBuilder("bpftool", "-j", "prog", "show").start();
      JsonNode list = new ObjectMapper().readTree(p.getInputStream());
      p.waitFor();
      for (JsonNode n : list) {
        long[] v = out.computeIfAbsent(n.path("name").asText(), k -> new long[2]);
        v[0] += n.path("run_cnt").asLong();
        v[1] += n.path("run_time_ns").asLong();
      }
    } catch (Exception e) {
      throw new IllegalStateException("bpftool prog show failed", e);
    }
    return out;
  }

  private static String format(List<Double> v, double divisor) {
    return v.stream().map(x -> String.format("%.1f", x / divisor)).toList().toString();
  }

  static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    s.sort(Double::compare);
    return s.get(s.size() / 2);
  }
}
