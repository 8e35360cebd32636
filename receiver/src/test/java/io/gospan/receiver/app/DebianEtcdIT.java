package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.testing.DebianPackages;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Debian's etcd and etcdctl (GOPATH builds, stripped: no module versions, no DWARF), traced with
 * real BPF from offsets inferred from grpc-go's user agent: etcd serves {@code etcdctl put}, {@code get}
 * and a {@code lease revoke} of no lease (NOT_FOUND) over loopback, and gospan exports etcd's server spans
 * and etcdctl's client spans, with the status codes. etcd 3.4 serves gRPC through cmux
 * (github.com/soheilhy/cmux), whose {@code MuxConn} wraps the accepted connection: found in etcd's runtime
 * type information and unwrapped, so every client span is linked to its server span by socket.
 */
class DebianEtcdIT {
  /** etcd's data directories (64 MB of write-ahead log each) and logs; JUnit deletes it after each test. */
  @TempDir Path tmp;

  static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");
  static final AttributeKey<String> STATUS = AttributeKey.stringKey("rpc.response.status_code");

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static List<SpanData> spans(InMemorySpanExporter spans, SpanKind kind, long pid, String name) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getKind() == kind && Long.valueOf(pid).equals(s.getResource().getAttribute(PID)) && s.getName().equals(name))
        .toList();
  }

  static Process etcdctl(Path bin, int port, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(bin.toString(), "--endpoints", "127.0.0.1:" + port));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
    pb.environment().put("ETCDCTL_API", "3");
    return pb.start();
  }

  @Test
  void debianEtcdServerSpansAndEtcdctlClientSpans() throws Exception {
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    Path etcd = debian.bin("etcd");
    Path etcdctl = debian.bin("etcdctl");
    Path data = Files.createTempDirectory(tmp, "gospan-etcd");
    int client = freePort();
    int peer = freePort();
    String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + etcd.getParent() + "/etcd*\"\n"
        + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    Process server = null;
    try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
        .spanExporter(spans).telemetryServer(false).start()) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      server = new ProcessBuilder(etcd.toString(), "--name", "t", "--data-dir", data.toString(),
          "--listen-client-urls", "http://127.0.0.1:" + client, "--advertise-client-urls", "http://127.0.0.1:" + client,
          "--listen-peer-urls", "http://127.0.0.1:" + peer, "--initial-advertise-peer-urls", "http://127.0.0.1:" + peer,
          "--initial-cluster", "t=http://127.0.0.1:" + peer)
          .redirectErrorStream(true).redirectOutput(data.resolve("etcd.log").toFile()).start();
      long etcdPid = server.pid();
      ShortLivedClientIT.await(() -> tracer.isTraced((int) etcdPid), Duration.ofSeconds(30), "etcd traced");
      TracedBinary traced = tracer.traced().get((int) etcdPid);
      assertThat(traced.grpcVersion()).isEqualTo("v" + debian.builtUsing("etcd-server", "golang-google-grpc").orElseThrow());
      ShortLivedClientIT.await(() -> {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), client)) {
          return true;
        } catch (IOException e) {
          return false;
        }
      }, Duration.ofSeconds(30), "etcd listening");

      // etcdctl lives ~15 ms: a long-running `watch` makes gospan attach its binary, which then lingers
      ExeKey ctlKey = ExeKey.of(etcdctl);
      Process watch = etcdctl(etcdctl, client, "watch", "gospan-never");
      try {
        ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, ctlKey).isPresent(), Duration.ofSeconds(30),
            "etcdctl's binary attached");
      } finally {
        watch.destroy();
        watch.waitFor();
      }
      ShortLivedClientIT.await(() -> ShortLivedClientIT.attached(tracer, ctlKey).map(TracedBinary::lingering).orElse(false),
          Duration.ofSeconds(10), "etcdctl's binary lingering");

      // etcd's connections are cmux's MuxConn around the accepted *net.TCPConn (what gospan run inspected)
      io.gospan.receiver.discovery.BinaryInspection inspection =
          io.gospan.receiver.discovery.BinaryInspection.inspect(etcd, io.gospan.offsets.resolve.Preference.DWARF);
      assertThat(inspection.layout().connTypes().netConn("*github.com/soheilhy/cmux.MuxConn"))
          .as("etcd's connection types: %s", inspection.layout().connTypes().entries())
          .hasValueSatisfying(e -> assertThat(e.kind()).isEqualTo(io.gospan.offsets.resolve.ConnKind.INTERFACE));
      assertThat(inspection.socketLinking()).as(inspection.socketLinkingVerdict()).isTrue();

      // three puts and gets, each its own short-lived etcdctl: each gives a client span, and etcd a server span
      List<Long> puts = new ArrayList<>();
      List<Long> gets = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        Process put = etcdctl(etcdctl, client, "put", "gospan", "debian-" + i);
        assertThat(put.waitFor()).as("etcdctl put").isZero();
        puts.add(put.pid());
        Process get = etcdctl(etcdctl, client, "get", "gospan");
        assertThat(get.waitFor()).as("etcdctl get").isZero();
        gets.add(get.pid());
      }
      // a lease that does not exist: etcd answers NOT_FOUND ("etcdserver: requested lease not found")
      Process revoke = etcdctl(etcdctl, client, "lease", "revoke", "7b");
      assertThat(revoke.waitFor()).as("etcdctl lease revoke of no lease").isNotZero();
      long revokePid = revoke.pid();
      ShortLivedClientIT.await(() -> puts.stream().allMatch(p -> spans(spans, SpanKind.CLIENT, p, "etcdserverpb.KV/Put").size() == 1)
              && gets.stream().allMatch(p -> spans(spans, SpanKind.CLIENT, p, "etcdserverpb.KV/Range").size() == 1)
              && spans(spans, SpanKind.CLIENT, revokePid, "etcdserverpb.Lease/LeaseRevoke").size() == 1
              && spans(spans, SpanKind.SERVER, etcdPid, "etcdserverpb.KV/Put").size() >= 3
              && spans(spans, SpanKind.SERVER, etcdPid, "etcdserverpb.KV/Range").size() >= 3
              && spans(spans, SpanKind.SERVER, etcdPid, "etcdserverpb.Lease/LeaseRevoke").size() == 1,
          Duration.ofSeconds(20), "etcdctl's client spans and etcd's server spans; got "
              + spans.getFinishedSpanItems().stream().map(s -> s.getKind() + " " + s.getName() + " pid "
                  + s.getResource().getAttribute(PID)).toList());
      List<SpanData> serverSpans = new ArrayList<>(spans(spans, SpanKind.SERVER, etcdPid, "etcdserverpb.KV/Put"));
      serverSpans.addAll(spans(spans, SpanKind.SERVER, etcdPid, "etcdserverpb.KV/Range"));
      for (SpanData s : serverSpans) {
        assertThat(s.getAttributes().get(STATUS)).as("%s %s status: %s", s.getKind(), s.getName(), s.getAttributes()).isEqualTo("OK");
      }
      // every client span complete, status OK: etcdctl exits ~1 ms after its call, and its exit is handled
      // only after the ring buffer is drained (a race seen before: gospan.incomplete.reason=process_exited)
      List<SpanData> clientSpans = new ArrayList<>();
      puts.forEach(p -> clientSpans.addAll(spans(spans, SpanKind.CLIENT, p, "etcdserverpb.KV/Put")));
      gets.forEach(p -> clientSpans.addAll(spans(spans, SpanKind.CLIENT, p, "etcdserverpb.KV/Range")));
      for (SpanData s : clientSpans) {
        assertThat(s.getAttributes().get(STATUS)).as("%s %s status: %s", s.getKind(), s.getName(), s.getAttributes()).isEqualTo("OK");
      }
      long incomplete = clientSpans.stream().filter(s -> s.getAttributes().get(STATUS) == null).count();
      // every client span is the parent of one of etcd's server spans: linked by socket through cmux
      for (SpanData c : clientSpans) {
        assertThat(ShortLivedClientIT.serverOf(spans, c)).as("the server span of %s %s", c.getName(), c.getAttributes())
            .hasValueSatisfying(srv -> assertThat(srv.getResource().getAttribute(PID)).isEqualTo(etcdPid));
      }
      for (SpanData s : serverSpans) {
        assertThat(s.getAttributes().get(AttributeKey.stringKey("network.peer.address"))).isEqualTo("127.0.0.1");
        assertThat(s.getAttributes().get(AttributeKey.stringKey("gospan.connection.unidentified"))).isNull();
      }
      SpanData revokeClient = spans(spans, SpanKind.CLIENT, revokePid, "etcdserverpb.Lease/LeaseRevoke").get(0);
      SpanData revokeServer = spans(spans, SpanKind.SERVER, etcdPid, "etcdserverpb.Lease/LeaseRevoke").get(0);
      assertThat(revokeClient.getAttributes().get(STATUS)).isEqualTo("NOT_FOUND");
      assertThat(revokeClient.getStatus().getStatusCode()).isEqualTo(io.opentelemetry.api.trace.StatusCode.ERROR);
      assertThat(revokeServer.getAttributes().get(STATUS)).isEqualTo("NOT_FOUND");
      assertThat(revokeServer.getParentSpanId()).isEqualTo(revokeClient.getSpanId());
      System.out.printf("Debian etcd %s: %d server spans, %d etcdctl client spans (%d incomplete), each linked to its server"
          + " span through cmux; attributes of a Put server span: %s%n",
          traced.grpcVersion(), serverSpans.size(), clientSpans.size(), incomplete, serverSpans.get(0).getAttributes());
    } finally {
      if (server != null) {
        server.destroy();
        server.waitFor();
      }
    }
  }
}
