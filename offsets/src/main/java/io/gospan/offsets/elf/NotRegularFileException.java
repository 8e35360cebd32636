package io.gospan.offsets.elf;

import java.nio.file.FileSystemException;
import java.nio.file.Path;

/**
 * The path names something other than a regular file: a FIFO, a socket, a character or block device, or a
 * directory. Thrown before the file is opened: opening a FIFO for reading blocks until a writer comes, and
 * a device can block or stream forever. An I/O error, not a verdict on a binary's content.
 */
public final class NotRegularFileException extends FileSystemException {
  private static final long serialVersionUID = 1L;

  private final String kind;

  /**
   * @param kind what the path is instead: {@code "fifo"}, {@code "socket"}, {@code "character device"},
   *     {@code "block device"}, {@code "directory"} or {@code "special file"}
   */
  public NotRegularFileException(Path path, String kind) {
    super(path.toString(), null, kind);
    this.kind = kind;
  }

  /** What the path is instead of a regular file, e.g. {@code "fifo"}, {@code "directory"}. */
  public String kind() {
    return kind;
  }

  /** {@code "not a regular file: <path> (<kind>)"}. */
  @Override
  public String getMessage() {
    return "not a regular file: " + getFile() + " (" + kind + ")";
  }
}
