package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.version.GospanVersion;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class VersionCommandTest {

  @Test
  void versionFlagPrintsTheBuildsVersion() {
    StringWriter out = new StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    assertThat(cmd.execute("--version")).isZero();
    assertThat(out.toString().strip()).isEqualTo("gospan " + GospanVersion.get());
    assertThat(VersionCommand.version()).isEqualTo(GospanVersion.get()).isNotEqualTo("unknown");
  }
}
