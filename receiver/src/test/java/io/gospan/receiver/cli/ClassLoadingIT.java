package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.SidecarProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The sidecar loads only what its configuration uses: the gospan jar, run as a separate process
 * with {@code -Xlog:class+load}, traces the example server and client (20 calls); then the
 * classes it loaded are read from the JVM's log. With the link service, the telemetry server,
 * metrics export and the disk queue switched off, none of their classes is loaded; with each
 * switched on, its classes are (so the names asserted on are the ones really loaded).
 */
class ClassLoadingIT {
  /** {@code [0.123s][info][class,load] NAME source: ...}. */
  private static final Pattern LOADED = Pattern.compile("\\[class,load\\s*\\]\\s+(\\S+)\\s+source:");

  /** The link service's server and gospan's link package. */
  static final List<String> LINK = List.of("io.gospan.receiver.link.", "io.grpc.netty.shaded.io.grpc.netty.NettyServer");
  /** The Prometheus exporter behind {@code /metrics} and the Prometheus client library. */
  static final List<String> PROMETHEUS = List.of("io.opentelemetry.exporter.prometheus.", "io.prometheus.");
  /** The OTLP metric exporter ({@code metrics.enabled}). */
  static final List<String> METRICS_EXPORT = List.of("io.opentelemetry.exporter.otlp.metrics.");
  /** OpenTelemetry Java contrib disk-buffering ({@code exporter.queue.directory}). */
  static final List<String> DISK_QUEUE = List.of("io.opentelemetry.contrib.disk.");

  @Test
  void switchedOffPartsAreNotLoaded() throws Exception {
    Set<String> classes = classesLoaded("link:\n  enabled: false\nmetrics:\n  enabled: false\n"
        + "telemetry:\n  http:\n    enabled: false\n", "");
    assertThat(matching(classes, LINK)).as("the link service's classes").isEmpty();
    assertThat(matching(classes, PROMETHEUS)).as("Prometheus's classes").isEmpty();
    assertThat(matching(classes, METRICS_EXPORT)).as("the OTLP metric exporter's classes").isEmpty();
    assertThat(matching(classes, DISK_QUEUE)).as("the disk queue's classes").isEmpty();
    // what stays: span export over OTLP/gRPC (grpc-java over Netty)
    assertThat(classes).contains("io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter");
  }

  @Test
  void switchedOnPartsAreLoaded() throws Exception {
    Path queue = Files.createTempDirectory("gospan-class-loading-queue");
    Set<String> classes;
    try {
      classes = classesLoaded("link:\n  enabled: true\n  listen: 127.0.0.1:" + freePort() + "\n"
          + "metrics:\n  enabled: true\n"
          + "telemetry:\n  http:\n    enabled: true\n    address: 127.0.0.1:" + freePort() + "\n",
          "  queue:\n    directory: " + queue + "\n");
    } finally {
      try (var files = Files.walk(queue)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
    assertThat(matching(classes, LINK)).as("the link service's classes").isNotEmpty()
        .contains("io.grpc.netty.shaded.io.grpc.netty.NettyServer");
    assertThat(matching(classes, PROMETHEUS)).as("Prometheus's classes").isNotEmpty();
    assertThat(matching(classes, METRICS_EXPORT)).as("the OTLP metric exporter's classes").isNotEmpty();
    assertThat(matching(classes, DISK_QUEUE)).as("the disk queue's classes").isNotEmpty();
  }

  /**
   * Runs the gospan jar with {@code settings} (top-level keys) and {@code exporterSettings} (keys
   * under {@code exporter}) added to a configuration that traces only the example programs and
   * exports OTLP/gRPC to a closed port; returns the names of the classes its JVM loaded by the
   * time 20 traced calls were made and 2 s passed.
   */
  static Set<String> classesLoaded(String settings, String exporterSettings) throws Exception {
    Path dir = ExampleApps.build();
    Path log = Files.createTempFile("gospan-class-load", ".log");
    Path config = Files.createTempFile("gospan-class-load", ".yaml");
    Files.writeString(config, "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/*\"\n" + settings
        + "exporter:\n  otlp:\n    endpoint: http://127.0.0.1:" + freePort() + "\n" + exporterSettings);
    try (SidecarProcess gospan = SidecarProcess.start(
        "gospan", List.of(), List.of("-Xlog:class+load=info:file=" + log), config)) {
      try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
        gospan.await(() -> gospan.traces(server.pid()), "server traced");
        ExampleApps.runClient(dir, server.address(), "-n", "20");
        Thread.sleep(2000); // spans end and are admitted; a link wait would start here
        Set<String> loaded = loaded(log);
        gospan.stop(Duration.ofSeconds(30));
        return loaded;
      }
    } finally {
      Files.deleteIfExists(config);
      Files.deleteIfExists(log);
    }
  }

  static Set<String> loaded(Path log) throws IOException {
    try (var lines = Files.lines(log)) {
      return lines.map(LOADED::matcher).filter(Matcher::find).map(m -> m.group(1)).collect(Collectors.toSet());
    }
  }

  static List<String> matching(Set<String> classes, List<String> prefixes) {
    return classes.stream().filter(c -> prefixes.stream().anyMatch(c::startsWith)).sorted().toList();
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
