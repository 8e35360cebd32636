package io.gospan.receiver.bench;

import io.gospan.offsets.resolve.Preference;
import io.gospan.receiver.bpf.BpfObject;
import io.gospan.receiver.bpf.BpfProgram;
import io.gospan.receiver.discovery.BinaryInspection;
import io.gospan.receiver.probe.GrpcProbes;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Path;
import java.util.List;

/**
 * The floor of the load benchmark: an empty program ({@code bpf/test/empty.bpf.c}, it only
 * counts) attached at every point gospan attaches to in the example server and client, as
 * gospan's own {@link BinaryInspection} plans them (after each function's stack-check prologue
 * or on its jbe, at the places of a probe that reads results or goes past a guard): the uprobe traps alone, no record, no
 * sidecar. Closing detaches them.
 */
final class EmptyProbes implements AutoCloseable {
  private final BpfObject object;
  final int points;

  private EmptyProbes(BpfObject object, int points) {
    this.object = object;
    this.points = points;
  }

  static EmptyProbes attach(Path dir) throws Exception {
    BpfObject empty = BpfObject.open(ExampleApps.repoRoot().resolve(ProbeCostBenchmark.EMPTY_OBJECT)).load();
    int points = 0;
    try {
      for (String name : List.of("greeter-server", "greeter-client")) {
        Path exe = dir.resolve(name).toRealPath();
        BinaryInspection inspection = BinaryInspection.inspect(exe, Preference.DWARF);
        for (BinaryInspection.ProbePlan plan : inspection.plans().values()) {
          if (plan.action() != BinaryInspection.Action.ATTACH) {
            continue;
          }
          // where gospan attaches: its returns' or guard's places, else its entry place (an empty program
          // cannot tell a stack-growing hit on a jbe, which is rare)
          List<Long> at = plan.probe().atReturns() || plan.probe().pastGuard()
              ? plan.returns()
              : List.of(plan.function().fileOffset() + GrpcProbes.entryPlace(exe, plan.function().fileOffset()).offset());
          for (long offset : at) {
            empty.program("uprobe_empty").attachUprobe(exe, offset, BpfProgram.ALL_PIDS, 0);
            points++;
          }
        }
      }
    } catch (Exception | Error e) {
      empty.close();
      throw e;
    }
    return new EmptyProbes(empty, points);
  }

  @Override
  public void close() {
    object.close();
  }
}
