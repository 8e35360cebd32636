package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@code /proc} read the cheap way: entry names as pids, the start time from a stat line's bytes. */
class ProcFsTest {

  static long startTime(String stat) {
    byte[] b = stat.getBytes(StandardCharsets.UTF_8);
    return ProcFs.statStartTime(b, b.length);
  }

  @Test
  void onlyDecimalNamesArePids() {
    assertThat(ProcFs.parsePid("1")).isEqualTo(1);
    assertThat(ProcFs.parsePid("4194304")).isEqualTo(4194304);
    assertThat(ProcFs.parsePid("self")).isEqualTo(-1);
    assertThat(ProcFs.parsePid("1x")).isEqualTo(-1);
    assertThat(ProcFs.parsePid("")).isEqualTo(-1);
    assertThat(ProcFs.parsePid("-1")).isEqualTo(-1);
    assertThat(ProcFs.parsePid("9999999999")).as("wider than a pid").isEqualTo(-1);
  }

  @Test
  void theStartTimeIsField22AfterTheLastParenthesis() {
    assertThat(startTime("7 (a) b) c) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0\n")).isEqualTo(987654);
    assertThat(startTime("7 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55\n")).as("the last field").isEqualTo(55);
    assertThat(startTime("7 (x) S 1 1 1")).as("cut short").isEqualTo(-1);
    assertThat(startTime("no parenthesis")).isEqualTo(-1);
    assertThat(startTime("")).isEqualTo(-1);
  }

  @Test
  void thisProcessStartTimeMatchesTheSplitLine() throws Exception {
    long pid = ProcessHandle.current().pid();
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    long expected = Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[19]);
    assertThat(ProcFs.system().startTime((int) pid)).isEqualTo(expected).isPositive();
    assertThat(ProcFs.system().pids()).contains((int) pid);
  }

  @Test
  void aGoneProcessHasNoStartTime() {
    assertThat(ProcFs.system().startTime(Integer.MAX_VALUE)).isEqualTo(-1);
  }
}
