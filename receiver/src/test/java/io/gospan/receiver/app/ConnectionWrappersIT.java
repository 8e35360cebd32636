package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.testing.ExampleApps;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Connections wrapped the ways real programs wrap them, traced with real BPF: the offsets fixture
 * (offsets/src/test/go/fixtures/grpcapp) serves each connection it accepts through one of four wrappers in
 * turn (a wrapper of a net.Conn around a wrapper holding a pointer to the *net.TCPConn; a one-pointer struct
 * stored in the interface's data word; a struct holding the net.TCPConn by value; a wrapper of the
 * *net.TCPConn), and calls itself over 8 connections. Every server span finds its socket through the
 * binary's connection types (interface, pointer and direct hops in the BPF walk) and is linked to its client
 * span; the unstripped build (DWARF) and the stripped one (catalog, runtime type information) alike.
 */
class ConnectionWrappersIT {
  static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");
  static final AttributeKey<String> PEER = AttributeKey.stringKey("network.peer.address");
  static final AttributeKey<String> UNIDENTIFIED = AttributeKey.stringKey("gospan.connection.unidentified");
  static final int CALLS = 8;

  static Path fixture() {
    Path out = ExampleApps.repoRoot().resolve("receiver/target/go-fixtures/grpcapp-go1.26.8-grpc1.85.0");
    ExampleApps.run(List.of(ExampleApps.repoRoot().resolve("offsets/src/test/go/fixtures/build-fixture.sh").toString(),
        "1.26.8", "v1.85.0", out.toString()), 900);
    return out;
  }

  @Test
  void everyWrappedServerConnectionIsFollowedToItsSocketAndLinked() throws Exception {
    Path dir = fixture();
    for (String binary : List.of("app", "app.stripped")) {
      Path app = dir.resolve(binary);
      String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + app + "\"\n"
          + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
      InMemorySpanExporter spans = InMemorySpanExporter.create();
      try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
          .spanExporter(spans).telemetryServer(false).start()) {
        Tracer tracer = gospan.sidecar().tracer();
        assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
        Process p = new ProcessBuilder(app.toString(), "-calls", Integer.toString(CALLS), "-wait", "3s")
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long pid = p.pid();
        ShortLivedClientIT.await(() -> tracer.isTraced((int) pid), Duration.ofSeconds(3), binary + " traced before its first call");
        assertThat(p.waitFor()).as(binary + " exit status").isZero();
        ShortLivedClientIT.await(() -> spans(spans, SpanKind.SERVER, pid).size() == CALLS
                && spans(spans, SpanKind.CLIENT, pid).size() == CALLS
                && spans(spans, SpanKind.CLIENT, pid).stream().allMatch(c -> ShortLivedClientIT.serverOf(spans, c).isPresent()),
            Duration.ofSeconds(20), binary + ": " + CALLS + " client spans, each linked to its server span; got "
                + spans.getFinishedSpanItems().stream().map(s -> s.getKind() + " " + s.getParentSpanId() + " " + s.getAttributes()).toList());
        for (SpanData s : spans(spans, SpanKind.SERVER, pid)) {
          assertThat(s.getAttributes().get(PEER)).as("%s server span %s", binary, s.getAttributes()).isEqualTo("127.0.0.1");
          assertThat(s.getAttributes().get(UNIDENTIFIED)).isNull();
          assertThat(s.getName()).isEqualTo("grpc.health.v1.Health/Check");
        }
      }
    }
  }

  static List<SpanData> spans(InMemorySpanExporter spans, SpanKind kind, long pid) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getKind() == kind && Long.valueOf(pid).equals(s.getResource().getAttribute(PID)))
        .toList();
  }
}
