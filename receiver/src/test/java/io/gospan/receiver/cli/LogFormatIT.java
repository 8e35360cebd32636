package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
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
    Path jar = ExampleApps.repoRoot().resolve("receiver/target/gospan.jar");
    assertThat(jar).as("the gospan jar (mvn package runs before the integration tests)").exists();
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort(); // free once closed: connections are refused
    }
    Path config = Files.createTempFile("gospan-closed", ".yaml");
    Files.writeString(config, "exporter:\n  type: otlp\n  otlp:\n    endpoint: http://127.0.0.1:" + closed + "\n"
        + "    protocol: " + protocol + "\n  batch:\n    schedule_delay: 200ms\n"
        + "metrics:\n  enabled: true\n  export_interval: 1s\ntelemetry:\n  http:\n    enabled: false\n"
        + "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/*\"\n");
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Process gospan = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-jar", jar.toString(), "run", "--config", config.toString())
        .redirectErrorStream(true).start();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(gospan.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          log.add(line);
        }
      } catch (Exception ignored) {
        // gospan exited
      }
    });
    reader.start();
    try {
      await(l -> l.contains("waiting for Go gRPC processes"), "gospan started", log);
      try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
        await(l -> l.contains("tracing pid " + server.pid() + " "), "server traced", log);
        Process client = new ProcessBuilder(dir.resolve("greeter-client").toString(), "-addr", server.address(),
                "-quiet", "-n", "0", "-rate", "10", "-rpc", "unary")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
          // the exporters retry with backoff (1 s, ×1.5, 5 attempts) before they report
          await(l -> l.contains("Failed to export spans"), "the span exporter's failure", log);
          await(l -> l.contains("Failed to export metrics"), "the metric exporter's failure", log);
          Thread.sleep(3000); // metrics fail every second meanwhile: the throttle's work
        } finally {
          client.destroy();
          client.waitFor(10, TimeUnit.SECONDS);
        }
      }
    } finally {
      gospan.destroy(); // SIGTERM: flush (fails again), detach, exit 0
      assertThat(gospan.waitFor(60, TimeUnit.SECONDS)).as("gospan stops").isTrue();
      reader.join(5000);
      Files.deleteIfExists(config);
    }
    String all = String.join("\n", log);
    assertThat(gospan.exitValue()).as(all).isZero();
    List<String> lines = List.copyOf(log);
    assertThat(lines).as(all).allSatisfy(l -> assertThat(l).matches(LINE).doesNotContain("\tat ").doesNotStartWith("Caused by"));
    assertThat(lines).as(all).noneMatch(l -> l.contains("at java.") || l.contains("at io.opentelemetry."));
    // one line per failure kind within the 30 s throttle window (metrics fail every second)
    assertThat(lines.stream().filter(l -> l.contains("Failed to export metrics")).count()).as(all).isBetween(1L, 2L);
    assertThat(lines.stream().filter(l -> l.contains("Exporter failed")).count()).as(all).isLessThanOrEqualTo(2L);
    assertThat(lines.stream().filter(l -> l.contains("Failed to export spans")).count()).as(all).isBetween(1L, 2L);
  }

  static void await(Predicate<String> line, String what, List<String> log) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
    while (true) {
      synchronized (log) {
        if (JaegerEndToEndIT.snapshot(log).stream().anyMatch(line)) {
          return;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what + "; gospan log:\n" + String.join("\n", log));
      }
      Thread.sleep(50);
    }
  }
}
