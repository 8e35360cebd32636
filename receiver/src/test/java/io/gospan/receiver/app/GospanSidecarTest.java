package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.discovery.ProcFs;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The composition root's start: the running binaries are read while the pipeline is built
 * (EarlyInspections), and a configuration error found there still fails the start with one line,
 * before the probes are loaded.
 */
class GospanSidecarTest {
  @TempDir Path proc;

  @Test
  void aTelemetryPortInUseFailsTheStartWithOneLineBeforeTheProbesLoad() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      GospanConfig c = ConfigLoader.parse("exporter:\n  type: console\ntelemetry:\n  http:\n    enabled: true\n"
          + "    address: 127.0.0.1:" + taken.getLocalPort() + "\n", "test.yaml", Map.of());
      // an empty procfs: nothing of the host is read early
      assertThatThrownBy(() -> GospanSidecar.builder(c).procFs(new ProcFs(proc)).linkService(false).start())
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("telemetry.http.address: cannot listen on 127.0.0.1:" + taken.getLocalPort())
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }
  }
}
