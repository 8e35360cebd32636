package io.gospan.receiver.probe;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * An exec as the kernel announced it ({@code struct exec_notice}, raw tracepoint {@code
 * sched_process_exec}, bpf/process.bpf.h): which process now runs which executable and where that
 * file is, so discovery can learn the binary even when the process is gone before it looks.
 *
 * @param pid the process's id as gospan's {@code /proc} shows it
 * @param exe the new image's executable as probes see it ({@code task->mm->exe_file}); null when
 *     the notice did not say (a test's, or one built from a pid alone)
 * @param mountNamespace the inode number of the process's mount namespace ({@code readlink
 *     /proc/<pid>/ns/mnt} shows {@code mnt:[N]}); 0 when unknown
 * @param path the executable's absolute path from the root of that mount namespace (what {@code
 *     readlink /proc/<pid>/exe} shows from its root); null when the kernel could not give it whole
 *     (longer than {@code GOSPAN_EXEC_PATH_LEN} bytes, deeper than the walk goes, unreadable)
 * @param tsNanos {@code bpf_ktime_get_ns()} at the exec (CLOCK_MONOTONIC), 0 when unknown
 */
public record ExecNotice(int pid, ExeKey exe, long mountNamespace, String path, long tsNanos) {

  /** What a notice of {@code pid} alone says: nothing of its file. */
  public static ExecNotice pidOnly(int pid) {
    return new ExecNotice(pid, null, 0, null, 0);
  }

  /** File names are bytes: decoded as the JDK decodes the names it reads from the kernel. */
  private static final Charset NAMES = charset();

  private static Charset charset() {
    try {
      return Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
    } catch (RuntimeException e) {
      return StandardCharsets.UTF_8;
    }
  }

  /**
   * Decodes one record of the {@code execs} ring buffer (little-endian, as the kernel wrote it).
   *
   * @throws IllegalArgumentException when the record is shorter than its fixed part or its path
   *     length exceeds the record
   */
  public static ExecNotice decode(ByteBuffer record) {
    ByteBuffer b = record.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int base = b.position();
    int fixed = GrpcStructs.ExecNotice.PATH;
    if (b.remaining() < fixed) {
      throw new IllegalArgumentException("exec notice of " + b.remaining() + " bytes, shorter than its " + fixed);
    }
    int exeAt = base + GrpcStructs.ExecNotice.EXE;
    ExeKey exe = new ExeKey(GrpcStructs.ExeKey.dev(b, exeAt), GrpcStructs.ExeKey.ino(b, exeAt));
    int pid = GrpcStructs.ExecNotice.pid(b, base);
    long mntNs = GrpcStructs.ExecNotice.mntNs(b, base);
    long ts = GrpcStructs.ExecNotice.tsNs(b, base);
    int flags = GrpcStructs.ExecNotice.flags(b, base);
    int len = GrpcStructs.ExecNotice.pathLen(b, base);
    if (len > b.remaining() - fixed || len > GrpcLayouts.EXEC_PATH_LEN) {
      throw new IllegalArgumentException("exec notice's path of " + len + " bytes exceeds its record");
    }
    String path = null;
    if ((flags & (GrpcConstants.EXEC_PATH_TRUNCATED | GrpcConstants.EXEC_NO_PATH)) == 0) {
      byte[] bytes = new byte[len];
      b.get(base + fixed, bytes);
      path = path(bytes);
    }
    return new ExecNotice(pid, exe, mntNs, path, ts);
  }

  /**
   * The path whose components, from the file up to the root, each NUL-terminated, are {@code
   * reversed}: {@code "etcdctl\0bin\0usr\0"} is {@code /usr/bin/etcdctl}; no component is the
   * root itself ({@code "/"}). Null when a component is empty or not NUL-terminated.
   */
  static String path(byte[] reversed) {
    List<String> components = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < reversed.length; i++) {
      if (reversed[i] == 0) {
        if (i == start) {
          return null;
        }
        components.add(new String(reversed, start, i - start, NAMES));
        start = i + 1;
      }
    }
    if (start != reversed.length) {
      return null; // the last component is not terminated
    }
    StringBuilder b = new StringBuilder();
    for (int i = components.size() - 1; i >= 0; i--) {
      String c = components.get(i);
      if (c.indexOf('/') >= 0) {
        return null; // a name never holds a '/'
      }
      b.append('/').append(c);
    }
    return b.isEmpty() ? "/" : b.toString();
  }
}
