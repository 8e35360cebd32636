package io.gospan.receiver.cli;

/** Exit codes of the {@code gospan} command. */
public final class ExitCodes {
  private ExitCodes() {}

  /**
   * Success; for {@code inspect}: the binary will produce spans; for {@code inspect DIR}: every Go binary under it
   * that links grpc-go's transport will.
   */
  public static final int OK = 0;
  /**
   * Runtime failure: BPF could not be loaded, a file could not be read; for {@code inspect DIR}: nothing
   * unsupported, but a file or directory could not be read or an ELF file is corrupt.
   */
  public static final int ERROR = 1;
  /**
   * Bad usage or configuration (picocli's own usage errors are also 2); for {@code inspect}: the path is
   * neither a regular file nor a directory (FIFO, socket, device).
   */
  public static final int USAGE = 2;
  /**
   * {@code inspect}: the binary is readable but gospan will produce no span for it; {@code inspect DIR}: for one
   * Go binary under it that links grpc-go's transport.
   */
  public static final int UNSUPPORTED = 3;
}
