package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Discovery and the attach lifecycle with real processes and real BPF: gospan starts first,
 * finds servers of two binaries as they start, traces every call, follows exits and restarts,
 * detaches a binary with its last process, does not grow over 100 short-lived processes, and
 * traces a new process of a known binary from its very first call.
 */
class SidecarIT {

  static Path current;
  static Path older;

  @BeforeAll
  static void build() {
    current = ExampleApps.build();
    older = ExampleApps.build("--go", "1.22.12", "--grpc", "v1.60.1");
  }

  /**
   * A fast scan, selecting only this test's binaries: Go gRPC processes of other test runs on
   * the machine must not count as "traced".
   */
  static Sidecar.Options fastScan() {
    Sidecar.Options d = Sidecar.Options.defaults();
    ProcessSelector ours = new ProcessSelector(
        List.of(
            new ProcessSelector.Rule(current + "/*", null, null, null),
            new ProcessSelector.Rule(older + "/*", null, null, null),
            new ProcessSelector.Rule(System.getProperty("java.io.tmpdir") + "/gospan-deleted*/*", null, null, null)),
        List.of());
    return new Sidecar.Options(d.headerNames(), 1 << 22, Duration.ofMillis(100), ours, d.procFs(), d.maxSkippedBinaries());
  }

  static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  static long serverEnds(List<HeaderEvent> events, long pid) {
    synchronized (events) {
      return events.stream()
          .filter(e -> e.pid() == pid && e.side() == Side.SERVER && e.endStream()) // either probe set's end
          .count();
    }
  }

  @Test
  void followsServersOfTwoBinariesAsTheyStartExitAndRestart() throws Exception {
    List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
    try (Sidecar sidecar = Sidecar.start(fastScan(), e -> { if (e instanceof HeaderEvent h) events.add(h); }, new Tracer.Listener() {})) {
      assertThat(sidecar.awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      Tracer tracer = sidecar.tracer();
      List<ExampleApps.Server> servers = new ArrayList<>();
      try {
        servers.add(ExampleApps.startServer(current));
        servers.add(ExampleApps.startServer(current));
        servers.add(ExampleApps.startServer(older));
        Set<Integer> serverPids = servers.stream().map(s -> (int) s.pid()).collect(Collectors.toSet());
        await(() -> tracer.traced().keySet().containsAll(serverPids), "the three servers traced");
        assertThat(tracer.binaries()).extracting(TracedBinary::grpcVersion).contains("v1.85.0", "v1.60.1");

        for (ExampleApps.Server s : servers) {
          ExampleApps.runClient(current, s.address(), "-rpc", "unary", "-n", "3");
        }
        for (ExampleApps.Server s : servers) {
          await(() -> serverEnds(events, s.pid()) == 3, "3 traced calls on pid " + s.pid());
        }
        // the clients came and went: what is traced now is exactly the living servers
        await(() -> tracer.traced().keySet().equals(serverPids) && livingOurs().equals(serverPids)
                && tracer.binaries().size() == 2, // the clients' binary detached too
            "exactly the living servers traced; traced: " + tracer.traced() + " servers " + serverPids);

        // kill the older binary's only server: its links go, the other binary keeps its own.
        // Links are counted by this JVM's fds; a count waits (bounded) for detaching to be done.
        TracedBinary olderBinary = tracer.traced().get((int) servers.get(2).pid());
        int olderLinks = olderBinary.uprobes();
        int currentLinks = tracer.traced().get((int) servers.get(0).pid()).uprobes();
        assertThat(olderBinary.attached().size())
            .as("grpc-go's 3 probes, the ServeHTTP path's 6 (WriteField waits), the 2 in-process ones").isEqualTo(11);
        // NewStream's probe is one uprobe too: on the jump before its success RET (ResultPlaces), not one per RET
        assertThat(olderLinks).as("one uprobe per probe").isEqualTo(11);
        await(() -> ourLinks() == currentLinks + olderLinks, "the clients' links freed");
        servers.remove(2).close();
        await(() -> tracer.binaries().size() == 1, "older binary detached");
        await(() -> ourLinks() == currentLinks, "only the current binary's links left");

        // restart it: traced again, calls traced again
        ExampleApps.Server restarted = ExampleApps.startServer(older);
        servers.add(restarted);
        await(() -> tracer.traced().containsKey((int) restarted.pid()), "restarted server traced");
        ExampleApps.runClient(older, restarted.address(), "-rpc", "unary", "-n", "2");
        await(() -> serverEnds(events, restarted.pid()) == 2, "calls to the restarted server");
      } finally {
        servers.forEach(ExampleApps.Server::close);
      }
      await(() -> tracer.traced().isEmpty() && tracer.binaries().isEmpty(), "nothing traced once all exited");
      await(() -> ourLinks() == 0, "every link freed");
    }
  }

  @Test
  void aNewProcessOfAKnownBinaryIsTracedFromItsFirstCall() throws Exception {
    List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
    // a slow scan: the short-lived client must be traced without being discovered
    Sidecar.Options d = fastScan();
    Sidecar.Options slow = new Sidecar.Options(d.headerNames(), d.ringBufferBytes(), Duration.ofSeconds(30), d.selector(), d.procFs(), 100);
    try (ExampleApps.Server s = ExampleApps.startServer(current);
        Sidecar sidecar = Sidecar.start(slow, e -> { if (e instanceof HeaderEvent h) events.add(h); }, new Tracer.Listener() {})) {
      assertThat(sidecar.awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      assertThat(sidecar.tracer().traced()).containsKey((int) s.pid());
      // make the client binary known through a running instance first, then start a new
      // process of it that calls once and exits before any scan could see it
      Process idle = new ProcessBuilder(current.resolve("greeter-client").toString(), "-addr", s.address(), "-n", "0", "-rate", "1", "-quiet")
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      try {
        // the exec notice (or a forced scan) makes the running client's binary known
        sidecar.tracer().scan();
        await(() -> sidecar.tracer().traced().containsKey((int) idle.pid()), "the idle client traced");
        // the new process runs the same file (inode) through a hard link outside the selected
        // directories: discovery (exec notice, scans) never selects it, only the BPF offsets
        // keyed by the binary can trace it
        Path link = ExampleApps.repoRoot().resolve("receiver/target/gospan-hardlink/greeter-client");
        Files.createDirectories(link.getParent());
        Files.deleteIfExists(link);
        Files.createLink(link, current.resolve("greeter-client"));
        long t0 = System.nanoTime();
        Process once = new ProcessBuilder(link.toString(), "-addr", s.address(), "-n", "1", "-quiet")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(once.waitFor()).isZero();
        long lifeMs = (System.nanoTime() - t0) / 1_000_000;
        int pid = (int) once.pid();
        await(() -> {
          synchronized (events) {
            return events.stream().anyMatch(e -> e.pid() == pid && e.side() == Side.CLIENT && e.endStream());
          }
        }, "the one call of the short-lived client (lived " + lifeMs + " ms)");
        assertThat(sidecar.tracer().traced()).doesNotContainKey(pid); // never selected: keyed by binary
      } finally {
        idle.destroy();
        idle.waitFor();
      }
    }
  }

  @Test
  void aProcessSeenBeforeItsExecIsTracedOnceItExecs() throws Exception {
    // A slow scan: only the exec notice can make gospan look at the process again (exec
    // keeps the pid and the start time, so a scan alone would keep it ignored).
    Sidecar.Options d = fastScan();
    Sidecar.Options slow = new Sidecar.Options(d.headerNames(), d.ringBufferBytes(), Duration.ofSeconds(60), d.selector(), d.procFs(), 100);
    List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
    try (Sidecar sidecar = Sidecar.start(slow, e -> { if (e instanceof HeaderEvent h) events.add(h); }, new Tracer.Listener() {})) {
      assertThat(sidecar.awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      assertThat(sidecar.watchesExecs()).as("exec notices attached").isTrue();
      Path fifo = Files.createTempDirectory("gospan-exec").resolve("go");
      ExampleApps.run(List.of("mkfifo", fifo.toString()), 10);
      // a shell that waits on the fifo, then execs the server: the scan sees the shell
      Process p = new ProcessBuilder("sh", "-c", "read x < " + fifo + "; exec " + current.resolve("greeter-server") + " -addr 127.0.0.1:0")
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
      try {
        await(() -> ProcFs.system().entry((int) p.pid()).map(e -> e.exePath().endsWith("/sh") || e.exePath().endsWith("/dash") || e.exePath().endsWith("/bash")).orElse(false),
            "the shell running");
        sidecar.tracer().scan();
        assertThat(sidecar.tracer().traced()).doesNotContainKey((int) p.pid());
        Files.writeString(fifo, "go\n");
        String line = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
        assertThat(line).startsWith("listening on ");
        await(() -> sidecar.tracer().traced().containsKey((int) p.pid()), "the exec'd server traced without a scan");
        ExampleApps.runClient(current, line.substring("listening on ".length()).strip(), "-n", "2");
        await(() -> serverEnds(events, p.pid()) == 2, "its calls traced");
      } finally {
        p.destroy();
        p.waitFor();
      }
    }
  }

  @Test
  void aServerSelectedByItsOpenPortIsTracedOnceItListens() throws Exception {
    // Discovery sees the server at its exec, 1.5 s before it listens: an open_port rule must judge
    // it again. Another server of the same binary, on another port, stays untraced.
    int port;
    try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    Sidecar.Options d = fastScan();
    ProcessSelector byPort = new ProcessSelector(List.of(new ProcessSelector.Rule(current + "/*", null, port, null)), List.of());
    Sidecar.Options options = new Sidecar.Options(d.headerNames(), d.ringBufferBytes(), d.scanInterval(), byPort, d.procFs(), 100);
    List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
    try (Sidecar sidecar = Sidecar.start(options, e -> { if (e instanceof HeaderEvent h) events.add(h); }, new Tracer.Listener() {});
        ExampleApps.Server other = ExampleApps.startServer(current)) {
      assertThat(sidecar.awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      assertThat(sidecar.watchesExecs()).as("exec notices attached").isTrue();
      Process p = new ProcessBuilder(current.resolve("greeter-server").toString(), "-addr", "127.0.0.1:" + port, "-listen-after", "1500ms")
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
      try {
        await(() -> sidecar.tracer().awaitingPort().contains((int) p.pid()), "the server waiting for its port");
        assertThat(sidecar.tracer().traced()).doesNotContainKey((int) p.pid());
        String line = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
        assertThat(line).isEqualTo("listening on 127.0.0.1:" + port);
        await(() -> sidecar.tracer().traced().containsKey((int) p.pid()), "the server traced once it listens");
        ExampleApps.runClient(current, "127.0.0.1:" + port, "-n", "2");
        await(() -> serverEnds(events, p.pid()) == 2, "its calls traced");
        assertThat(sidecar.tracer().traced()).as("the server on another port").doesNotContainKey((int) other.pid());
      } finally {
        p.destroy();
        p.waitFor();
      }
    }
  }

  @Test
  void aProcessWhoseExecutableWasDeletedIsTracedThroughProcPidExe() throws Exception {
    Path copy = Files.createTempDirectory("gospan-deleted").resolve("greeter-server");
    Files.copy(current.resolve("greeter-server"), copy);
    List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
    Process server = new ProcessBuilder(copy.toString(), "-addr", "127.0.0.1:0").redirectError(ProcessBuilder.Redirect.DISCARD).start();
    // deleted (or replaced) on disk while running, before gospan starts
    String line = new java.io.BufferedReader(new java.io.InputStreamReader(server.getInputStream())).readLine();
    assertThat(line).startsWith("listening on ");
    Files.delete(copy);
    try (Sidecar sidecar = Sidecar.start(fastScan(), e -> { if (e instanceof HeaderEvent h) events.add(h); }, new Tracer.Listener() {})) {
      assertThat(sidecar.awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      await(() -> sidecar.tracer().traced().containsKey((int) server.pid()), "the deleted binary's process traced");
      assertThat(sidecar.tracer().traced().get((int) server.pid()).path()).endsWith("(deleted)");
      ExampleApps.runClient(current, line.substring("listening on ".length()).strip(), "-n", "2");
      await(() -> serverEnds(events, server.pid()) == 2, "its calls traced");
    } finally {
      server.destroy();
      server.waitFor();
    }
  }

  @Test
  void aHundredShortLivedProcessesLeaveNoGrowth() throws Exception {
    List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
    try (ExampleApps.Server s = ExampleApps.startServer(current);
        Sidecar sidecar = Sidecar.start(fastScan(), e -> { if (e instanceof HeaderEvent h) events.add(h); }, new Tracer.Listener() {})) {
      assertThat(sidecar.awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      Path older = SidecarIT.older;
      // warm-up: one of each, so lazily created JVM state exists before measuring
      ExampleApps.runClient(older, s.address(), "-n", "1");
      Thread.sleep(300);
      // the server's links only (the kernel frees the client's closed links from deferred work)
      await(() -> sidecar.tracer().binaries().size() == 1, "the warm-up client's binary detached");
      long links = sidecar.tracer().traced().get((int) s.pid()).uprobes();
      await(() -> ourLinks() == links, "the warm-up client's links freed");
      long fds = fds();
      System.gc();
      long heap = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
      for (int i = 0; i < 100; i++) {
        ExampleApps.runClient(older, s.address(), "-n", "1");
        if (i % 10 == 0) {
          Thread.sleep(150); // let some be discovered while alive, some not
        }
      }
      // discovery is asynchronous: an exec notice handled late may trace a client that has just
      // exited, until the next scan sees it gone
      await(() -> sidecar.tracer().traced().keySet().equals(Set.of((int) s.pid())) && livingOurs().equals(Set.of((int) s.pid())),
          "only the server traced, and only it living");
      await(() -> serverEnds(events, s.pid()) == 101, "101 calls traced");
      Thread.sleep(300);
      // discovery is asynchronous (exec notices, scans): wait until it has caught up
      await(() -> sidecar.tracer().binaries().size() == 1, "only the server's binary attached; attached: " + sidecar.tracer().binaries());
      await(() -> ourLinks() == links, "links back to the server's " + links);
      // an inspection still in flight (a late exec notice) holds the binary open for a moment
      await(() -> {
        try {
          return fds() <= fds;
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }, "fds back to " + fds);
      System.gc();
      long heapAfter = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
      assertThat(heapAfter).as("heap after (before: %d)", heap).isLessThan(heap + 16L * 1024 * 1024);
    }
  }

  /** Living processes whose executable is one of this test's binaries (what must be traced). */
  static Set<Integer> livingOurs() {
    Set<Integer> pids = new HashSet<>();
    ProcessHandle.allProcesses().forEach(h -> {
      try {
        Path exe = Files.readSymbolicLink(Path.of("/proc", Long.toString(h.pid()), "exe"));
        if (exe.startsWith(current) || exe.startsWith(older)) {
          pids.add((int) h.pid());
        }
      } catch (Exception ignored) {
        // kernel thread, exited, or not readable
      }
    });
    return pids;
  }

  /**
   * Uprobe links this JVM holds (its own fds: other processes on the machine, e.g. another gospan,
   * attach uprobes too).
   */
  static long ourLinks() {
    return io.gospan.receiver.bpf.Bpftool.ownUprobeLinks();
  }

  static long fds() throws Exception {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    }
  }
}
