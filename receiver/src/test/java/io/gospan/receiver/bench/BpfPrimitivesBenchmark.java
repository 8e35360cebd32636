package io.gospan.receiver.bench;

import io.gospan.receiver.bpf.BpfLink;
import io.gospan.receiver.bpf.BpfObject;
import io.gospan.receiver.bpf.BpfProgram;
import io.gospan.receiver.probe.GrpcProbes;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Benchmark (not a test): what each BPF primitive gospan's probes are built of costs on this
 * machine: {@code bpf_probe_read_user}, {@code bpf_probe_read_kernel}, hash and array map
 * lookups, {@code bpf_ktime_get_ns}, {@code bpf_get_attach_cookie}. Each program of {@code
 * bpf/test/primitives.bpf.c} is attached alone to trapbench's {@code main.Probed}; its BPF run
 * time per hit ({@code kernel.bpf_stats_enabled}, set here and restored after) less the empty
 * program's, over its repetitions, is the primitive's cost: hot (back-to-back calls, 8
 * repetitions per hit) and cold (1 MiB of memory touched between calls, as a real program's
 * work between two probe hits does; 1 repetition per hit). Medians of rounds.
 *
 * <p>Run: {@code scripts/bench-bpf-primitives.sh [rounds]}.
 */
public final class BpfPrimitivesBenchmark {
  private BpfPrimitivesBenchmark() {}

  static final String OBJECT = "receiver/target/bpf-test-resources/io/gospan/bpf/test/primitives.bpf.o";

  static final Map<String, String> PRIMITIVES = new LinkedHashMap<>();

  static {
    PRIMITIVES.put("user_read_8", "bpf_probe_read_user, 8 bytes");
    PRIMITIVES.put("user_read_400", "bpf_probe_read_user, 400 bytes");
    PRIMITIVES.put("kernel_read_8", "bpf_probe_read_kernel, 8 bytes");
    PRIMITIVES.put("hash_lookup_32", "hash map lookup, 32-byte key");
    PRIMITIVES.put("array_lookup", "array map lookup");
    PRIMITIVES.put("ktime", "bpf_ktime_get_ns");
    PRIMITIVES.put("attach_cookie", "bpf_get_attach_cookie");
    PRIMITIVES.put("pid_tgid", "bpf_get_current_pid_tgid");
    PRIMITIVES.put("task_btf_tgid", "task->tgid through bpf_get_current_task_btf");
    PRIMITIVES.put("percpu_lookup", "per-CPU array map lookup");
    PRIMITIVES.put("ringbuf_query", "bpf_ringbuf_query");
  }

  record Condition(String label, int workBytes, int calls, int repetitions) {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    List<Condition> conditions =
        List.of(new Condition("hot", 0, 400_000, 8), new Condition("cold", 1 << 20, 30_000, 1));
    Path trapbench = ProbeCostBenchmark.trapbench();
    long offset = GrpcProbes.probeFileOffset(trapbench, ProbeCostBenchmark.probedEntry(trapbench));
    String statsBefore = Files.readString(Path.of("/proc/sys/kernel/bpf_stats_enabled")).strip();
    Files.writeString(Path.of("/proc/sys/kernel/bpf_stats_enabled"), "1");
    Map<String, Map<String, Double>> nsPerOp = new LinkedHashMap<>();
    Map<String, Double> emptyNs = new LinkedHashMap<>();
    try (BpfObject obj = BpfObject.open(ExampleApps.repoRoot().resolve(OBJECT)).load()) {
      for (Condition c : conditions) {
        List<String> cmd =
            List.of(trapbench.toString(), "-n", Integer.toString(c.calls()), "-work-bytes", Integer.toString(c.workBytes()));
        Map<String, List<Double>> perHit = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
          List<String> programs = new ArrayList<>();
          programs.add("prim_empty");
          PRIMITIVES.keySet().forEach(p -> programs.add("prim_" + p + "_x" + c.repetitions()));
          for (String program : programs) {
            Map<String, long[]> before = ProbeCostBenchmark.progStats();
            try (BpfLink link = obj.program(program).attachUprobe(trapbench, offset, BpfProgram.ALL_PIDS, 0)) {
              ExampleApps.run(cmd, 300);
            }
            long[] a = ProbeCostBenchmark.progStats().get(program);
            long[] b = before.getOrDefault(program, new long[2]);
            long hits = a[0] - b[0];
            if (hits < c.calls()) {
              throw new IllegalStateException(program + " ran " + hits + " times for " + c.calls() + " calls");
            }
            perHit.computeIfAbsent(program, k -> new ArrayList<>()).add((double) (a[1] - b[1]) / hits);
          }
        }
        double empty = ProbeCostBenchmark.median(perHit.get("prim_empty"));
        emptyNs.put(c.label(), empty);
        for (String p : PRIMITIVES.keySet()) {
          double prog = ProbeCostBenchmark.median(perHit.get("prim_" + p + "_x" + c.repetitions()));
          nsPerOp.computeIfAbsent(p, k -> new LinkedHashMap<>()).put(c.label(), (prog - empty) / c.repetitions());
        }
      }
    } finally {
      Files.writeString(Path.of("/proc/sys/kernel/bpf_stats_enabled"), statsBefore);
    }
    System.out.printf("BPF primitives on trapbench's main.Probed, %d rounds, %d cores; ns per operation over the empty"
            + " program (%.0f ns hot, %.0f ns cold per hit)%n",
        rounds, Runtime.getRuntime().availableProcessors(), emptyNs.get("hot"), emptyNs.get("cold"));
    System.out.printf("  %-34s %8s %8s%n", "primitive", "hot", "cold");
    nsPerOp.forEach((p, v) -> System.out.printf("  %-34s %8.0f %8.0f%n", PRIMITIVES.get(p), v.get("hot"), v.get("cold")));
  }
}
