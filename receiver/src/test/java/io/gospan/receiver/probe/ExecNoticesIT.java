package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exec notices (the raw tracepoint {@code sched_process_exec}, bpf/process.bpf.h) in the kernel:
 * each exec is announced once, and the notices a full buffer drops are counted ({@code
 * execs_lost}), not lost silently.
 */
class ExecNoticesIT {
  /** The {@code execs} ring buffer's size (bytes) and one notice's (8-byte header, 4-byte pid, padding). */
  static final int EXECS_BYTES = 1 << 16;
  static final int NOTICE_BYTES = 16;

  @Test
  void noticesAFullBufferDropsAreCounted(@TempDir Path dir) throws Exception {
    // one process exec'ing itself: every exec is a notice with its pid
    Path chain = dir.resolve("chain.sh");
    Files.writeString(chain, "[ \"$1\" -gt 0 ] && exec /bin/sh \"$0\" $(($1 - 1))\nexit 0\n");
    int execs = EXECS_BYTES / NOTICE_BYTES + 2_000;
    List<Integer> pids = new ArrayList<>();
    try (GrpcProbes probes = GrpcProbes.open(GrpcProbes.Options.of(HeaderNames.defaults(), 1 << 16, e -> {}))) {
      probes.watchExecs(pids::add); // called on the polling thread: this one
      assertThat(probes.execNoticesLost()).isZero();

      Process p = new ProcessBuilder("/bin/sh", chain.toString(), "10").start();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      probes.poll(0);
      long chainPid = p.pid();
      // sh, then 10 of the chain (the JDK may exec its jspawnhelper first: 12)
      assertThat(pids.stream().filter(x -> x == chainPid).count()).as("one notice per exec").isBetween(11L, 12L);
      assertThat(probes.execNoticesLost()).as("nothing dropped while read").isZero();

      // not read meanwhile: the buffer holds EXECS_BYTES / NOTICE_BYTES notices, the rest are dropped
      pids.clear();
      p = new ProcessBuilder("/bin/sh", chain.toString(), Integer.toString(execs - 1)).start();
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
      long lost = probes.execNoticesLost();
      probes.poll(0);
      long read = pids.size(); // the chain's and any other process's on this machine
      assertThat(read).isLessThanOrEqualTo(EXECS_BYTES / NOTICE_BYTES);
      assertThat(lost).as("dropped, counted").isGreaterThanOrEqualTo(execs - EXECS_BYTES / NOTICE_BYTES);
      assertThat(read + lost).as("every exec read or counted").isGreaterThanOrEqualTo(execs);
    }
  }
}
