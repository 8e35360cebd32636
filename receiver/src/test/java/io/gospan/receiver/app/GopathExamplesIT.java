package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.discovery.TracedBinary;
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
 * The example greeter server and client built in GOPATH mode and stripped (no module information,
 * no DWARF; offsets/src/test/go/fixtures/build-gopath-examples.sh), traced with real BPF: the client's
 * grpc-go release comes from its user agent, the server's from its struct layouts; every call gives a
 * client span and a server span, linked by socket, with the status codes.
 */
class GopathExamplesIT {
  static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");
  static final AttributeKey<String> STATUS = AttributeKey.stringKey("rpc.response.status_code");

  static Path build() {
    Path out = ExampleApps.repoRoot().resolve("receiver/target/go-fixtures/gopath-examples");
    String printed = ExampleApps.run(List.of(
        ExampleApps.repoRoot().resolve("offsets/src/test/go/fixtures/build-gopath-examples.sh").toString(), out.toString(), "v1.60.1"), 1200);
    String[] lines = printed.strip().split("\n");
    return Path.of(lines[lines.length - 1].strip()).resolve("stripped");
  }

  @Test
  void strippedGopathServerAndClientGiveLinkedSpans() throws Exception {
    Path dir = build();
    String yaml = "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/*\"\n"
        + "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n";
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    try (GospanSidecar gospan = GospanSidecar.builder(ConfigLoader.parse(yaml, "test", Map.of()))
            .spanExporter(spans).telemetryServer(false).start();
        ExampleApps.Server server = ExampleApps.startServer(dir)) {
      Tracer tracer = gospan.sidecar().tracer();
      assertThat(gospan.sidecar().awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      ShortLivedClientIT.await(() -> tracer.isTraced((int) server.pid()), Duration.ofSeconds(30), "the GOPATH server traced");
      TracedBinary sb = tracer.traced().get((int) server.pid());
      assertThat(sb.grpcVersion()).as("a range of releases from struct layouts").contains(" … ");
      // the client makes its calls 250 ms apart: gospan attaches its binary while it runs
      ExampleApps.runClient(dir, server.address(), "-n", "8", "-rate", "4");
      ShortLivedClientIT.await(() -> spans.getFinishedSpanItems().stream()
              .filter(s -> s.getKind() == SpanKind.CLIENT && s.getParentSpanId() != null)
              .anyMatch(c -> ShortLivedClientIT.serverOf(spans, c).isPresent()),
          Duration.ofSeconds(20), "a client span linked to its server span; got " + spans.getFinishedSpanItems().stream()
              .map(s -> s.getKind() + " " + s.getName() + " " + s.getAttributes().get(STATUS)).toList());
      List<SpanData> linked = spans.getFinishedSpanItems().stream()
          .filter(s -> s.getKind() == SpanKind.CLIENT && ShortLivedClientIT.serverOf(spans, s).isPresent()).toList();
      for (SpanData c : linked) {
        SpanData s = ShortLivedClientIT.serverOf(spans, c).orElseThrow();
        assertThat(s.getResource().getAttribute(PID)).isEqualTo(server.pid());
        assertThat(s.getName()).isEqualTo(c.getName());
        assertThat(s.getAttributes().get(STATUS)).as("%s", s.getAttributes()).isEqualTo(c.getAttributes().get(STATUS)).isNotNull();
      }
      System.out.printf("GOPATH stripped examples: server grpc-go %s, %d client spans linked to their server spans (of %d spans)%n",
          sb.grpcVersion(), linked.size(), spans.getFinishedSpanItems().size());
    }
  }
}
