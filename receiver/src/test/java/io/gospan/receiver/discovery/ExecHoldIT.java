package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.probe.ExeKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
    public boolean judged(ExeKey key) {
      return false;
    }

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

  /**
   * The hold runs in a process of its own ({@link ExecHoldStall}), as in {@code gospan run}: a process that
   * holds a copy of the fanotify descriptor while its own exec is held (this JVM's child between its fork
   * and its exec, were the hold in this JVM) would keep the group alive, and no release could reach it.
   */
  @Test
  void aStalledAnsweringThreadCannotHoldExecsLongerThanTheLimit(@TempDir Path dir) throws Exception {
    Path realDir = dir.toRealPath();
    Path stalled = copyOfTrue(realDir, "stalled");
    Path after = copyOfTrue(realDir, "after");
    Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
        System.getProperty("java.class.path"), ExecHoldStall.class.getName(), realDir.toString(), Long.toString(LIMIT.toMillis()))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(holder.getInputStream()))) {
      assertThat(out.readLine()).isEqualTo("holding");
      long ms = runMillis(stalled); // its answering thread stops on this exec
      String released = out.readLine();
      assertThat(ms).as("released by the watchdog").isGreaterThanOrEqualTo(LIMIT.toMillis())
          .isLessThan(LIMIT.toMillis() + ExecHold.WATCHDOG_SLACK_NANOS / 1_000_000 + 200);
      assertThat(released).isEqualTo("released by the watchdog: 1");
      long next = runMillis(after);
      assertThat(next).as("no longer held").isLessThan(LIMIT.toMillis());
      System.out.printf("a stalled answering thread: the exec released after %d ms by the watchdog (limit %d ms); the next"
          + " exec took %d ms%n", ms, LIMIT.toMillis(), next);
    } finally {
      holder.destroy();
      holder.waitFor(10, TimeUnit.SECONDS);
    }
  }

  /**
   * A container's image (an overlay mounted in a mount namespace of its own, as a container runtime
   * does): once a process of that namespace is noticed, the overlay's file system is marked too, and an
   * exec of a binary in it is held until judged, the binary named by its path in that namespace and the
   * overlay's device and inode (what the process will be known by). The lower layer's file, which the
   * overlay opens on the process's behalf on a file system marked already, is let through at once.
   */
  @Test
  void anExecInAnotherMountNamespacesOverlayIsHeldOnceItsNamespaceIsNoticed(@TempDir Path dir) throws Exception {
    Path realDir = dir.toRealPath();
    Path lower = realDir.resolve("lower");
    Path merged = realDir.resolve("merged");
    for (Path d : List.of(lower, realDir.resolve("upper"), realDir.resolve("work"), merged)) {
      Files.createDirectories(d);
    }
    copyOfTrue(lower, "true");
    Path script = realDir.resolve("container.sh");
    Files.writeString(script, "mount -t overlay overlay -o lowerdir=" + lower + ",upperdir=" + realDir.resolve("upper")
        + ",workdir=" + realDir.resolve("work") + " " + merged + " || exit 1\n"
        + "echo mounted\nread go\nt0=$(date +%s%N); " + merged + "/true; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 ))\n");
    List<String> judged = new java.util.concurrent.CopyOnWriteArrayList<>();
    ExecHold.Judge judge = new ExecHold.Judge() {
      @Override
      public boolean judged(ExeKey key) {
        return false;
      }

      @Override
      public Verdict quick(ExeKey key, String path) {
        return path.startsWith(merged + "/") ? Verdict.HOLD : Verdict.ALLOW;
      }

      @Override
      public CompletableFuture<?> judge(PinnedFile file, String path, int pid) {
        judged.add(path + " " + file.key());
        file.close();
        return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS));
      }
    };
    try (ExecHold hold = ExecHold.start(judge, LIMIT, Path.of("/proc/self/mountinfo"))) {
      Process container = new ProcessBuilder("unshare", "-m", "--propagation", "private", "sh", script.toString())
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      try (java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(container.getInputStream()));
          java.io.Writer in = new java.io.OutputStreamWriter(container.getOutputStream())) {
        assertThat(out.readLine()).isEqualTo("mounted");
        String t = Files.readSymbolicLink(Path.of("/proc/" + container.pid() + "/ns/mnt")).toString();
        long ns = Long.parseLong(t.substring(5, t.length() - 1));
        hold.noticed((int) container.pid(), ns);
        assertThat(hold.marked()).as("the overlay, reached through the process's root")
            .contains("/proc/" + container.pid() + "/root" + merged);
        in.write("go\n");
        in.flush();
        long ms = Long.parseLong(out.readLine().strip());
        assertThat(ms).as("held until judged").isGreaterThanOrEqualTo(100).isLessThan(LIMIT.toMillis() + 100);
        assertThat(judged).hasSize(1);
        assertThat(judged.get(0)).as("named by its path in its namespace, not the lower layer's file").startsWith(merged + "/true ");
        System.out.printf("an exec in another mount namespace's overlay: held %d ms until judged; judged %s%n", ms, judged);
      } finally {
        container.waitFor(10, TimeUnit.SECONDS);
        container.destroy();
      }
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
