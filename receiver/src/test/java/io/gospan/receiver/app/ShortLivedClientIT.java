package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.testing.ExampleApps;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Short-lived command-line clients with real processes, real BPF and the whole pipeline: a
 * greeter-client that makes one call and exits (~7 ms, like grpcurl or grpc-health-probe) is learned
 * from the exec notice of its first run, and traced on every later run, because the binary's probes
 * linger after its last process exits; its linger starts again with every run, also a run discovery
 * never sees alive; a lingering binary is detached when its linger ends or when too many linger, and
 * attached again without reading the binary again.
 */
class ShortLivedClientIT {

  static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");
  static final AttributeKey<String> SERVICE = AttributeKey.stringKey("service.name");

  static Path current;

  /** Where the fresh clients' copies go (~16 MB each); JUnit deletes it after the class's tests. */
  @TempDir static Path copies;

  @BeforeAll
  static void build() {
    current = ExampleApps.build();
  }

  /** A copy of greeter-client in its own folder: a binary (inode) gospan has never seen. */
  static Path freshClient() throws Exception {
    Path dir = Files.createTempDirectory(copies, "gospan-cli");
    Files.copy(current.resolve("greeter-client"), dir.resolve("greeter-client"));
    return dir;
  }

  /** gospan with the given discovery lines, selecting only this test's binaries, spans to {@code spans}. */
  static GospanSidecar start(String discovery, InMemorySpanExporter spans, Path... clientDirs) {
    StringBuilder yaml = new StringBuilder("discovery:\n  instrument:\n    - exe_path: \"" + current + "/greeter-server\"\n");
    for (Path d : clientDirs) {
      yaml.append("    - exe_path: \"").append(d).append("/*\"\n");
    }
    yaml.append(discovery);
    yaml.append("exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n");
    return GospanSidecar.builder(ConfigLoader.parse(yaml.toString(), "test", Map.of()))
        .spanExporter(spans)
        .telemetryServer(false)
        .start();
  }

  record Run(int pid, long lifeMillis) {}

  /** Runs {@code dir/greeter-client -n 1 flags...}: one unary call, then it exits. */
  static Run runOnce(Path dir, String address, String... flags) throws Exception {
    long t0 = System.nanoTime();
    List<String> cmd = new ArrayList<>(List.of(dir.resolve("greeter-client").toString(), "-addr", address, "-n", "1", "-quiet"));
    cmd.addAll(List.of(flags));
    Process p = new ProcessBuilder(cmd)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    assertThat(p.waitFor()).as("greeter-client exit status").isZero();
    return new Run((int) p.pid(), (System.nanoTime() - t0) / 1_000_000);
  }

  static void await(BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  static Optional<TracedBinary> attached(Tracer tracer, ExeKey key) {
    return tracer.binaries().stream().filter(b -> b.key().equals(key)).findFirst();
  }

  static List<SpanData> clientSpans(InMemorySpanExporter spans, int pid) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getKind() == SpanKind.CLIENT && Long.valueOf(pid).equals(s.getResource().getAttribute(PID)))
        .toList();
  }

  /** The server span whose parent is {@code client} (same trace), if exported. */
  static Optional<SpanData> serverOf(InMemorySpanExporter spans, SpanData client) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getKind() == SpanKind.SERVER
            && s.getTraceId().equals(client.getTraceId())
            && s.getParentSpanId().equals(client.getSpanId()))
        .findFirst();
  }

  @Test
  void everyRunOfAShortLivedClientSeenOnceIsTracedAndLinkedToItsServerSpan() throws Exception {
    Path clientDir = freshClient();
    ExeKey clientKey = ExeKey.of(clientDir.resolve("greeter-client"));
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    // the default linger (10 minutes)
    try (ExampleApps.Server server = ExampleApps.startServer(current);
        GospanSidecar gospan = start("", spans, clientDir)) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      await(() -> tracer.isTraced((int) server.pid()), Duration.ofSeconds(10), "the server traced");

      // The very first run of a binary gospan has never seen: its calls are over (~7 ms) before gospan
      // has inspected and attached the binary (its exec notice reaches discovery 20-200 ms after the
      // exec), so it is missed; gospan learns the binary from that notice, and lets it linger.
      long t0 = System.nanoTime();
      Run first = runOnce(clientDir, server.address());
      await(() -> attached(tracer, clientKey).map(TracedBinary::lingering).orElse(false), Duration.ofSeconds(10),
          "the client binary learned from its first run's exec and lingering");
      long learnedMillis = (System.nanoTime() - t0) / 1_000_000;
      Thread.sleep(3000); // link_wait (2 s) and the batch delay: whatever the first run gave is exported
      System.out.printf("never-seen binary: first run lived %d ms, %d of 1 calls traced; binary %s %d ms after that run began%n",
          first.lifeMillis(), clientSpans(spans, first.pid()).size(),
          tracer.learnedFromExecs() > 0 ? "learned from its exec notice, attached and lingering"
              : "attached (its process was still running when discovery looked)", learnedMillis);
      long inspections = tracer.inspections();

      // 20 runs in a row, each one call, each exiting before a scan (500 ms) can see it
      List<Run> runs = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        runs.add(runOnce(clientDir, server.address()));
      }
      assertThat(gospan.sidecar().processesWithoutEvents()).as("runs of the traced binary without an event").isZero();
      await(() -> runs.stream().allMatch(r -> clientSpans(spans, r.pid()).size() == 1
              && serverOf(spans, clientSpans(spans, r.pid()).get(0)).isPresent()),
          Duration.ofSeconds(20), "a client span linked to a server span for each of the 20 runs; missing: "
              + runs.stream().filter(r -> clientSpans(spans, r.pid()).isEmpty()).map(Run::pid).toList());
      for (Run r : runs) {
        SpanData client = clientSpans(spans, r.pid()).get(0);
        assertThat(client.getName()).isEqualTo("greeter.Greeter/SayHello");
        assertThat(client.getResource().getAttribute(SERVICE)).as("resource of pid %d", r.pid()).isEqualTo("greeter-client");
        // complete: its trailers' event was read before its exit was handled (not ended as process_exited)
        assertThat(client.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code")))
            .as("status of pid %d's call: %s", r.pid(), client.getAttributes()).isEqualTo("OK");
        SpanData srv = serverOf(spans, client).orElseThrow();
        assertThat(srv.getResource().getAttribute(PID)).isEqualTo(server.pid());
      }
      List<Long> lives = runs.stream().map(Run::lifeMillis).sorted().toList();
      System.out.printf("20 runs of a lingering binary: 20 of 20 calls traced and linked; client lifetime median %d ms (min %d, max %d)%n",
          lives.get(10), lives.get(0), lives.get(19));
      assertThat(tracer.inspections()).as("the client binary was not read again").isEqualTo(inspections);
      // nothing of the clients is left but the lingering binary (discovery forgets a pid before it
      // marks its binary lingering: the test awaits both, not the first alone)
      await(() -> runs.stream().noneMatch(r -> tracer.isTraced(r.pid())), Duration.ofSeconds(10), "the clients forgotten");
      await(() -> attached(tracer, clientKey).map(TracedBinary::lingering).orElse(false), Duration.ofSeconds(10),
          "the client binary lingering after its last run");
      assertThat(attached(tracer, clientKey)).hasValueSatisfying(b -> {
        assertThat(b.lingering()).isTrue();
        assertThat(b.pids()).isEmpty();
        assertThat(b.attached()).isNotEmpty();
      });
    }
  }

  /**
   * A lingering binary run again and again by processes that are gone before discovery looks (each one
   * known only by its exec notice) is in use: its linger starts again with each run, so it is not
   * detached when the linger counted from the last process discovery saw ends (before, it was: every
   * run after that was missed).
   */
  @Test
  void aBinaryRunByProcessesGoneBeforeDiscoveryLooksKeepsLingeringWhileItIsRun() throws Exception {
    Path a = freshClient();
    ExeKey keyA = ExeKey.of(a.resolve("greeter-client"));
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    try (ExampleApps.Server server = ExampleApps.startServer(current);
        GospanSidecar gospan = start("  linger: 2s\n", spans, a)) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      runUntilLingering(tracer, a, keyA, server.address());
      List<Run> runs = new ArrayList<>();
      long t0 = System.nanoTime();
      while (System.nanoTime() - t0 < 7_000_000_000L) { // more than three lingers
        runs.add(runOnce(a, server.address()));
        assertThat(attached(tracer, keyA)).as("attached while it is run (%d runs, %d ms)", runs.size(),
            (System.nanoTime() - t0) / 1_000_000).isPresent();
        Thread.sleep(400);
      }
      await(() -> runs.stream().allMatch(r -> clientSpans(spans, r.pid()).size() == 1), Duration.ofSeconds(20),
          "a client span for each of " + runs.size() + " runs; missing: "
              + runs.stream().filter(r -> clientSpans(spans, r.pid()).isEmpty()).map(Run::pid).toList());
      System.out.printf("%d runs over 7 s with a 2 s linger: every run traced, the binary attached throughout%n", runs.size());
      await(() -> attached(tracer, keyA).isEmpty(), Duration.ofSeconds(6), "detached once no longer run");
    }
  }

  @Test
  void aLingeringBinaryIsDetachedWhenTooManyLingerAndAttachedAgainWithoutBeingRead() throws Exception {
    Path a = freshClient();
    Path b = freshClient();
    ExeKey keyA = ExeKey.of(a.resolve("greeter-client"));
    ExeKey keyB = ExeKey.of(b.resolve("greeter-client"));
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    try (ExampleApps.Server server = ExampleApps.startServer(current);
        GospanSidecar gospan = start("  linger: 10m\n  max_lingering_binaries: 1\n", spans, a, b)) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      runUntilLingering(tracer, a, keyA, server.address());
      long inspections = tracer.inspections();
      runUntilLingering(tracer, b, keyB, server.address());
      assertThat(tracer.inspections()).isEqualTo(inspections + 1);
      await(() -> attached(tracer, keyA).isEmpty(), Duration.ofSeconds(5), "A detached: only one binary may linger");
      assertThat(tracer.lingering()).extracting(TracedBinary::key).containsExactly(keyB);

      long hits = tracer.inspectionCacheHits();
      runUntilLingering(tracer, a, keyA, server.address());
      assertThat(tracer.inspections()).as("A attached again from the cache, not read").isEqualTo(inspections + 1);
      assertThat(tracer.inspectionCacheHits()).isEqualTo(hits + 1);
      await(() -> attached(tracer, keyB).isEmpty(), Duration.ofSeconds(5), "B detached in turn");
    }
  }

  @Test
  void aLingeringBinaryIsDetachedWhenItsLingerEnds() throws Exception {
    Path a = freshClient();
    ExeKey keyA = ExeKey.of(a.resolve("greeter-client"));
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    try (ExampleApps.Server server = ExampleApps.startServer(current);
        GospanSidecar gospan = start("  linger: 1s\n", spans, a)) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      runUntilLingering(tracer, a, keyA, server.address());
      long t0 = System.nanoTime();
      await(() -> attached(tracer, keyA).isEmpty(), Duration.ofSeconds(5), "A detached after its linger");
      long ms = (System.nanoTime() - t0) / 1_000_000;
      // the linger's end is acted on at the next periodic scan: every 2 s while exec notices arrive
      // (ScanCadence.QUIET_SCAN_INTERVAL_NANOS), 500 ms otherwise
      assertThat(ms).as("detached after the 1 s linger, within a periodic scan (≤ 2 s) or so").isLessThan(4000);
      assertThat(tracer.binaries()).extracting(TracedBinary::key).doesNotContain(keyA);
    }
  }

  static boolean awaitQuietly(BooleanSupplier condition, Duration timeout) throws InterruptedException {
    try {
      await(condition, timeout, "");
      return true;
    } catch (AssertionError notYet) {
      return false;
    }
  }

  /**
   * Runs the client (a 50 ms call, so that gospan sees the process; again, should it miss it)
   * until its binary lingers.
   */
  static void runUntilLingering(Tracer tracer, Path dir, ExeKey key, String address) throws Exception {
    for (int i = 0; i < 5; i++) {
      runOnce(dir, address, "-delay-ms", "50");
      if (awaitQuietly(() -> attached(tracer, key).map(TracedBinary::lingering).orElse(false), Duration.ofSeconds(3))) {
        return;
      }
    }
    throw new AssertionError(dir + " never attached in 5 runs");
  }
}
