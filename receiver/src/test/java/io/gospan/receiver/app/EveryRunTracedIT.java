package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.probe.GrpcProbe;
import io.gospan.receiver.testing.ExampleApps;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every run of a traced binary, every time (a soak): a command-line client that lives ~10 ms (the
 * example greeter-client, one call) is run {@code gospan.soak.runs} times in a row in each of three
 * namespace set-ups: gospan's own namespaces, its own mount namespace ({@code unshare -m}), and another
 * network and mount namespace ({@code ip netns exec}, with a server of its own there). Binaries linger
 * {@link #LINGER} only, far shorter than a set-up's runs take, and discovery sees hardly any of the
 * client's processes alive (each is gone before its exec notice is read): the binary must stay attached
 * because it is run, not because a process was seen. Meanwhile gospan learns other binaries (fresh
 * copies of the client, run now and then, each learned from its exec notice), lets them linger and
 * detaches them again (at most 3 may linger, 4 take turns). In each set-up, after its first run, every
 * run of the client must give its client span, linked to its server span; the NewStream probe's
 * kernel-side hit counter must rise by at least one per run; no process of a traced binary may exit
 * without an event ({@code gospan.processes.without_events}).
 *
 * <p>The size is a system property, {@code gospan.soak.runs}: {@link #DEFAULT_RUNS} per set-up (CI's, and
 * the run docs/benchmarks.md, "Every run of a traced binary", records).
 */
class EveryRunTracedIT {
  static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");
  /** Runs per namespace set-up (~1 min for the three on the 2-vCPU VM: docs/benchmarks.md). */
  static final int DEFAULT_RUNS = 1000;
  /** Other binaries that are learned, linger and are detached meanwhile; at most {@link #MAX_LINGERING} linger. */
  static final int OTHERS = 4;
  static final int MAX_LINGERING = 3;
  static final String LINGER = "3s";

  @Test
  void everyRunOfAShortLivedClientIsTracedInEveryNamespaceSetUp() throws Exception {
    int runs = Integer.getInteger("gospan.soak.runs", DEFAULT_RUNS);
    Path current = ExampleApps.build();
    Path dir = Files.createTempDirectory("gospan-soak").toRealPath();
    Path cli = dir.resolve("cli/greeter-client");
    Files.createDirectories(cli.getParent());
    Files.copy(current.resolve("greeter-client"), cli);
    List<Path> others = new ArrayList<>();
    for (int i = 0; i < OTHERS; i++) {
      Path o = dir.resolve("other-" + i + "/greeter-client");
      Files.createDirectories(o.getParent());
      Files.copy(current.resolve("greeter-client"), o);
      others.add(o);
    }
    String ns = "gospan-soak-" + ProcessHandle.current().pid();
    String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + current + "/greeter-server\"\n"
        + "    - exe_path: \"" + dir + "/*/greeter-client\"\n  max_lingering_binaries: " + MAX_LINGERING + "\n"
        + "  linger: " + LINGER + "\n"
        + "exporter: {type: none, batch: {schedule_delay: 200ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n"
        + "link: {enabled: false}\n";
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    ExampleApps.Server nsServer = null;
    run("ip", "netns", "add", ns);
    try (ExampleApps.Server server = ExampleApps.startServer(current);
        GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
            .spanExporter(spans).telemetryServer(false).start()) {
      run("ip", "-n", ns, "link", "set", "lo", "up");
      nsServer = ExampleApps.startListening(List.of("ip", "netns", "exec", ns), current.resolve("greeter-server"),
          "127.0.0.1:0", Map.of());
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      long serverPid = server.pid();
      long nsServerPid = nsServer.pid();
      ShortLivedClientIT.await(() -> tracer.isTraced((int) serverPid) && tracer.isTraced((int) nsServerPid),
          Duration.ofSeconds(30), "the servers traced");

      // the first run: its binary is learned from its exec notice
      ExeKey key = ExeKey.of(cli);
      long t0 = System.nanoTime();
      loop(dir, "first", List.of(), cli, server.address(), 1, List.of(), 0);
      ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, key).map(TracedBinary::lingering).orElse(false),
          Duration.ofSeconds(10), "the client's binary learned from its first run");
      System.out.printf("soak: the client's binary attached %d ms after its first run began%n", (System.nanoTime() - t0) / 1_000_000);

      record Variant(String name, List<String> prefix, String address) {}
      List<Variant> variants = List.of(
          new Variant("gospan's namespaces", List.of(), server.address()),
          new Variant("unshare -m", List.of("unshare", "-m"), server.address()),
          new Variant("ip netns exec", List.of("ip", "netns", "exec", ns), "127.0.0.1:" + nsServer.port()));
      Map<String, String> report = new HashMap<>();
      for (Variant v : variants) {
        // the set-up's first run (its binary learned again if it was detached while the last set-up's spans were awaited)
        loop(dir, "first-" + v.name(), v.prefix(), cli, v.address(), 1, List.of(), 0);
        ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, key).isPresent(), Duration.ofSeconds(10),
            v.name() + ": the client's binary attached after the set-up's first run");
        long hits0 = newStreamHits(gospan);
        long without0 = gospan.sidecar().processesWithoutEvents();
        long v0 = System.nanoTime();
        List<Long> pids = loop(dir, v.name(), v.prefix(), cli, v.address(), runs, others, runs / 10);
        long loopMillis = (System.nanoTime() - v0) / 1_000_000;
        long serverOfVariant = v.prefix().contains("netns") ? nsServerPid : serverPid;
        Set<Long> want = new HashSet<>(pids);
        ShortLivedClientIT.await(() -> tracedRuns(spans, want, serverOfVariant).size() == want.size(), Duration.ofSeconds(60),
            v.name() + ": a client span linked to its server span for each of " + want.size() + " runs");
        long hits = newStreamHits(gospan) - hits0;
        report.put(v.name(), String.format("%d of %d runs traced and linked, %d ms for the loop (%.1f ms a run), NewStream hits %d",
            tracedRuns(spans, want, serverOfVariant).size(), runs, loopMillis, loopMillis / (double) runs, hits));
        assertThat(gospan.sidecar().processesWithoutEvents() - without0).as("%s: processes that exited without an event", v.name())
            .isZero();
        assertThat(hits).as("%s: one NewStream hit per call (the client's, and the other binaries' runs)", v.name())
            .isGreaterThanOrEqualTo(runs);
        assertThat(ShortLivedClientIT.attached(tracer, key)).as("the client's binary still attached").isPresent();
      }
      report.forEach((v, r) -> System.out.printf("soak, %s: %s%n", v, r));
      System.out.printf("soak: binaries learned from exec notices %d (the other binaries again after each eviction), lingering now %d%n",
          tracer.learnedFromExecs(), tracer.lingering().size());
      assertThat(tracer.learnedFromExecs()).as("the client and the other binaries, learned from their exec notices")
          .isGreaterThanOrEqualTo(1 + OTHERS);
    } finally {
      if (nsServer != null) {
        nsServer.close();
      }
      run("ip", "netns", "del", ns);
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  static long newStreamHits(GospanSidecar gospan) {
    return gospan.sidecar().probes().counters().get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM).hits();
  }

  /** The pids of {@code want} that have a client span whose server span (of {@code serverPid}) is its child. */
  static Set<Long> tracedRuns(InMemorySpanExporter spans, Set<Long> want, long serverPid) {
    List<SpanData> all = spans.getFinishedSpanItems();
    Map<String, SpanData> serverByParent = new HashMap<>();
    for (SpanData s : all) {
      if (s.getKind() == SpanKind.SERVER && Long.valueOf(serverPid).equals(s.getResource().getAttribute(PID))) {
        serverByParent.put(s.getParentSpanId(), s);
      }
    }
    Set<Long> traced = new HashSet<>();
    for (SpanData c : all) {
      Long pid = c.getResource().getAttribute(PID);
      if (c.getKind() == SpanKind.CLIENT && pid != null && want.contains(pid) && serverByParent.containsKey(c.getSpanId())) {
        traced.add(pid);
      }
    }
    return traced;
  }

  /**
   * Runs {@code prefix... cli -addr address -n 1 -quiet} {@code runs} times in a row from a shell loop
   * (no JVM in between), and every {@code otherEvery} runs one of {@code others} in turn (with the same
   * prefix); returns the client runs' pids.
   */
  static List<Long> loop(Path dir, String name, List<String> prefix, Path cli, String address, int runs, List<Path> others,
      int otherEvery) throws Exception {
    String file = name.replaceAll("[^A-Za-z0-9_-]", "-");
    Path script = dir.resolve("loop-" + file + ".sh");
    Path pids = dir.resolve("pids-" + file);
    String pre = String.join(" ", prefix);
    StringBuilder sh = new StringBuilder("set -e\nothers=(" + String.join(" ", others.stream().map(Path::toString).toList()) + ")\n")
        .append("for ((i = 0; i < ").append(runs).append("; i++)); do\n")
        .append("  ").append(pre).append(' ').append(cli).append(" -addr ").append(address).append(" -n 1 -quiet >/dev/null &\n")
        .append("  p=$!; wait $p; echo $p\n");
    if (otherEvery > 0 && !others.isEmpty()) {
      sh.append("  if (( i % ").append(otherEvery).append(" == 0 )); then o=${others[$(( i / ").append(otherEvery)
          .append(" % ${#others[@]} ))]}; ").append(pre).append(" $o -addr ").append(address).append(" -n 1 -quiet >/dev/null; fi\n");
    }
    sh.append("done > ").append(pids).append('\n');
    Files.writeString(script, sh.toString());
    Process p = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
    assertThat(p.waitFor(30, TimeUnit.MINUTES)).isTrue();
    assertThat(p.exitValue()).as("the loop %s", name).isZero();
    return Files.readAllLines(pids).stream().map(Long::parseLong).toList();
  }

  static void run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
  }
}
