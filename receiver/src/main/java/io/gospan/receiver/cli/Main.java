package io.gospan.receiver.cli;

import picocli.CommandLine;

/** Entry point of {@code gospan.jar}. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The command line, for tests. */
  public static CommandLine commandLine() {
    return new CommandLine(new GospanCommand()).setCaseInsensitiveEnumValuesAllowed(true);
  }
}
