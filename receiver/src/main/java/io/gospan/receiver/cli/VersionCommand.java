package io.gospan.receiver.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code gospan version}. */
@Command(name = "version", description = "Prints gospan's version.")
public final class VersionCommand implements Callable<Integer> {

  /** The jar's Implementation-Version, "dev" when run from classes. */
  public static String version() {
    String v = VersionCommand.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
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
