package io.gospan.receiver.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * This JDK accepts the sidecar's measured JVM settings ({@link LoadBenchmark#JVM} with {@link
 * LoadBenchmark#ENV}; {@code RecommendedJvmSettingsTest} checks every place that runs the sidecar uses
 * them): {@code java SETTINGS -version} exits 0 and warns about none. An integration test: it starts a JVM.
 */
class RecommendedJvmSettingsIT {

  @Test
  void thisJdkAcceptsThem() throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LoadBenchmark.JVM);
    cmd.add("-version");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(LoadBenchmark.ENV);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("java %s -version:%n%s", LoadBenchmark.JVM, out).isZero();
    assertThat(out).doesNotContainIgnoringCase("unrecognized").doesNotContainIgnoringCase("ignoring option");
  }
}
