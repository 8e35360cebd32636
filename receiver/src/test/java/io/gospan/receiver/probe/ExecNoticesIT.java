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
 * each exec is announced once, with the executable's device and inode as {@code stat(2)} gives them
 * (also for a file in an overlay file system: the overlay's), its path from the root of the process's mount namespace and that
 * namespace; the notices a full buffer drops are counted ({@code execs_lost}), not lost silently.
 */
class ExecNoticesIT {
  /** The {@code execs} ring buffer's size (bytes). */
  static final int EXECS_BYTES = 1 << 18;

  /** The bytes one notice with a path of {@code pathLen} bytes takes in the ring buffer: an 8-byte header, 8-byte aligned. */
  static int noticeBytes(int pathLen) {
    return 8 + ((GrpcLayouts.EXEC_NOTICE.offset("path") + pathLen + 7) & ~7);
  }

  static List<ExecNotice> of(List<ExecNotice> notices, long pid) {
    return notices.stream().filter(n -> n.pid() == pid).toList();
  }

  static long ownMountNamespace() throws Exception {
    String t = Files.readSymbolicLink(Path.of("/proc/self/ns/mnt")).toString();
    return Long.parseLong(t.substring(5, t.length() - 1));
  }

  /** A copy of {@code /bin/true} at {@code path}: a binary of its own inode. */
  static Path copyOfTrue(Path path) throws Exception {
    Files.createDirectories(path.getParent());
    Files.copy(Path.of("/bin/true"), path);
    path.toFile().setExecutable(true);
    return path;
  }

  static long run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s", List.of(cmd)).isZero();
    return p.pid();
  }

  @Test
  void aNoticeNamesTheExecutableItsPathAndItsMountNamespace(@TempDir Path dir) throws Exception {
    Path exe = copyOfTrue(dir.resolve("a b").resolve("ñ-true"));
    Path deep = dir;
    for (int i = 0; i < 6; i++) {
      deep = deep.resolve("d".repeat(100));
    }
    Path tooLong = copyOfTrue(deep.resolve("true")); // over GOSPAN_EXEC_PATH_LEN (512) bytes
    List<ExecNotice> notices = new ArrayList<>();
    try (GrpcProbes probes = GrpcProbes.open(GrpcProbes.Options.of(HeaderNames.defaults(), 1 << 16, e -> {}))) {
      probes.watchExecs(notices::add); // called on the polling thread: this one
      long plain = run(exe.toString());
      long unshared = run("unshare", "-m", exe.toString());
      long truncated = run(tooLong.toString());
      probes.poll(0);

      ExecNotice n = of(notices, plain).get(of(notices, plain).size() - 1);
      assertThat(n.exe()).as("device and inode as stat(2) gives them, in the kernel's encoding").isEqualTo(ExeKey.of(exe));
      assertThat(n.path()).isEqualTo(exe.toRealPath().toString());
      assertThat(n.mountNamespace()).isEqualTo(ownMountNamespace());
      assertThat(n.tsNanos()).isPositive();

      // unshare exec's the copy in a mount namespace of its own: same file, same path, another namespace
      ExecNotice u = of(notices, unshared).get(of(notices, unshared).size() - 1);
      assertThat(u.exe()).isEqualTo(ExeKey.of(exe));
      assertThat(u.path()).isEqualTo(exe.toRealPath().toString());
      assertThat(u.mountNamespace()).isNotEqualTo(ownMountNamespace()).isNotZero();
      assertThat(of(notices, unshared)).as("unshare's own exec, then the copy's").anyMatch(x -> x.path().endsWith("/unshare"));

      ExecNotice t = of(notices, truncated).get(of(notices, truncated).size() - 1);
      assertThat(t.exe()).isEqualTo(ExeKey.of(tooLong));
      assertThat(t.path()).as("a path longer than the notice holds is not given in part").isNull();
    }
  }

  /**
   * A binary in an overlay file system (as a container's image is): the notice's key is the overlay's
   * device and inode, as stat(2) through the overlay gives them (not the lower file system's, where
   * the file's data is) and as the probes see the process's executable. The path is the overlay
   * path.
   */
  @Test
  void aBinaryInAnOverlayIsNamedByTheOverlaysDeviceAndInode(@TempDir Path dir) throws Exception {
    Path lower = dir.resolve("lower");
    Path upper = dir.resolve("upper");
    Path work = dir.resolve("work");
    Path merged = dir.resolve("merged");
    for (Path d : List.of(upper, work, merged)) {
      Files.createDirectories(d);
    }
    Files.createDirectories(lower);
    Files.copy(Path.of("/bin/sleep"), lower.resolve("sleep"));
    run("mount", "-t", "overlay", "overlay", "-o", "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work,
        merged.toString());
    List<ExecNotice> notices = new ArrayList<>();
    Process p = null;
    try (GrpcProbes probes = GrpcProbes.open(GrpcProbes.Options.of(HeaderNames.defaults(), 1 << 16, e -> {}))) {
      probes.watchExecs(notices::add);
      Path exe = merged.resolve("sleep");
      p = new ProcessBuilder(exe.toString(), "30").start();
      long pid = p.pid();
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (of(notices, pid).stream().noneMatch(n -> n.path() != null && n.path().endsWith("/sleep"))
          && System.nanoTime() < deadline) {
        probes.poll(50);
      }
      List<ExecNotice> mine = of(notices, pid);
      assertThat(mine).isNotEmpty();
      ExecNotice n = mine.get(mine.size() - 1);
      ExeKey overlay = ExeKey.of(exe);
      ExeKey lowerKey = ExeKey.of(lower.resolve("sleep"));
      assertThat(overlay.dev()).as("the overlay has a device of its own").isNotEqualTo(lowerKey.dev());
      assertThat(n.exe()).as("the overlay's device and inode, as stat(2) through it").isEqualTo(overlay);
      assertThat(ExeKey.of(Path.of("/proc/" + pid + "/exe"))).isEqualTo(overlay);
      assertThat(n.path()).isEqualTo(exe.toString());
    } finally {
      if (p != null) {
        p.destroy();
        p.waitFor();
      }
      run("umount", merged.toString());
    }
  }

  @Test
  void noticesAFullBufferDropsAreCounted(@TempDir Path dir) throws Exception {
    // one process exec'ing itself: every exec is a notice with its pid
    Path chain = dir.resolve("chain.sh");
    Files.writeString(chain, "[ \"$1\" -gt 0 ] && exec /bin/sh \"$0\" $(($1 - 1))\nexit 0\n");
    List<ExecNotice> notices = new ArrayList<>();
    try (GrpcProbes probes = GrpcProbes.open(GrpcProbes.Options.of(HeaderNames.defaults(), 1 << 16, e -> {}))) {
      probes.watchExecs(notices::add); // called on the polling thread: this one
      assertThat(probes.execNoticesLost()).isZero();

      Process p = new ProcessBuilder("/bin/sh", chain.toString(), "10").start();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      probes.poll(0);
      long chainPid = p.pid();
      // sh, then 10 of the chain (the JDK may exec its jspawnhelper first: 12)
      List<ExecNotice> chained = of(notices, chainPid);
      assertThat(chained).as("one notice per exec").hasSizeBetween(11, 12);
      assertThat(probes.execNoticesLost()).as("nothing dropped while read").isZero();
      ExecNotice shell = chained.get(chained.size() - 1);
      assertThat(shell.exe()).isEqualTo(ExeKey.of(Path.of("/bin/sh")));
      assertThat(shell.path()).isEqualTo(Path.of("/bin/sh").toRealPath().toString());
      // the path's components, each NUL-terminated: as many bytes as the path
      int perNotice = noticeBytes(shell.path().getBytes(java.nio.charset.StandardCharsets.UTF_8).length);

      // not read meanwhile: the buffer holds EXECS_BYTES / perNotice notices, the rest are dropped
      int execs = EXECS_BYTES / perNotice + 2_000;
      notices.clear();
      p = new ProcessBuilder("/bin/sh", chain.toString(), Integer.toString(execs - 1)).start();
      assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
      long lost = probes.execNoticesLost();
      probes.poll(0);
      long read = notices.size(); // the chain's and any other process's on this machine
      assertThat(read).isLessThanOrEqualTo(EXECS_BYTES / perNotice);
      assertThat(lost).as("dropped, counted").isGreaterThanOrEqualTo(execs - EXECS_BYTES / perNotice);
      assertThat(read + lost).as("every exec read or counted").isGreaterThanOrEqualTo(execs);
    }
  }
}
