package io.gospan.receiver.cli;

import picocli.CommandLine;

/** Entry point of {@code gospan.jar}. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
      System.err.println("gospan: uncaught " + e + " in thread " + t.getName());
      e.printStackTrace();
    });
    int code;
    try {
      code = commandLine().execute(args);
    } catch (Throwable t) {
      // An Error (out of memory, stack overflow) must not leave a JVM kept alive by a
      // non-daemon thread (the telemetry HTTP server's dispatcher) with probes attached.
      System.err.println("gospan: fatal: " + t);
      t.printStackTrace();
      code = ExitCodes.ERROR;
    }
    System.exit(code);
  }

  /** The command line, for tests. */
  public static CommandLine commandLine() {
    return new CommandLine(new GospanCommand()).setCaseInsensitiveEnumValuesAllowed(true);
  }
}
