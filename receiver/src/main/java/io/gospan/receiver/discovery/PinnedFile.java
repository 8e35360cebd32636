package io.gospan.receiver.discovery;

import io.gospan.receiver.probe.ExeKey;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A binary opened once, reached through {@code /proc/self/fd/<fd>} while open: what is checked
 * (its device and inode), read (inspection) and given uprobes (the kernel resolves the path to the
 * open file) is one file, even when its path is replaced meanwhile (a new inode at the same path is
 * not attached by mistake). Closed after attaching: uprobes hold the inode themselves.
 */
final class PinnedFile implements AutoCloseable {
  private static final int O_RDONLY = 0;
  private static final int O_CLOEXEC = 0x80000;

  private final int fd;
  private final Path path;
  private final ExeKey key;

  private PinnedFile(int fd) throws IOException {
    this.fd = fd;
    this.path = Path.of("/proc/self/fd/" + fd);
    try {
      this.key = ExeKey.of(path);
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * Opens {@code file} for reading.
   *
   * @throws IOException when it cannot be opened (gone, not permitted) or stat'ed
   */
  static PinnedFile open(Path file) throws IOException {
    Libc libc = Libc.get();
    int fd = libc.lib.open(file.toString(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw new IOException("cannot open " + file + ": " + Libc.describe(libc.errno()));
    }
    return new PinnedFile(fd);
  }

  /** {@code /proc/self/fd/<fd>}: the open file, valid until {@link #close()}. */
  Path path() {
    return path;
  }

  /** The open file's device and inode. */
  ExeKey key() {
    return key;
  }

  @Override
  public void close() {
    Libc.get().lib.close(fd);
  }
}
