package io.gospan.receiver.probe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A traced binary as the BPF programs see it ({@code struct exe_key}): the device and inode of
 * the task's executable ({@code task->mm->exe_file->f_inode}), so a process is matched by
 * what it runs, not by its pid or path.
 *
 * @param dev kernel-internal {@code dev_t} of the file system: {@code MAJOR << 20 | MINOR}
 *     (include/linux/kdev_t.h), not the user-space encoding {@code stat(2)} returns
 * @param ino inode number
 */
public record ExeKey(long dev, long ino) {

  /**
   * The key of a file, e.g. {@code /proc/<pid>/exe} (which follows the process's executable
   * even in another mount namespace, or after the path was deleted or replaced).
   *
   * @throws IOException when the file cannot be stat'ed (e.g. the process exited)
   */
  public static ExeKey of(Path file) throws IOException {
    java.util.Map<String, Object> a = Files.readAttributes(file, "unix:dev,ino"); // one stat(2)
    return new ExeKey(kernelDev(((Number) a.get("dev")).longValue()), ((Number) a.get("ino")).longValue());
  }

  /**
   * glibc's user-space dev_t (sys/sysmacros.h: major in bits 8-19 and 32-63, minor in bits
   * 0-7 and 20-31) to the kernel's {@code MKDEV(major, minor)}.
   */
  static long kernelDev(long userDev) {
    long major = ((userDev >>> 8) & 0xfffL) | ((userDev >>> 32) & ~0xfffL);
    long minor = (userDev & 0xffL) | ((userDev >>> 12) & ~0xffL);
    return (major << 20) | minor;
  }

  /** The 16 bytes of {@code struct exe_key}. */
  public byte[] toBytes() {
    ByteBuffer b = GrpcLayouts.EXE_KEY.allocate();
    GrpcStructs.ExeKey.dev(b, 0, dev);
    GrpcStructs.ExeKey.ino(b, 0, ino);
    return b.array();
  }
}
