package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.probe.ExeKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exec hold's bounds with the real kernel (fanotify FAN_OPEN_EXEC_PERM on the machine's file
 * systems) and no BPF: an exec of a binary to judge waits until it is judged, never longer than the
 * limit; an exec of a binary judged already does not wait; a stalled answering thread cannot hold
 * execs longer than the limit (the watchdog releases them, and holding stops); closing the hold
 * releases what it holds. Only the test's own binaries (under its temporary directory) are ever held:
 * every other exec on the machine is allowed at once.
 */
class ExecHoldIT {
  static final Duration LIMIT = Duration.ofMillis(250);

  /** A judge that holds the binaries under {@code dir} and answers {@code judged} for each. */
  record DirJudge(Path dir, java.util.function.Supplier<CompletableFuture<?>> judged) implements ExecHold.Judge {
    @Override
    public Verdict quick(ExeKey key, String path) {
      return path.startsWith(dir.toString() + "/") ? Verdict.HOLD : Verdict.ALLOW;
    }

    @Override
    public CompletableFuture<?> judge(PinnedFile file, String path, int pid) {
      file.close();
      return judged.get();
    }
  }

  static Path copyOfTrue(Path dir, String name) throws Exception {
    Path p = dir.resolve(name);
    Files.copy(Path.of("/bin/true"), p);
    p.toFile().setExecutable(true);
    return p;
  }

  /** Runs {@code exe} and returns how long it took, exec included (ms). */
  static long runMillis(Path exe) throws Exception {
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(exe.toString()).start(); // returns once the exec succeeded
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isZero();
    return (System.nanoTime() - t0) / 1_000_000;
  }

  @Test
  void anExecIsHeldUntilItsBinaryIsJudgedAndNeverLongerThanTheLimit(@TempDir Path dir) throws Exception {
    Path realDir = dir.toRealPath();
    // judged in 100 ms: the first exec waits ~100 ms; a binary whose judgement never ends waits the limit
    try (ExecHold hold = ExecHold.start(new DirJudge(realDir, () -> CompletableFuture.runAsync(() -> { },
        CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS))), LIMIT, Path.of("/proc/self/mountinfo"))) {
      assertThat(hold.marked()).contains("/");
      long judged = runMillis(copyOfTrue(realDir, "judged-in-100ms"));
      assertThat(judged).as("held until judged").isGreaterThanOrEqualTo(100).isLessThan(LIMIT.toMillis());
      long outside = runMillis(Path.of("/bin/true"));
      System.out.printf("exec held until judged: %d ms; a binary not to judge: %d ms%n", judged, outside);
      assertThat(hold.held()).isEqualTo(1);
      assertThat(hold.heldNanos()).isGreaterThanOrEqualTo(100_000_000L);
    }
    try (ExecHold hold = ExecHold.start(new DirJudge(realDir, CompletableFuture::new), LIMIT, Path.of("/proc/self/mountinfo"))) {
      long never = runMillis(copyOfTrue(realDir, "never-judged"));
      assertThat(never).as("allowed at the limit").isGreaterThanOrEqualTo(LIMIT.toMillis()).isLessThan(LIMIT.toMillis() + 200);
      assertThat(hold.heldToLimit()).isEqualTo(1);
      assertThat(hold.watchdogReleases()).as("the answering thread answered: no watchdog").isZero();
      System.out.printf("exec of a binary whose judgement never ends: %d ms (limit %d ms)%n", never, LIMIT.toMillis());
    }
  }

  @Test
  void aStalledAnsweringThreadCannotHoldExecsLongerThanTheLimit(@TempDir Path dir) throws Exception {
    Path realDir = dir.toRealPath();
    try (ExecHold hold = ExecHold.start(new DirJudge(realDir, CompletableFuture::new), LIMIT, Path.of("/proc/self/mountinfo"))) {
      hold.stallForTests = new CountDownLatch(1); // the answering thread stops after its next read
      long stalled = runMillis(copyOfTrue(realDir, "stalled"));
      assertThat(stalled).as("released by the watchdog").isLessThan(LIMIT.toMillis() + ExecHold.WATCHDOG_SLACK_NANOS / 1_000_000 + 200);
      assertThat(hold.watchdogReleases()).isEqualTo(1);
      assertThat(hold.holding()).as("holding stops").isFalse();
      long after = runMillis(copyOfTrue(realDir, "after"));
      assertThat(after).as("no longer held").isLessThan(LIMIT.toMillis());
      System.out.printf("a stalled answering thread: the exec released after %d ms by the watchdog; the next one took %d ms%n",
          stalled, after);
    }
  }

  @Test
  void closingTheHoldReleasesWhatItHolds(@TempDir Path dir) throws Exception {
    Path realDir = dir.toRealPath();
    Path exe = copyOfTrue(realDir, "held-at-close");
    ExecHold hold = ExecHold.start(new DirJudge(realDir, CompletableFuture::new), Duration.ofSeconds(5), Path.of("/proc/self/mountinfo"));
    CompletableFuture<Long> run = CompletableFuture.supplyAsync(() -> {
      try {
        return runMillis(exe);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    Thread.sleep(300);
    assertThat(run).as("held").isNotDone();
    long t0 = System.nanoTime();
    hold.close();
    long ms = run.get(5, TimeUnit.SECONDS);
    System.out.printf("held exec released by close after %d ms in all, %d ms after close%n", ms,
        (System.nanoTime() - t0) / 1_000_000);
    assertThat(ms).isLessThan(5000);
  }
}
