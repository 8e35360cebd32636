package io.gospan.receiver.cli;

/** Exit codes of the {@code gospan} command. */
public final class ExitCodes {
  private ExitCodes() {}

  /** Success; for {@code inspect}: the binary will produce spans. */
  public static final int OK = 0;
  /** Runtime failure: BPF could not be loaded, a file could not be read. */
  public static final int ERROR = 1;
  /**
   * Bad usage or configuration (picocli's own usage errors are also 2); for {@code inspect}: the path is
   * not a regular file (FIFO, socket, device, directory).
   */
  public static final int USAGE = 2;
  /** {@code inspect}: the binary is readable but gospan will produce no span for it. */
  public static final int UNSUPPORTED = 3;
}
