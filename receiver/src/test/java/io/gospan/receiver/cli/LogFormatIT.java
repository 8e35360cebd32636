package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.SidecarProcess;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a user reads when the collector is down: the gospan jar, run as a separate process
 * exporting spans and metrics to a port where nothing listens, traces the example server and
 * client. Every line it prints (its own, the OpenTelemetry exporters', grpc-java's, routed from
 * {@code java.util.logging}) starts with a timestamp, a thread and a level; none is a Java stack
 * frame; the exporters' failures are one line each, throttled.
 */
class LogFormatIT {

  /** {@code 2026-11-24T07:10:27.998Z [thread] LEVEL logger - message} (simplelogger.properties). */
  static final Pattern LINE = Pattern.compile(
      "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}(Z|[+-]\\d{2}:\\d{2}) \\[[^\\]]+\\] (TRACE|DEBUG|INFO|WARN|ERROR) \\S+ - .*");

  @ParameterizedTest
  @ValueSource(strings = {"grpc", "http/protobuf"})
  void everyLineHasATimestampAndALevelAndNoStackFrames(String protocol) throws Exception {
    Path dir = ExampleApps.build();
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort(); // free once closed: connections are refused
    }
    Path config = Files.createTempFile("gospan-closed", ".yaml");
    Files.writeString(config, "exporter:\n  type: otlp\n  otlp:\n    endpoint: http://127.0.0.1:" + closed + "\n"
        + "    protocol: " + protocol + "\n  batch:\n    schedule_delay: 200ms\n"
        + "metrics:\n  enabled: true\n  export_interval: 1s\ntelemetry:\n  http:\n    enabled: false\n"
        + "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/*\"\n");
    List<String> lines;
    try (SidecarProcess gospan = SidecarProcess.start(config)) {
      try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
        gospan.await(() -> gospan.traces(server.pid()), "server traced");
        Process client = new ProcessBuilder(dir.resolve("greeter-client").toString(), "-addr", server.address(),
                "-quiet", "-n", "0", "-rate", "10", "-rpc", "unary")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
          // the exporters retry with backoff (1 s, ×1.5, 5 attempts) before they report
          gospan.await(() -> gospan.logged("Failed to export spans"), "the span exporter's failure", Duration.ofSeconds(45));
          gospan.await(() -> gospan.logged("Failed to export metrics"), "the metric exporter's failure", Duration.ofSeconds(45));
          Thread.sleep(3000); // metrics fail every second meanwhile: the throttle's work
        } finally {
          client.destroy();
          client.waitFor(10, TimeUnit.SECONDS);
        }
      }
      gospan.stop(Duration.ofSeconds(60)); // SIGTERM: flush (fails again), detach, exit 0
      lines = gospan.log();
    } finally {
      Files.deleteIfExists(config);
    }
    String all = String.join("\n", lines);
    assertThat(lines).as(all).allSatisfy(l -> assertThat(l).matches(LINE).doesNotContain("\tat ").doesNotStartWith("Caused by"));
    assertThat(lines).as(all).noneMatch(l -> l.contains("at java.") || l.contains("at io.opentelemetry."));
    // one line per failure kind within the 30 s throttle window (metrics fail every second)
    assertThat(lines.stream().filter(l -> l.contains("Failed to export metrics")).count()).as(all).isBetween(1L, 2L);
    assertThat(lines.stream().filter(l -> l.contains("Exporter failed")).count()).as(all).isLessThanOrEqualTo(2L);
    assertThat(lines.stream().filter(l -> l.contains("Failed to export spans")).count()).as(all).isBetween(1L, 2L);
  }
}
