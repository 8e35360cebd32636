package io.gospan.receiver.cli;

import io.gospan.receiver.version.GospanVersion;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code gospan version}. */
@Command(name = "version", description = "Prints gospan's version.")
public final class VersionCommand implements Callable<Integer> {

  /** gospan's version from the build ({@link GospanVersion#get()}). */
  public static String version() {
    return GospanVersion.get();
  }

  @Override
  public Integer call() {
    System.out.println("gospan " + version() + " (java " + System.getProperty("java.version") + ")");
    return ExitCodes.OK;
  }

  /** For {@code gospan --version}. */
  public static final class Provider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"gospan " + version()};
    }
  }
}
