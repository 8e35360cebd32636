package io.gospan.receiver.app;

import static io.gospan.receiver.app.DebianEtcdIT.spans;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.testing.DebianPackages;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Debian's containerd and ctr (GOPATH builds, stripped, grpc-go 1.33.3 inferred from its user agent) over a
 * unix domain socket, with real BPF: containerd serves {@code ctr version} (Version, Introspection) and a
 * {@code ctr containers info} of a container that does not exist (NOT_FOUND); every ctr run is a short-lived
 * process. The probes identify each end of the unix socket by its inode and its peer's, so every ctr client
 * span is linked to containerd's server span, both carry {@code network.transport=unix} and the socket's
 * path (the client as {@code network.peer.address}, the server as {@code network.local.address}), and the
 * status codes.
 */
class DebianContainerdIT {
  static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");
  static final AttributeKey<String> STATUS = AttributeKey.stringKey("rpc.response.status_code");
  static final AttributeKey<String> TRANSPORT = AttributeKey.stringKey("network.transport");
  static final AttributeKey<String> PEER = AttributeKey.stringKey("network.peer.address");
  static final AttributeKey<String> LOCAL = AttributeKey.stringKey("network.local.address");

  static Process ctr(Path bin, Path socket, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(bin.toString(), "--address", socket.toString()));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
  }

  @Test
  void ctrClientSpansAreLinkedToContainerdServerSpansOverAUnixSocket() throws Exception {
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    Path containerd = debian.bin("containerd");
    Path ctr = debian.bin("ctr");
    Path dir = Files.createTempDirectory("gospan-ctrd");
    Path socket = dir.resolve("containerd.sock");
    // containerd with its own root, state and socket, without the CRI plugin (no Kubernetes here)
    Files.writeString(dir.resolve("config.toml"), "version = 2\nroot = \"" + dir.resolve("root") + "\"\nstate = \""
        + dir.resolve("state") + "\"\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = \"" + socket
        + "\"\n[ttrpc]\n  address = \"" + socket + ".ttrpc\"\n[debug]\n  address = \"\"\n[metrics]\n  address = \"\"\n");
    String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + containerd + "\"\n    - exe_path: \"" + ctr + "\"\n"
        + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    Process server = null;
    try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
        .spanExporter(spans).telemetryServer(false).start()) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      server = new ProcessBuilder(containerd.toString(), "--config", dir.resolve("config.toml").toString())
          .redirectErrorStream(true).redirectOutput(dir.resolve("containerd.log").toFile()).start();
      long serverPid = server.pid();
      ShortLivedClientIT.await(() -> tracer.isTraced((int) serverPid), Duration.ofSeconds(30), "containerd traced");
      TracedBinary traced = tracer.traced().get((int) serverPid);
      assertThat(traced.grpcVersion()).isEqualTo("v" + debian.builtUsing("containerd", "golang-google-grpc").orElseThrow());
      ShortLivedClientIT.await(() -> Files.exists(socket), Duration.ofSeconds(30), "containerd's socket");

      // ctr lives ~20 ms: a long-running `ctr events` makes gospan attach its binary, which then lingers
      ExeKey ctrKey = ExeKey.of(ctr);
      Process events = ctr(ctr, socket, "events");
      try {
        ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, ctrKey).isPresent(), Duration.ofSeconds(30),
            "ctr's binary attached");
      } finally {
        events.destroy();
        events.waitFor();
      }
      ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, ctrKey).map(TracedBinary::lingering).orElse(false),
          Duration.ofSeconds(10), "ctr's binary lingering");

      List<Long> versions = new ArrayList<>();
      List<Long> infos = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        Process v = ctr(ctr, socket, "version");
        assertThat(v.waitFor()).as("ctr version").isZero();
        versions.add(v.pid());
        Process info = ctr(ctr, socket, "containers", "info", "gospan-none");
        assertThat(info.waitFor()).as("ctr containers info of no container").isNotZero();
        infos.add(info.pid());
      }
      String version = "containerd.services.version.v1.Version/Version";
      String get = "containerd.services.containers.v1.Containers/Get";
      ShortLivedClientIT.await(() -> versions.stream().allMatch(p -> spans(spans, SpanKind.CLIENT, p, version).size() == 1)
              && infos.stream().allMatch(p -> spans(spans, SpanKind.CLIENT, p, get).size() == 1)
              && spans(spans, SpanKind.SERVER, serverPid, version).size() >= 3
              && spans(spans, SpanKind.SERVER, serverPid, get).size() >= 3,
          Duration.ofSeconds(20), "ctr's client spans and containerd's server spans; got "
              + spans.getFinishedSpanItems().stream().map(s -> s.getKind() + " " + s.getName() + " pid "
                  + s.getResource().getAttribute(PID)).toList());
      List<SpanData> clients = new ArrayList<>();
      versions.forEach(p -> clients.addAll(spans(spans, SpanKind.CLIENT, p, version)));
      infos.forEach(p -> clients.addAll(spans(spans, SpanKind.CLIENT, p, get)));
      for (SpanData c : clients) {
        SpanData s = ShortLivedClientIT.serverOf(spans, c).orElseThrow(
            () -> new AssertionError("no containerd server span is the child of " + c.getName() + " " + c.getAttributes()));
        assertThat(s.getResource().getAttribute(PID)).isEqualTo(serverPid);
        boolean found = c.getName().equals(get);
        assertThat(c.getAttributes().get(STATUS)).as("%s client", c.getName()).isEqualTo(found ? "NOT_FOUND" : "OK");
        assertThat(s.getAttributes().get(STATUS)).as("%s server", s.getName()).isEqualTo(found ? "NOT_FOUND" : "OK");
        assertThat(c.getStatus().getStatusCode()).isEqualTo(found ? StatusCode.ERROR : StatusCode.UNSET);
        assertThat(c.getAttributes().get(TRANSPORT)).isEqualTo("unix");
        assertThat(c.getAttributes().get(PEER)).isEqualTo(socket.toString());
        assertThat(s.getAttributes().get(TRANSPORT)).isEqualTo("unix");
        assertThat(s.getAttributes().get(LOCAL)).isEqualTo(socket.toString());
        assertThat(c.getResource().getAttribute(AttributeKey.stringKey("service.name"))).isEqualTo("ctr");
      }
      System.out.printf("Debian containerd %s over %s: %d ctr client spans, each linked to its containerd server span;"
          + " a NOT_FOUND client span: %s%n", traced.grpcVersion(), socket, clients.size(),
          spans(spans, SpanKind.CLIENT, infos.get(0), get).get(0).getAttributes());
    } finally {
      if (server != null) {
        server.destroy();
        server.waitFor();
      }
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /**
   * Ten ctr commands in a row with nothing to make gospan see ctr first: the first ends before gospan
   * has looked (ctr lives 20-100 ms), gospan learns ctr's binary from its exec notice, and every command
   * from the second on gives its client span, linked to containerd's server span; with {@code
   * discovery.hold_new_binaries}, from the first.
   */
  @Test
  void ctrCommandsAreTracedFromTheSecondAndWithTheHoldFromTheFirst() throws Exception {
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    Path containerd = debian.bin("containerd");
    Path ctr = debian.bin("ctr");
    for (boolean hold : new boolean[] {false, true}) {
      Path dir = Files.createTempDirectory("gospan-ctrd");
      Path socket = dir.resolve("containerd.sock");
      Files.writeString(dir.resolve("config.toml"), "version = 2\nroot = \"" + dir.resolve("root") + "\"\nstate = \""
          + dir.resolve("state") + "\"\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = \"" + socket
          + "\"\n[ttrpc]\n  address = \"" + socket + ".ttrpc\"\n[debug]\n  address = \"\"\n[metrics]\n  address = \"\"\n");
      String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + containerd + "\"\n    - exe_path: \"" + ctr + "\"\n"
          + "  hold_new_binaries: " + hold + "\n"
          + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
      InMemorySpanExporter spans = InMemorySpanExporter.create();
      Process server = null;
      try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
          .spanExporter(spans).telemetryServer(false).start()) {
        Tracer tracer = gospan.sidecar().tracer();
        assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
        assertThat(gospan.sidecar().hold().isPresent()).as("execs held").isEqualTo(hold);
        server = new ProcessBuilder(containerd.toString(), "--config", dir.resolve("config.toml").toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("containerd.log").toFile()).start();
        long serverPid = server.pid();
        ShortLivedClientIT.await(() -> tracer.isTraced((int) serverPid), Duration.ofSeconds(30), "containerd traced");
        ShortLivedClientIT.await(() -> Files.exists(socket), Duration.ofSeconds(30), "containerd's socket");
        ExeKey ctrKey = ExeKey.of(ctr);
        assertThat(ShortLivedClientIT.attached(tracer, ctrKey)).as("ctr is new to this gospan").isEmpty();

        String version = "containerd.services.version.v1.Version/Version";
        String get = "containerd.services.containers.v1.Containers/Get";
        List<Long> pids = new ArrayList<>();
        List<String> methods = new ArrayList<>();
        long learnedMillis = 0;
        for (int i = 0; i < 10; i++) {
          long t0 = System.nanoTime();
          boolean v = i % 2 == 0;
          Process c = v ? ctr(ctr, socket, "version") : ctr(ctr, socket, "containers", "info", "gospan-none");
          int exit = c.waitFor();
          assertThat(exit == 0).as("ctr exit status").isEqualTo(v);
          pids.add(c.pid());
          methods.add(v ? version : get);
          if (i == 0 && !hold) {
            ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, ctrKey).isPresent(), Duration.ofSeconds(10),
                "ctr learned from its exec");
            learnedMillis = (System.nanoTime() - t0) / 1_000_000;
          }
        }
        int from = hold ? 0 : 1;
        ShortLivedClientIT.await(() -> {
              for (int i = from; i < pids.size(); i++) {
                List<SpanData> c = spans(spans, SpanKind.CLIENT, pids.get(i), methods.get(i));
                if (c.size() != 1 || ShortLivedClientIT.serverOf(spans, c.get(0)).isEmpty()) {
                  return false;
                }
              }
              return true;
            }, Duration.ofSeconds(20), "a ctr client span linked to containerd's server span for commands " + (from + 1)
                + "-10; got " + pids.stream().map(p -> spans.getFinishedSpanItems().stream()
                    .filter(x -> x.getKind() == SpanKind.CLIENT && p.equals(x.getResource().getAttribute(PID))).count()).toList());
        for (int i = from; i < pids.size(); i++) {
          SpanData c = spans(spans, SpanKind.CLIENT, pids.get(i), methods.get(i)).get(0);
          SpanData s = ShortLivedClientIT.serverOf(spans, c).orElseThrow();
          assertThat(s.getResource().getAttribute(PID)).isEqualTo(serverPid);
          assertThat(c.getAttributes().get(TRANSPORT)).isEqualTo("unix");
          assertThat(c.getAttributes().get(STATUS)).isEqualTo(methods.get(i).equals(get) ? "NOT_FOUND" : "OK");
        }
        Thread.sleep(2500);
        System.out.printf("Debian ctr, %s: client spans per command %s%s%n", hold ? "discovery.hold_new_binaries" : "default",
            pids.stream().map(p -> spans.getFinishedSpanItems().stream()
                .filter(x -> x.getKind() == SpanKind.CLIENT && p.equals(x.getResource().getAttribute(PID))).count()).toList(),
            hold ? ", held " + gospan.sidecar().hold().map(h -> h.held() + " exec(s), " + h.heldNanos() / 1_000_000 + " ms in all").orElse("")
                : ", ctr learned " + learnedMillis + " ms after the first command began");
      } finally {
        if (server != null) {
          server.destroy();
          server.waitFor();
        }
        try (var files = Files.walk(dir)) {
          files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }
}
