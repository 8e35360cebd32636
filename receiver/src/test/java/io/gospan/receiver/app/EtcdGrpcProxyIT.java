package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.testing.DebianPackages;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * In-process propagation on a middle tier nobody here wrote: Debian's etcd 3.4 (a stripped GOPATH
 * build) run as {@code etcd grpc-proxy}, which serves etcd's KV API and, in each handler, calls the
 * etcd server with the handler's {@code ctx} (etcd server/proxy/grpcproxy/kv.go). etcdctl → proxy →
 * etcd: every call the proxy makes for a served call must be that server span's child, in its trace,
 * found by the ctx walk (a stripped binary has no goroutine id offset).
 */
class EtcdGrpcProxyIT {
  /** etcd's data directories (64 MB of write-ahead log each) and logs; JUnit deletes it after each test. */
  @TempDir Path tmp;

  static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");
  static final AttributeKey<String> STATUS = AttributeKey.stringKey("rpc.response.status_code");
  static final int CALLS = 10;

  @Test
  void callsTheProxyMakesWhileServingAreChildrenOfItsServerSpans() throws Exception {
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    Path etcd = debian.bin("etcd");
    Path etcdctl = debian.bin("etcdctl");
    Path data = Files.createTempDirectory(tmp, "gospan-etcd-proxy");
    int client = DebianEtcdIT.freePort();
    int peer = DebianEtcdIT.freePort();
    int proxyPort = DebianEtcdIT.freePort();
    String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + etcd.getParent() + "/etcd*\"\n"
        + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    List<Process> servers = new ArrayList<>();
    try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
        .spanExporter(spans).telemetryServer(false).start()) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      startEtcdAndProxy(etcd, data, client, peer, proxyPort, servers);
      Process server = servers.get(0);
      Process proxy = servers.get(1);
      long proxyPid = proxy.pid();
      ShortLivedClientIT.await(() -> tracer.isTraced((int) server.pid()) && tracer.isTraced((int) proxyPid),
          Duration.ofSeconds(30), "etcd and its grpc-proxy traced");
      for (int port : List.of(client, proxyPort)) {
        ShortLivedClientIT.await(() -> listening(port), Duration.ofSeconds(30), "listening on " + port);
      }
      // etcdctl lives ~15 ms: a long-running watch makes gospan attach its binary, which then lingers
      ExeKey ctlKey = ExeKey.of(etcdctl);
      Process watch = DebianEtcdIT.etcdctl(etcdctl, proxyPort, "watch", "gospan-never");
      try {
        ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, ctlKey).isPresent(), Duration.ofSeconds(30),
            "etcdctl's binary attached");
      } finally {
        watch.destroy();
        watch.waitFor();
      }
      spans.reset();

      for (int i = 0; i < CALLS / 2; i++) {
        Process put = DebianEtcdIT.etcdctl(etcdctl, proxyPort, "put", "gospan", "proxy-" + i);
        assertThat(put.waitFor()).as("etcdctl put through the proxy").isZero();
        Process get = DebianEtcdIT.etcdctl(etcdctl, proxyPort, "get", "gospan");
        assertThat(get.waitFor()).as("etcdctl get through the proxy").isZero();
      }
      ShortLivedClientIT.await(() -> proxySpans(spans, proxyPid, SpanKind.SERVER).size() >= CALLS
              && proxySpans(spans, proxyPid, SpanKind.CLIENT).size() >= CALLS,
          Duration.ofSeconds(20), "the proxy's server and client spans; got " + spans.getFinishedSpanItems().size());

      List<SpanData> served = proxySpans(spans, proxyPid, SpanKind.SERVER);
      List<SpanData> made = proxySpans(spans, proxyPid, SpanKind.CLIENT);
      int linked = 0;
      for (SpanData s : served) {
        assertThat(s.getAttributes().get(STATUS)).as("proxy server span %s", s).isEqualTo("OK");
        List<SpanData> children = made.stream().filter(c -> c.getParentSpanId().equals(s.getSpanId())).toList();
        assertThat(children).as("calls the proxy made while serving %s", s.getName()).hasSize(1);
        SpanData child = children.get(0);
        assertThat(child.getName()).isEqualTo(s.getName());
        assertThat(child.getTraceId()).isEqualTo(s.getTraceId());
        assertThat(child.getStartEpochNanos()).isBetween(s.getStartEpochNanos(), s.getEndEpochNanos());
        linked++;
      }
      Optional<SpanData> etcdctlClient = spans.getFinishedSpanItems().stream()
          .filter(s -> s.getKind() == SpanKind.CLIENT && s.getResource().getAttribute(PID) != proxyPid
              && s.getParentSpanId().equals(io.opentelemetry.api.trace.SpanId.getInvalid()))
          .findFirst();
      System.out.printf("etcd grpc-proxy (Debian etcd, grpc-go %s, stripped): %d served calls, %d with their upstream call as a child;"
              + " etcdctl client spans seen: %s%n",
          debian.builtUsing("etcd-server", "golang-google-grpc").orElse("?"), served.size(), linked, etcdctlClient.isPresent());
    } finally {
      for (Process p : servers) {
        p.destroy();
        p.waitFor();
      }
    }
  }

  /**
   * Twenty etcdctl runs through the proxy with nothing to make gospan see etcdctl first: each run one
   * whole trace, etcdctl's client span → the proxy's server span → the proxy's client span → etcd's
   * server span, every parent exact; at least 19 of 20 without the hold (the first run ends before
   * gospan has looked; gospan learns etcdctl from its exec notice), 20 of 20 with {@code
   * discovery.hold_new_binaries}.
   */
  @Test
  void everyEtcdctlRunThroughTheProxyIsOneWholeTrace() throws Exception {
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    Path etcd = debian.bin("etcd");
    Path etcdctl = debian.bin("etcdctl");
    for (boolean hold : new boolean[] {false, true}) {
      Path data = Files.createTempDirectory(tmp, "gospan-etcd-proxy");
      int client = DebianEtcdIT.freePort();
      int peer = DebianEtcdIT.freePort();
      int proxyPort = DebianEtcdIT.freePort();
      String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + etcd.getParent() + "/etcd*\"\n"
          + "  hold_new_binaries: " + hold + "\n"
          + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
      InMemorySpanExporter spans = InMemorySpanExporter.create();
      List<Process> servers = new ArrayList<>();
      try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
          .spanExporter(spans).telemetryServer(false).start()) {
        Tracer tracer = gospan.sidecar().tracer();
        assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
        startEtcdAndProxy(etcd, data, client, peer, proxyPort, servers);
        Process server = servers.get(0);
        Process proxy = servers.get(1);
        long proxyPid = proxy.pid();
        long etcdPid = server.pid();
        ShortLivedClientIT.await(() -> tracer.isTraced((int) etcdPid) && tracer.isTraced((int) proxyPid),
            Duration.ofSeconds(30), "etcd and its grpc-proxy traced");
        for (int port : List.of(client, proxyPort)) {
          ShortLivedClientIT.await(() -> listening(port), Duration.ofSeconds(30), "listening on " + port);
        }
        ExeKey ctlKey = ExeKey.of(etcdctl);
        assertThat(ShortLivedClientIT.attached(tracer, ctlKey)).as("etcdctl is new to this gospan").isEmpty();
        List<Long> runs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          Process put = DebianEtcdIT.etcdctl(etcdctl, proxyPort, "put", "gospan", "run-" + i);
          assertThat(put.waitFor()).as("etcdctl put through the proxy").isZero();
          runs.add(put.pid());
          if (i == 0 && !hold) {
            ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, ctlKey).isPresent(), Duration.ofSeconds(10),
                "etcdctl learned from its exec");
          }
        }
        int want = hold ? 20 : 19;
        ShortLivedClientIT.await(() -> wholeTraces(spans, runs, proxyPid, etcdPid) >= want, Duration.ofSeconds(30),
            want + " whole traces of 20 runs; got " + wholeTraces(spans, runs, proxyPid, etcdPid));
        Thread.sleep(2500);
        int whole = wholeTraces(spans, runs, proxyPid, etcdPid);
        System.out.printf("etcdctl -> grpc-proxy -> etcd (Debian), %s: %d of 20 runs whole traces%s%n",
            hold ? "discovery.hold_new_binaries" : "default", whole,
            hold ? ", held " + gospan.sidecar().hold().map(h -> h.held() + " exec(s), " + h.heldNanos() / 1_000_000 + " ms in all").orElse("") : "");
        assertThat(whole).isGreaterThanOrEqualTo(want);
      } finally {
        for (Process p : servers) {
          p.destroy();
          p.waitFor();
        }
        try (var files = Files.walk(data)) {
          files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }

  /**
   * How many of the etcdctl runs {@code runs} are one whole trace: the run's client span (Put), the
   * proxy's server span its child, the proxy's client span that one's child, etcd's server span its child.
   */
  static int wholeTraces(InMemorySpanExporter spans, List<Long> runs, long proxyPid, long etcdPid) {
    List<SpanData> all = spans.getFinishedSpanItems();
    int whole = 0;
    for (long run : runs) {
      Optional<SpanData> c = all.stream().filter(s -> s.getKind() == SpanKind.CLIENT && Long.valueOf(run).equals(s.getResource().getAttribute(PID))
          && s.getName().equals("etcdserverpb.KV/Put")).findFirst();
      Optional<SpanData> ps = c.flatMap(x -> childOf(all, x, SpanKind.SERVER, proxyPid));
      Optional<SpanData> pc = ps.flatMap(x -> childOf(all, x, SpanKind.CLIENT, proxyPid));
      Optional<SpanData> es = pc.flatMap(x -> childOf(all, x, SpanKind.SERVER, etcdPid));
      if (es.isPresent()) {
        whole++;
      }
    }
    return whole;
  }

  static Optional<SpanData> childOf(List<SpanData> all, SpanData parent, SpanKind kind, long pid) {
    return all.stream().filter(s -> s.getKind() == kind && Long.valueOf(pid).equals(s.getResource().getAttribute(PID))
        && s.getTraceId().equals(parent.getTraceId()) && s.getParentSpanId().equals(parent.getSpanId())
        && s.getName().equals(parent.getName())).findFirst();
  }

  static boolean listening(int port) {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** The proxy's spans of the KV API (its own background calls, e.g. watch or lease, are left out). */
  static List<SpanData> proxySpans(InMemorySpanExporter spans, long proxyPid, SpanKind kind) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getKind() == kind && Long.valueOf(proxyPid).equals(s.getResource().getAttribute(PID))
            && (s.getName().equals("etcdserverpb.KV/Put") || s.getName().equals("etcdserverpb.KV/Range")))
        .toList();
  }

  /**
   * Starts Debian's etcd on {@code client}/{@code peer} and its grpc-proxy on {@code proxyPort} in
   * front of it, logs under {@code data}; adds both to {@code servers} (etcd first), which the
   * caller stops.
   */
  static void startEtcdAndProxy(Path etcd, Path data, int client, int peer, int proxyPort, List<Process> servers)
      throws IOException {
    Process server = new ProcessBuilder(etcd.toString(), "--name", "t", "--data-dir", data.resolve("server").toString(),
        "--listen-client-urls", "http://127.0.0.1:" + client, "--advertise-client-urls", "http://127.0.0.1:" + client,
        "--listen-peer-urls", "http://127.0.0.1:" + peer, "--initial-advertise-peer-urls", "http://127.0.0.1:" + peer,
        "--initial-cluster", "t=http://127.0.0.1:" + peer)
        .redirectErrorStream(true).redirectOutput(data.resolve("etcd.log").toFile()).start();
    servers.add(server);
    Process proxy = new ProcessBuilder(etcd.toString(), "grpc-proxy", "start", "--endpoints", "127.0.0.1:" + client,
        "--listen-addr", "127.0.0.1:" + proxyPort, "--data-dir", data.resolve("proxy").toString())
        .redirectErrorStream(true).redirectOutput(data.resolve("proxy.log").toFile()).start();
    servers.add(proxy);
  }
}
