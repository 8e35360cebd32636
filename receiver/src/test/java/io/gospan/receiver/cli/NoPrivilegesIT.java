package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.SidecarProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code gospan run} without {@code CAP_SYS_ADMIN} (dropped from the bounding and inheritable
 * sets with util-linux {@code setpriv}; {@code CAP_BPF} and {@code CAP_PERFMON} stay, so the BPF
 * objects load): the kernel refuses every uprobe with {@code EACCES}; gospan says so in one line
 * naming the capability and exits 1, instead of running on with no probe.
 */
class NoPrivilegesIT {

  @Test
  void withoutCapSysAdminGospanSaysWhyInOneLineAndExits1() throws Exception {
    Path dir = ExampleApps.build();
    Path jar = SidecarProcess.jar();
    Path config = Files.createTempFile("gospan-noprivs", ".yaml");
    // link off: another gospan on this machine may hold the link port (one more ERROR line)
    Files.writeString(config, "exporter:\n  type: none\nmetrics:\n  enabled: false\ntelemetry:\n  http:\n    enabled: false\n"
        + "link:\n  enabled: false\n"
        + "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/*\"\n");
    Path out = Files.createTempFile("gospan-noprivs", ".log");
    try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
      Process gospan = new ProcessBuilder(
              "setpriv", "--inh-caps=-sys_admin", "--bounding-set=-sys_admin", "--",
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-jar", jar.toString(), "run", "--config", config.toString())
          .redirectErrorStream(true).redirectOutput(out.toFile()).start();
      boolean exited = gospan.waitFor(60, TimeUnit.SECONDS);
      if (!exited) {
        gospan.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      String log = Files.readString(out, StandardCharsets.UTF_8);
      assertThat(exited).as("gospan exits by itself; log:\n" + log).isTrue();
      assertThat(gospan.exitValue()).as(log).isEqualTo(ExitCodes.ERROR);
      List<String> errors = log.lines().filter(l -> l.contains(" ERROR ")).toList();
      assertThat(errors).as(log).hasSize(1);
      assertThat(errors.get(0)).contains("no probe can be attached", "EACCES", "CAP_SYS_ADMIN");
      assertThat(log).as("no stack trace").doesNotContain("\tat ").doesNotContain("Caused by");
      assertThat(log).as("the BPF objects loaded: it is the uprobes that were refused").doesNotContain("cannot load the BPF probes");
    } finally {
      Files.deleteIfExists(config);
      Files.deleteIfExists(out);
    }
  }
}
