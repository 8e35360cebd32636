package io.gospan.receiver.export;

import io.gospan.receiver.app.PipelineBuilder;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileAndConsoleExporterTest {

  @Test
  void fileExporterWritesCollectorStyleOtlpJsonLines(@TempDir Path dir) throws Exception {
    Path spans = dir.resolve("out/spans.jsonl");
    Path metrics = dir.resolve("out/metrics.jsonl");
    GospanConfig config =
        ConfigLoader.parse(
            """
            exporter:
              type: file
              file: {path: "%s", metrics_path: "%s"}
              batch: {schedule_delay: 50ms}
            telemetry: {http: {enabled: false}}
            """
                .formatted(spans, metrics),
            "test",
            Map.of());
    try (Pipeline p = PipelineBuilder.create(config).processMetadata(new FakeMetadata()).build()) {
      Events conn = new Events(40000);
      long t0 = p.clock().monotonicNow();
      p.accept(conn.clientStart(1, t0));
      p.accept(conn.serverStart(1, t0 + 1_000));
      p.accept(conn.serverTrailersOnly(1, t0 + 2_000, 0, null));
      p.accept(conn.clientTrailersOnly(1, t0 + 3_000, 0, null));
    } // close flushes
    List<String> lines = Files.readAllLines(spans);
    assertThat(lines).isNotEmpty();
    ObjectMapper json = new ObjectMapper();
    int count = 0;
    for (String line : lines) {
      JsonNode root = json.readTree(line);
      for (JsonNode rs : root.get("resourceSpans")) {
        assertThat(rs.get("resource").get("attributes").toString()).contains("service.name");
        for (JsonNode ss : rs.get("scopeSpans")) {
          for (JsonNode s : ss.get("spans")) {
            assertThat(s.get("name").asText()).isEqualTo("helloworld.Greeter/SayHello");
            assertThat(s.get("traceId").asText()).hasSize(32);
            count++;
          }
        }
      }
    }
    assertThat(count).isEqualTo(2);
    String m = Files.readString(metrics);
    assertThat(m).contains("resourceMetrics").contains("rpc.server.call.duration");
  }

  @Test
  void consoleExporterPrintsOneLinePerSpan() throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    List<io.gospan.receiver.span.FinishedSpan> finished = clientCall(5, "not%20found");
    ConsoleSpanExporter exporter = ConsoleSpanExporter.create(new PrintStream(buf, true, StandardCharsets.UTF_8));
    exporter.export(finished.stream().map(f -> f.span()).toList());
    String out = buf.toString(StandardCharsets.UTF_8);
    assertThat(out.lines()).hasSize(1);
    assertThat(out)
        .contains("CLIENT helloworld.Greeter/SayHello 2.500ms NOT_FOUND ERROR(\"not found\")")
        .contains("service=svc-100")
        .contains("parent=-")
        .contains("network.peer.address=10.0.0.2");
  }

  @Test
  void exporterConsoleTrueAlsoPrintsWhateverTheType() throws Exception {
    List<io.gospan.receiver.span.FinishedSpan> finished = clientCall(0, null);
    PrintStream stdout = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try {
      var cfg = io.gospan.receiver.config.ConfigLoader.parse("exporter: {type: none, console: true}", "t", java.util.Map.of());
      Exporters.spanExporter(cfg.exporter()).export(finished.stream().map(f -> f.span()).toList()).join(5, java.util.concurrent.TimeUnit.SECONDS);
      var off = io.gospan.receiver.config.ConfigLoader.parse("exporter: {type: none}", "t", java.util.Map.of());
      Exporters.spanExporter(off.exporter()).export(finished.stream().map(f -> f.span()).toList()).join(5, java.util.concurrent.TimeUnit.SECONDS);
    } finally {
      System.setOut(stdout);
    }
    assertThat(buf.toString(StandardCharsets.UTF_8).lines()).hasSize(1).allMatch(l -> l.contains("CLIENT helloworld.Greeter/SayHello"));
  }

  /** One trailers-only client call of 2.5 ms, assembled into a span. */
  static List<io.gospan.receiver.span.FinishedSpan> clientCall(int grpcStatus, String message) {
    List<io.gospan.receiver.span.FinishedSpan> finished = new java.util.ArrayList<>();
    var assembler =
        new io.gospan.receiver.span.SpanAssembler(
            PipelineBuilder.assemblerSettings(io.gospan.receiver.config.GospanConfig.defaults()),
            io.gospan.receiver.span.MonotonicClock.fixed(1_790_000_000_000_000_000L),
            new FakeMetadata(),
            io.opentelemetry.api.metrics.MeterProvider.noop().get("test"),
            finished::add,
            io.opentelemetry.sdk.trace.IdGenerator.random());
    Events conn = new Events(40000);
    assembler.accept(conn.clientStart(1, 1_000_000_000L));
    assembler.accept(conn.clientTrailersOnly(1, 1_002_500_000L, grpcStatus, message));
    return finished;
  }
}
