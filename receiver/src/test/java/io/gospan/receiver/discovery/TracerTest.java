package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Discovery on a fake procfs: non-Go processes are inspected once, a reused pid is a new process,
 * an exec notice makes discovery look again at a process it judged before its exec, and a grpc-go
 * process selected but for its {@code open_port} waits until it listens or exits.
 */
class TracerTest {

  @TempDir Path proc;

  void process(int pid, long startTime, String exe) throws Exception {
    Path dir = proc.resolve(Integer.toString(pid));
    if (Files.exists(dir)) {
      Files.delete(dir.resolve("exe"));
    }
    Files.createDirectories(dir);
    Files.createSymbolicLink(dir.resolve("exe"), Path.of(exe));
    Files.writeString(dir.resolve("comm"), Path.of(exe).getFileName() + "\n");
    // fields 3.. after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime ...
    Files.writeString(dir.resolve("stat"),
        pid + " (x y) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + startTime + " 0 0\n");
  }

  /** Discovery without probes (nothing attaches): what it inspects is what the tests count. */
  static Tracer tracer(ProcFs procFs) {
    return new Tracer(options(procFs, ProcessSelector.all()), new ProbeAttacher(null, procFs), new Tracer.Listener() {});
  }

  /** {@code selector} over {@code procFs}, 16 unsuitable binaries remembered. */
  static Tracer.Options options(ProcFs procFs, ProcessSelector selector) {
    return Tracer.Options.of(procFs, selector).withMaxSkippedBinaries(16);
  }

  @Test
  void aNonGoProcessIsInspectedOnceAndAReusedPidIsConsideredAgain() throws Exception {
    process(100, 5000, "/bin/true");
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = tracer(procFs)) {
    tracer.scan();
    tracer.scan();
    assertThat(tracer.inspections()).isEqualTo(1);
    assertThat(tracer.traced()).isEmpty();

    // pid 100 exits and is reused by another program between two scans
    process(100, 7000, "/bin/ls");
    tracer.scan();
    assertThat(tracer.inspections()).as("the new process behind pid 100 is inspected").isEqualTo(2);
    tracer.scan();
    assertThat(tracer.inspections()).isEqualTo(2);
    }
  }

  @Test
  void aProcessSeenBeforeItsExecIsLookedAtAgainOnItsExecNotice() throws Exception {
    process(300, 9000, "/bin/sh");
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = tracer(procFs)) {
      tracer.execNoticesOn(() -> 0);
      tracer.scan();
      assertThat(tracer.inspections()).isEqualTo(1);
      // the shell execs another program: same pid, same start time; a scan alone does not look again
      process(300, 9000, "/bin/ls");
      tracer.scan();
      assertThat(tracer.inspections()).isEqualTo(1);
      tracer.execed(300); // queued for the discovery thread, before the next scan
      tracer.scan();
      assertThat(tracer.inspections()).as("the exec'd image inspected").isEqualTo(2);
      // a pid reused meanwhile while its exec notice was lost: the next scan re-checks start times
      process(300, 9500, "/bin/cat");
      tracer.scan();
      assertThat(tracer.inspections()).as("no re-check while exec notices arrive").isEqualTo(2);
      tracer.execNoticeLost();
      tracer.scan();
      assertThat(tracer.inspections()).as("a lost notice: start times re-checked").isEqualTo(3);
    }
  }

  @Test
  void whileExecNoticesArriveThePeriodicScanListsProcOnlyWhenANoticeWasLost() throws Exception {
    process(400, 1000, "/bin/sh");
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = tracer(procFs)) {
      tracer.execNoticesOn(() -> 0);
      tracer.periodicScan();
      assertThat(tracer.inspections()).as("the first periodic scan lists /proc").isEqualTo(1);
      process(401, 2000, "/bin/ls"); // its exec notice never arrives
      tracer.periodicScan();
      assertThat(tracer.inspections()).as("not listed: exec notices announce new programs").isEqualTo(1);
      tracer.scan();
      assertThat(tracer.inspections()).as("an explicit scan lists /proc").isEqualTo(2);
      process(402, 3000, "/bin/cat");
      tracer.execNoticeLost();
      tracer.periodicScan();
      assertThat(tracer.inspections()).as("a lost notice: the next periodic scan lists /proc").isEqualTo(3);
    }
  }

  /** Notices the kernel dropped (a full buffer) count as lost: the next periodic scan lists /proc. */
  @Test
  void execNoticesDroppedInTheKernelMakeTheNextPeriodicScanListProc() throws Exception {
    process(410, 1000, "/bin/sh");
    ProcFs procFs = new ProcFs(proc);
    java.util.concurrent.atomic.AtomicLong dropped = new java.util.concurrent.atomic.AtomicLong();
    try (Tracer tracer = tracer(procFs)) {
      tracer.execNoticesOn(dropped::get);
      tracer.periodicScan();
      assertThat(tracer.inspections()).isEqualTo(1);
      process(411, 2000, "/bin/ls"); // its notice dropped in the kernel
      tracer.periodicScan();
      assertThat(tracer.inspections()).as("nothing dropped yet: not listed").isEqualTo(1);
      dropped.set(3);
      tracer.periodicScan();
      assertThat(tracer.inspections()).as("dropped notices: listed").isEqualTo(2);
      process(412, 3000, "/bin/cat");
      tracer.periodicScan();
      assertThat(tracer.inspections()).as("the count did not rise again: not listed").isEqualTo(2);
    }
  }

  /**
   * While exec notices arrive and none was lost, a periodic scan only checks the traced pids for
   * exit: it comes every 2 s; without notices, or after a lost one, every scan interval.
   */
  @Test
  void thePeriodicScanComesEveryTwoSecondsOnlyWhileExecNoticesArrive() throws Exception {
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = tracer(procFs)) {
      tracer.scanInterval(java.time.Duration.ofMillis(500));
      assertThat(tracer.nextScanDelay()).as("no exec notices").isEqualTo(500_000_000L);
      tracer.execNoticesOn(() -> 0);
      assertThat(tracer.nextScanDelay()).isEqualTo(ScanCadence.QUIET_SCAN_INTERVAL_NANOS);
      tracer.execNoticeLost();
      assertThat(tracer.nextScanDelay()).as("a notice lost: the next scan lists /proc soon").isEqualTo(500_000_000L);
      tracer.periodicScan();
      assertThat(tracer.nextScanDelay()).as("listed: quiet again").isEqualTo(ScanCadence.QUIET_SCAN_INTERVAL_NANOS);
      tracer.scanInterval(java.time.Duration.ofSeconds(5));
      assertThat(tracer.nextScanDelay()).as("a scan interval above 2 s is kept").isEqualTo(5_000_000_000L);
    }
  }

  @Test
  void withoutExecNoticesEveryPeriodicScanListsProc() throws Exception {
    process(500, 1000, "/bin/sh");
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = tracer(procFs)) {
      tracer.periodicScan();
      process(501, 2000, "/bin/ls");
      tracer.periodicScan();
      assertThat(tracer.inspections()).isEqualTo(2);
    }
  }

  @Test
  void aProcessSelectedButForItsOpenPortWaitsUntilItListensOrExits() throws Exception {
    Path server = ExampleApps.build().resolve("greeter-server"); // links grpc-go: worth waiting for
    ProcFs procFs = new ProcFs(proc);
    ProcessSelector byPort = new ProcessSelector(List.of(new ProcessSelector.Rule(null, null, 50051, null)), List.of());
    try (Tracer tracer = new Tracer(options(procFs, byPort), new ProbeAttacher(null, procFs), new Tracer.Listener() {})) {
      tracer.execNoticesOn(() -> 0);
      tracer.scanInterval(java.time.Duration.ofMillis(500));
      assertThat(tracer.nextScanDelay()).as("nothing waits: scans every 2 s").isEqualTo(ScanCadence.QUIET_SCAN_INTERVAL_NANOS);
      process(700, 1000, server.toString());
      network(700, "", 7001);
      process(701, 1000, "/bin/true");
      network(701, "");
      tracer.periodicScan();
      assertThat(tracer.awaitingPort()).as("a grpc-go program not listening yet waits; a non-Go one does not")
          .containsExactly(700);
      assertThat(tracer.nextScanDelay()).as("one waits for its port: every scan interval").isEqualTo(500_000_000L);
      assertThat(tracer.inspections()).isEqualTo(2);
      tracer.periodicScan();
      assertThat(tracer.awaitingPort()).containsExactly(700);
      assertThat(tracer.inspections()).as("binaries inspected once").isEqualTo(2);

      // (once it listens it is attached: SidecarIT, with probes; this tracer has none)
      Files.delete(proc.resolve("700/exe")); // 700 exits
      process(702, 1000, server.toString());
      network(702, "");
      tracer.execed(702);
      tracer.periodicScan();
      assertThat(tracer.awaitingPort()).as("announced by its exec notice").containsExactly(702);
      Files.delete(proc.resolve("702/exe")); // exited
      tracer.periodicScan();
      assertThat(tracer.awaitingPort()).as("forgotten once it exited").isEmpty();
    }
  }

  @Test
  void binariesReadEarlyAreTakenByTheFirstScanAndNotReadAgain() throws Exception {
    Path server = ExampleApps.build().resolve("greeter-server");
    ProcFs procFs = new ProcFs(proc);
    // an open_port selector: discovery inspects a binary without attaching it (this tracer has no probes)
    ProcessSelector byPort = new ProcessSelector(List.of(new ProcessSelector.Rule(null, null, 50051, null)), List.of());
    process(800, 1000, server.toString());
    network(800, "");
    process(801, 1000, server.toString()); // the same binary: read once
    network(801, "");
    process(802, 1000, "/bin/true");
    network(802, "");
    EarlyInspections early = EarlyInspections.start(procFs, byPort, io.gospan.offsets.resolve.Preference.DWARF, false);
    assertThat(early.awaitRead(java.time.Duration.ofSeconds(60))).isTrue();
    assertThat(early.read()).as("each binary read once, before discovery starts").isEqualTo(2);
    try (Tracer tracer = new Tracer(options(procFs, byPort), new ProbeAttacher(null, procFs), new Tracer.Listener() {}, early)) {
      tracer.execNoticesOn(() -> 0);
      tracer.periodicScan();
      assertThat(early.taken()).as("the scan took both early reads").isEqualTo(2);
      assertThat(tracer.awaitingPort()).as("judged by the early reads: grpc-go waits for its port, /bin/true does not")
          .containsExactlyInAnyOrder(800, 801);
      assertThat(tracer.inspections()).isEqualTo(2);
      assertThat(tracer.holdJudge(java.time.Duration.ofSeconds(1)).judged(ExeKey.of(Path.of("/bin/true"))))
          .as("the early read's failure (not a Go binary) is remembered as discovery's own").isTrue();
      early.close();
      Files.delete(proc.resolve("800/exe"));
      process(803, 2000, server.toString()); // the cache has it: not read, not taken
      network(803, "");
      tracer.scan();
      assertThat(tracer.awaitingPort()).containsExactlyInAnyOrder(801, 803);
      assertThat(tracer.inspections()).isEqualTo(2);
      assertThat(early.taken()).isEqualTo(2);
    }
  }

  /** Process {@code pid}'s network namespace (its own), its TCP table and its socket fds. */
  void network(int pid, String tcp, long... sockets) throws Exception {
    Path dir = proc.resolve(Integer.toString(pid));
    Files.createDirectories(dir.resolve("ns"));
    Files.createDirectories(dir.resolve("net"));
    Files.deleteIfExists(dir.resolve("ns/net"));
    Files.createSymbolicLink(dir.resolve("ns/net"), Path.of("net:[" + (4000 + pid) + "]"));
    Files.createDirectories(dir.resolve("fd"));
    for (int i = 0; i < sockets.length; i++) {
      Files.deleteIfExists(dir.resolve("fd/" + (3 + i)));
      Files.createSymbolicLink(dir.resolve("fd/" + (3 + i)), Path.of("socket:[" + sockets[i] + "]"));
    }
    Files.writeString(dir.resolve("net/tcp"), PortLookupTest.TCP_HEADER + tcp);
  }

  @Test
  void checkingTheFollowedPidsAloneFindsTheirExitsAndReuse() throws Exception {
    process(600, 1000, "/bin/sh");
    process(601, 1000, "/bin/sh");
    process(602, 1000, "/bin/sh");
    ProcessWatcher watcher = new ProcessWatcher(new ProcFs(proc));
    assertThat(watcher.scan().started()).containsExactlyInAnyOrder(600, 601, 602);
    watcher.follow(600);
    watcher.follow(601);
    Files.delete(proc.resolve("600/stat")); // exited
    process(601, 5000, "/bin/ls"); // exited, and its pid names another process
    process(603, 1000, "/bin/sh");
    ProcessWatcher.Changes c = watcher.scanFollowed();
    assertThat(c.exited()).containsExactlyInAnyOrder(600, 601);
    assertThat(c.started()).as("no listing").isEmpty();
    assertThat(watcher.scanFollowed().exited()).as("forgotten").isEmpty();
  }

  @Test
  void startTimeSkipsACommandNameWithSpacesAndParentheses() throws Exception {
    process(200, 123456, "/bin/true");
    assertThat(new ProcFs(proc).startTime(200)).isEqualTo(123456);
    assertThat(new ProcFs(proc).startTime(201)).isEqualTo(-1);
  }

  /** Discovery with lingering binaries (nothing attaches: no probes): what it inspects is what the tests count. */
  static Tracer lingeringTracer(ProcFs procFs) {
    return new Tracer(options(procFs, ProcessSelector.all()), new ProbeAttacher(null, procFs, java.time.Duration.ofMinutes(1), 4),
        new Tracer.Listener() {});
  }

  /** A copy of /bin/true at {@code path}: a file of its own inode. */
  static Path copyOfTrue(Path path) throws Exception {
    Files.createDirectories(path.getParent());
    Files.copy(Path.of("/bin/true"), path, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    return path;
  }

  static io.gospan.receiver.probe.ExecNotice notice(int pid, Path exe, long mntNs) throws Exception {
    return new io.gospan.receiver.probe.ExecNotice(pid, io.gospan.receiver.probe.ExeKey.of(exe), mntNs, exe.toString(), 1);
  }

  @Test
  void theBinaryOfAProcessGoneBeforeDiscoveryLooksIsInspectedByItsNoticesPathOnce(@TempDir Path files) throws Exception {
    Path cli = copyOfTrue(files.resolve("bin/cli"));
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = lingeringTracer(procFs)) {
      tracer.execNoticesOn(() -> 0);
      tracer.execed(notice(800, cli, 0)); // pid 800 is not in /proc: gone
      tracer.scan();
      assertThat(tracer.inspections()).as("inspected by the notice's path").isEqualTo(1);
      tracer.execed(notice(801, cli, 0));
      tracer.scan();
      assertThat(tracer.inspections()).as("not a Go binary: remembered").isEqualTo(1);
      assertThat(tracer.unreachableBinaries()).isZero();
    }
  }

  /** The path names another file by the time discovery looks (replaced: same path, new inode): never read as the notice's. */
  @Test
  void aBinaryReplacedAtItsPathIsNotInspectedAsTheNoticesAndIsCountedUnreachableOnce(@TempDir Path files) throws Exception {
    Path cli = copyOfTrue(files.resolve("bin/cli"));
    io.gospan.receiver.probe.ExecNotice n = notice(810, cli, 0);
    Path gone = copyOfTrue(files.resolve("bin/gone"));
    io.gospan.receiver.probe.ExecNotice g = notice(812, gone, 0);
    Files.delete(gone);
    // a new inode at the same path (as a package upgrade replaces a binary: written aside, renamed over it)
    Files.move(copyOfTrue(files.resolve("bin/cli.new")), cli, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    assertThat(io.gospan.receiver.probe.ExeKey.of(cli)).isNotEqualTo(n.exe());
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = lingeringTracer(procFs)) {
      tracer.execNoticesOn(() -> 0);
      tracer.execed(n);
      tracer.scan();
      assertThat(tracer.inspections()).as("the new file is not the notice's binary").isZero();
      assertThat(tracer.unreachableBinaries()).isEqualTo(1);
      tracer.execed(new io.gospan.receiver.probe.ExecNotice(811, n.exe(), 0, n.path(), 2));
      tracer.scan();
      assertThat(tracer.unreachableBinaries()).as("not tried again").isEqualTo(1);
      assertThat(tracer.inspections()).isZero();
      // a deleted one alike
      tracer.execed(g);
      tracer.scan();
      assertThat(tracer.unreachableBinaries()).isEqualTo(2);
      assertThat(tracer.inspections()).isZero();
    }
  }

  /**
   * A process in another mount namespace (a container): its path names nothing in gospan's, so the file
   * is reached under the root of a live process of the same namespace, or through a live process running it.
   */
  @Test
  void aBinaryOfAnotherMountNamespaceIsReachedThroughALiveProcessOfIt(@TempDir Path files) throws Exception {
    Path containerRoot = files.resolve("rootfs");
    Path inContainer = copyOfTrue(containerRoot.resolve("usr/bin/cli-" + System.nanoTime()));
    String path = "/" + containerRoot.relativize(inContainer);
    assertThat(Path.of(path)).doesNotExist();
    process(820, 1000, "/bin/sh"); // the container's long-lived process
    Files.createDirectories(proc.resolve("820/ns"));
    Files.createSymbolicLink(proc.resolve("820/ns/mnt"), Path.of("mnt:[4026532000]"));
    Files.createSymbolicLink(proc.resolve("820/root"), containerRoot);
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = lingeringTracer(procFs)) {
      tracer.execNoticesOn(() -> 0);
      tracer.scan(); // sees 820: /bin/sh inspected
      long before = tracer.inspections();
      tracer.execed(new io.gospan.receiver.probe.ExecNotice(821, io.gospan.receiver.probe.ExeKey.of(inContainer), 4026532000L, path, 1));
      tracer.scan();
      assertThat(tracer.inspections()).as("reached through /proc/820/root").isEqualTo(before + 1);
      assertThat(tracer.unreachableBinaries()).isZero();

      // another namespace's binary whose only way is a live process running it
      Path other = copyOfTrue(files.resolve("elsewhere/cli2"));
      process(830, 1000, other.toString());
      tracer.execed(new io.gospan.receiver.probe.ExecNotice(831, io.gospan.receiver.probe.ExeKey.of(other), 4026532999L,
          "/not/here/cli2", 1));
      tracer.scan();
      assertThat(tracer.inspections()).as("830 itself, once, however reached").isEqualTo(before + 2);
      assertThat(tracer.unreachableBinaries()).isZero();
    }
  }
}
