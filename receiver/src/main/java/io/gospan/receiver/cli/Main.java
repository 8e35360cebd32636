package io.gospan.receiver.cli;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

/**
 * Entry point of {@code gospan.jar}. Before anything else it routes {@code java.util.logging}
 * into SLF4J ({@link LibraryLogBridge}), so every line gospan and its libraries log has one
 * format: {@code simplelogger.properties} (timestamp, thread, level, logger).
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    LibraryLogBridge.installForRoot();
    Logger log = LoggerFactory.getLogger(Main.class);
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> log.error("uncaught exception in thread {}", t.getName(), e));
    int code;
    try {
      code = commandLine().execute(args);
    } catch (Throwable t) {
      // An Error (out of memory, stack overflow) must not leave a JVM kept alive by a
      // non-daemon thread (the telemetry HTTP server's dispatcher) with probes attached.
      log.error("fatal", t);
      code = ExitCodes.ERROR;
    }
    System.exit(code);
  }

  /** The command line, for tests. */
  public static CommandLine commandLine() {
    return new CommandLine(new GospanCommand()).setCaseInsensitiveEnumValuesAllowed(true);
  }
}
