package io.gospan.receiver.app;

import static io.gospan.receiver.app.ShortLivedClientIT.attached;
import static io.gospan.receiver.app.ShortLivedClientIT.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.discovery.BinaryInspection;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.offsets.resolve.Preference;
import io.gospan.receiver.testing.ExampleApps;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * grpc-go's own route_guide example, server and client, built from the Go module proxy by {@code
 * scripts/build-route-guide.sh} (a program nobody here wrote), traced with real BPF and the whole
 * pipeline. The client is a short-lived command-line program (~15 ms for its five calls: two unary
 * {@code GetFeature}, server-streaming {@code ListFeatures}, client-streaming {@code RecordRoute}, bidi
 * {@code RouteChat}): once gospan has seen its binary, every run's five calls are traced from the first,
 * each client span linked to its server span by socket, statuses OK on both sides. Two builds: the default
 * one over TLS (route_guide's own certificates: the socket is found through {@code crypto/tls.Conn} and
 * grpc-go's {@code syscallConn}), and a stripped position-independent one (offsets from the catalog, itabs
 * compared less each process's load bias).
 */
class RouteGuideIT {
  static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");
  static final AttributeKey<String> STATUS = AttributeKey.stringKey("rpc.response.status_code");
  static final AttributeKey<String> PEER = AttributeKey.stringKey("network.peer.address");
  static final AttributeKey<Long> PEER_PORT = AttributeKey.longKey("network.peer.port");
  static final AttributeKey<String> UNIDENTIFIED = AttributeKey.stringKey("gospan.connection.unidentified");
  static final List<String> METHODS = List.of("routeguide.RouteGuide/GetFeature", "routeguide.RouteGuide/GetFeature",
      "routeguide.RouteGuide/ListFeatures", "routeguide.RouteGuide/RecordRoute", "routeguide.RouteGuide/RouteChat");

  /** Builds route_guide (cached) with these options of build-route-guide.sh; its directory. */
  static Path build(String... options) {
    List<String> cmd = new ArrayList<>(List.of(ExampleApps.repoRoot().resolve("scripts/build-route-guide.sh").toString()));
    cmd.addAll(List.of(options));
    String[] lines = ExampleApps.run(cmd, 900).strip().split("\n");
    return Path.of(lines[lines.length - 1].strip());
  }

  @Test
  void routeGuideOverTlsEveryRunTracedFromItsFirstCallAndLinked() throws Exception {
    Path dir = build();
    Path x509 = dir.resolve("x509");
    traceRuns(dir, List.of("-tls", "-cert_file", x509.resolve("server_cert.pem").toString(),
        "-key_file", x509.resolve("server_key.pem").toString()), List.of("-tls", "-ca_file", x509.resolve("ca_cert.pem").toString()));
  }

  @Test
  void aStrippedPieRouteGuideIsLinkedBySocket() throws Exception {
    Path dir = build("--pie", "--stripped");
    BinaryInspection inspection = BinaryInspection.inspect(dir.resolve("route_guide_client"), Preference.DWARF);
    assertThat(inspection.layout().pie()).isTrue();
    assertThat(inspection.socketLinking()).as(inspection.socketLinkingVerdict()).isTrue();
    traceRuns(dir, List.of(), List.of());
  }

  /**
   * The stripped client at the newest grpc-go, 10 runs in a row with nothing to make gospan see it first
   * (selectors naming the test's binaries by path, as the default configuration would select them):
   * its first run ends before gospan has looked, gospan learns the binary from that run's exec notice,
   * and runs 2-10 give a client span for every call, each the parent of its server span; with {@code
   * discovery.hold_new_binaries}, every run, the first included, even back to back.
   */
  @Test
  void theStrippedClientsRunsAreTracedFromTheSecondAndWithTheHoldFromTheFirst() throws Exception {
    Path dir = build("--stripped");
    for (boolean hold : new boolean[] {false, true}) {
      String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/route_guide_*\"\n"
          + "  hold_new_binaries: " + hold + "\n"
          + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
      InMemorySpanExporter spans = InMemorySpanExporter.create();
      int port = DebianEtcdIT.freePort();
      Process srv = null;
      try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
          .spanExporter(spans).telemetryServer(false).start()) {
        Tracer tracer = gospan.sidecar().tracer();
        assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
        assertThat(gospan.sidecar().hold().isPresent()).as("execs held").isEqualTo(hold);
        srv = new ProcessBuilder(dir.resolve("route_guide_server").toString(), "-port", Integer.toString(port))
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long srvPid = srv.pid();
        await(() -> tracer.isTraced((int) srvPid), Duration.ofSeconds(30), "route_guide_server traced");
        await(() -> listening(port), Duration.ofSeconds(30), "route_guide_server listening");
        ExeKey clientKey = ExeKey.of(dir.resolve("route_guide_client"));
        assertThat(attached(tracer, clientKey)).as("the client's binary is new to this gospan").isEmpty();

        List<Long> runs = new ArrayList<>();
        List<Long> lives = new ArrayList<>();
        long learnedMillis = 0;
        for (int i = 0; i < 10; i++) {
          long t0 = System.nanoTime();
          Process p = new ProcessBuilder(dir.resolve("route_guide_client").toString(), "-addr", "localhost:" + port)
              .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
          assertThat(p.waitFor()).as("route_guide_client exit status").isZero();
          lives.add((System.nanoTime() - t0) / 1_000_000);
          runs.add(p.pid());
          if (i == 0 && !hold) {
            // the next run is traced once gospan has learned the binary from this run's exec notice
            await(() -> attached(tracer, clientKey).isPresent(), Duration.ofSeconds(10), "route_guide_client learned from its exec");
            learnedMillis = (System.nanoTime() - t0) / 1_000_000;
          }
        }
        List<Long> mustBeTraced = hold ? runs : runs.subList(1, runs.size());
        await(() -> mustBeTraced.stream().allMatch(pid -> clientSpans(spans, pid).size() == METHODS.size()
                && clientSpans(spans, pid).stream().allMatch(c -> serverOf(spans, c).isPresent())),
            Duration.ofSeconds(30), (hold ? "runs 1-10" : "runs 2-10") + ": five client spans each, each the parent of its"
                + " server span; traced runs: " + runs.stream().map(pid -> clientSpans(spans, pid).size()).toList());
        for (long pid : mustBeTraced) {
          List<SpanData> calls = clientSpans(spans, pid);
          assertThat(calls).extracting(SpanData::getName).containsExactlyInAnyOrderElementsOf(METHODS);
          for (SpanData c : calls) {
            SpanData s = serverOf(spans, c).orElseThrow();
            assertThat(s.getResource().getAttribute(PID)).isEqualTo(srvPid);
            assertThat(c.getAttributes().get(STATUS)).isEqualTo("OK");
          }
        }
        Thread.sleep(2500); // whatever the first run gave without the hold is exported
        System.out.printf("route_guide stripped (grpc-go %s), %s: runs of %s ms; client spans per run %s%s%n",
            tracer.binary(clientKey).map(TracedBinary::grpcVersion).orElse("?"),
            hold ? "discovery.hold_new_binaries" : "default", lives,
            runs.stream().map(pid -> clientSpans(spans, pid).size()).toList(),
            hold ? ", held " + gospan.sidecar().hold().map(h -> h.held() + " exec(s), " + h.heldNanos() / 1_000_000 + " ms in all").orElse("")
                : ", binary learned " + learnedMillis + " ms after the first run began");
        assertThat(gospan.sidecar().processesWithoutEvents()).isZero();
      } finally {
        if (srv != null) {
          srv.destroy();
          srv.waitFor();
        }
      }
    }
  }

  void traceRuns(Path dir, List<String> serverFlags, List<String> clientFlags) throws Exception {
    Path server = dir.resolve("route_guide_server");
    Path client = dir.resolve("route_guide_client");
    String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/route_guide_*\"\n"
        + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    int port = DebianEtcdIT.freePort();
    Process srv = null;
    try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
        .spanExporter(spans).telemetryServer(false).start()) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      List<String> cmd = new ArrayList<>(List.of(server.toString(), "-port", Integer.toString(port)));
      cmd.addAll(serverFlags);
      srv = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      long srvPid = srv.pid();
      await(() -> tracer.isTraced((int) srvPid), Duration.ofSeconds(30), "route_guide_server traced");
      await(() -> listening(port), Duration.ofSeconds(30), "route_guide_server listening");

      // The client lives ~15 ms, too short for gospan to read a binary it has never seen: one run
      // against a server that accepts and never answers (its calls wait for the HTTP/2 preface) makes
      // gospan attach the binary, which then lingers after that run is ended.
      ExeKey clientKey = ExeKey.of(client);
      try (ServerSocket silent = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
        List<String> first = new ArrayList<>(List.of(client.toString(), "-addr", "127.0.0.1:" + silent.getLocalPort()));
        first.addAll(clientFlags);
        Process waiting = new ProcessBuilder(first).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try (Socket held = silent.accept()) {
          await(() -> attached(tracer, clientKey).isPresent(), Duration.ofSeconds(30), "route_guide_client's binary attached");
        } finally {
          waiting.destroy();
          waiting.waitFor();
        }
      }
      await(() -> attached(tracer, clientKey).map(TracedBinary::lingering).orElse(false), Duration.ofSeconds(10),
          "route_guide_client's binary lingering");

      List<Long> runs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        List<String> c = new ArrayList<>(List.of(client.toString(), "-addr", "localhost:" + port));
        c.addAll(clientFlags);
        Process p = new ProcessBuilder(c).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(p.waitFor()).as("route_guide_client exit status").isZero();
        runs.add(p.pid());
      }
      await(() -> runs.stream().allMatch(pid -> clientSpans(spans, pid).size() == METHODS.size()
              && clientSpans(spans, pid).stream().allMatch(s -> serverOf(spans, s).isPresent())),
          Duration.ofSeconds(30), "five client spans per run, each linked to a server span; got "
              + spans.getFinishedSpanItems().stream().map(s -> s.getKind() + " " + s.getName() + " pid "
                  + s.getResource().getAttribute(PID) + " parent " + s.getParentSpanId() + " " + s.getAttributes()).toList());
      for (long pid : runs) {
        List<SpanData> calls = clientSpans(spans, pid);
        assertThat(calls).extracting(SpanData::getName).as("run %d", pid).containsExactlyInAnyOrderElementsOf(METHODS);
        for (SpanData c : calls) {
          SpanData s = serverOf(spans, c).orElseThrow();
          assertThat(s.getResource().getAttribute(PID)).isEqualTo(srvPid);
          assertThat(c.getAttributes().get(STATUS)).as("%s client status", c.getName()).isEqualTo("OK");
          assertThat(s.getAttributes().get(STATUS)).as("%s server status", s.getName()).isEqualTo("OK");
          assertThat(c.getAttributes().get(PEER_PORT)).isEqualTo((long) port);
          assertThat(s.getAttributes().get(PEER)).isNotNull();
          assertThat(c.getAttributes().get(UNIDENTIFIED)).isNull();
          assertThat(s.getAttributes().get(UNIDENTIFIED)).isNull();
        }
      }
      System.out.printf("route_guide %s: 3 runs, %d client spans, each linked to its server span; a client span: %s%n",
          dir.getFileName(), runs.size() * METHODS.size(), clientSpans(spans, runs.get(0)).get(0).getAttributes());
    } finally {
      if (srv != null) {
        srv.destroy();
        srv.waitFor();
      }
    }
  }

  static boolean listening(int port) {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  static List<SpanData> clientSpans(InMemorySpanExporter spans, long pid) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getKind() == SpanKind.CLIENT && Long.valueOf(pid).equals(s.getResource().getAttribute(PID)))
        .toList();
  }

  static Optional<SpanData> serverOf(InMemorySpanExporter spans, SpanData client) {
    return ShortLivedClientIT.serverOf(spans, client);
  }
}
