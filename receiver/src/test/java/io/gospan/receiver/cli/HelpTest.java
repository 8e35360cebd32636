package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** Each command's {@code --help}: its usage on stdout, nothing on stderr, exit 0. */
class HelpTest {

  @ParameterizedTest
  @CsvSource({
    "--help, Usage: gospan ",
    "help, Usage: gospan ",
    "run --help, Usage: gospan run ",
    "run -h, Usage: gospan run ",
    "inspect --help, Usage: gospan inspect ",
    "inspect -h, Usage: gospan inspect ",
    "help inspect, Usage: gospan inspect "
  })
  void printsUsageAndExitsZero(String args, String usage) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    assertThat(cmd.execute(args.split(" "))).as(err.toString()).isZero();
    assertThat(out.toString()).startsWith(usage);
    assertThat(err.toString()).isEmpty();
  }
}
