package io.gospan.receiver.discovery;

import io.gospan.receiver.probe.ExeKey;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Reads processes from a procfs mount ({@code /proc} unless a test says otherwise). */
public final class ProcFs {
  private final Path root;

  public ProcFs(Path root) {
    this.root = root;
  }

  public static ProcFs system() {
    return new ProcFs(Path.of("/proc"));
  }

  public Path root() {
    return root;
  }

  /**
   * The pids now listed. {@link java.io.File#list()} (one native call for the whole directory) rather
   * than a {@code DirectoryStream} (a {@code Path} per entry): discovery lists {@code /proc} a few
   * times a minute, too rarely for the JIT to compile it, and interpreted the stream took 1.7 ms
   * for 64 entries against 0.23 ms.
   *
   * @throws IllegalStateException when the directory cannot be listed
   */
  public Set<Integer> pids() {
    String[] names = root.toFile().list();
    if (names == null) {
      throw new IllegalStateException("cannot list " + root);
    }
    Set<Integer> pids = new HashSet<>();
    for (String name : names) {
      int pid = parsePid(name);
      if (pid >= 0) {
        pids.add(pid);
      }
    }
    return pids;
  }

  /** The pid a {@code /proc} entry's name is, or -1 when it is not a pid ({@code self}, {@code 1x}, 10 digits or more). */
  static int parsePid(String name) {
    if (name.isEmpty() || name.length() > 9) {
      return -1;
    }
    int pid = 0;
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      pid = pid * 10 + (c - '0');
    }
    return pid;
  }

  /**
   * One process, or empty when it has no executable (kernel threads), exited meanwhile, or
   * cannot be read (permissions).
   */
  public Optional<ProcessEntry> entry(int pid) {
    Path dir = root.resolve(Integer.toString(pid));
    Path exe = dir.resolve("exe");
    try {
      String target = Files.readSymbolicLink(exe).toString();
      ExeKey key = ExeKey.of(exe);
      String comm = Files.readString(dir.resolve("comm"), StandardCharsets.UTF_8).strip();
      return Optional.of(new ProcessEntry(pid, exe, target, key, comm));
    } catch (IOException | UnsupportedOperationException e) {
      return Optional.empty();
    }
  }

  /**
   * The process's start time ({@code /proc/<pid>/stat} field 22, clock ticks since boot): with
   * the pid, it identifies one process even when the pid is reused. -1 when it is gone or the
   * file cannot be read. Read into bytes and parsed in place, not through {@code Files.readString}
   * and {@code split}: the traced pids are checked twice a second, interpreted (25 µs against 200).
   */
  public long startTime(int pid) {
    byte[] b = new byte[STAT_MAX_BYTES];
    int n = 0;
    try (FileInputStream in = new FileInputStream(root + "/" + pid + "/stat")) {
      for (int r; n < b.length && (r = in.read(b, n, b.length - n)) > 0; ) {
        n += r;
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return statStartTime(b, n);
  }

  /** The longest {@code /proc/<pid>/stat} read: 52 fields of at most 20 digits, and a command name of at most 64 bytes. */
  static final int STAT_MAX_BYTES = 2048;

  /**
   * Field 22 of a {@code /proc/<pid>/stat} line in {@code b[0..n)}, or -1. The command name (field 2)
   * may hold spaces and parentheses: fields resume after the last {@code ')'}.
   */
  static long statStartTime(byte[] b, int n) {
    int i = n - 1;
    while (i >= 0 && b[i] != ')') {
      i--;
    }
    if (i < 0) {
      return -1;
    }
    int p = i + 2; // field 3
    for (int field = 3; field < 22; field++) {
      while (p < n && b[p] != ' ') {
        p++;
      }
      p++;
    }
    long v = 0;
    int digits = 0;
    for (; p < n && b[p] >= '0' && b[p] <= '9' && digits < 19; p++, digits++) {
      v = v * 10 + (b[p] - '0');
    }
    return digits == 0 ? -1 : v;
  }

  /**
   * The process's network namespace ({@code /proc/<pid>/ns/net}, e.g. {@code net:[4026531840]}), or
   * null when it is gone or cannot be read.
   */
  public String netNamespace(int pid) {
    try {
      return Files.readSymbolicLink(root.resolve(Integer.toString(pid)).resolve("ns").resolve("net")).toString();
    } catch (IOException | UnsupportedOperationException e) {
      return null;
    }
  }

  /**
   * The TCP sockets listening in the network namespace of {@code pid} (its {@code net/tcp} and
   * {@code net/tcp6} tables, IPv4 and IPv6): port → socket inodes. Empty when the tables cannot be
   * read (the process exited, or no IPv6).
   */
  public Map<Integer, Set<Long>> listeningSockets(int pid) {
    Map<Integer, Set<Long>> byPort = new HashMap<>();
    Path net = root.resolve(Integer.toString(pid)).resolve("net");
    for (String table : new String[] {"tcp", "tcp6"}) {
      try {
        for (String line : Files.readAllLines(net.resolve(table))) {
          // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
          String[] f = line.trim().split("\\s+");
          if (f.length > 9 && "0A".equals(f[3])) { // 0A = TCP_LISTEN
            String local = f[1];
            int port = Integer.parseInt(local.substring(local.indexOf(':') + 1), 16);
            byPort.computeIfAbsent(port, k -> new HashSet<>()).add(Long.parseLong(f[9]));
          }
        }
      } catch (IOException | RuntimeException ignored) {
        // table absent (no IPv6), process gone, or a line not in this format
      }
    }
    return byPort;
  }

  /**
   * Whether one of the process's file descriptors is a socket of {@code inodes} ({@code
   * /proc/<pid>/fd}, read until one is found). False when the process is gone or its fds cannot
   * be read.
   */
  public boolean holdsSocket(int pid, Set<Long> inodes) {
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(root.resolve(Integer.toString(pid)).resolve("fd"))) {
      for (Path fd : fds) {
        String link;
        try {
          link = Files.readSymbolicLink(fd).toString();
        } catch (IOException ignored) {
          continue; // closed meanwhile
        }
        if (link.startsWith("socket:[") && link.endsWith("]")) {
          try {
            if (inodes.contains(Long.parseLong(link, 8, link.length() - 1, 10))) {
              return true;
            }
          } catch (NumberFormatException ignored) {
            // not a socket inode
          }
        }
      }
    } catch (IOException | UnsupportedOperationException e) {
      return false;
    }
    return false;
  }

  /**
   * The inode number of the process's mount namespace ({@code /proc/<pid>/ns/mnt} names {@code
   * mnt:[N]}), or 0 when it is gone or cannot be read.
   */
  public long mountNamespace(int pid) {
    try {
      String t = Files.readSymbolicLink(root.resolve(Integer.toString(pid)).resolve("ns").resolve("mnt")).toString();
      return t.startsWith("mnt:[") && t.endsWith("]") ? Long.parseLong(t, 5, t.length() - 1, 10) : 0;
    } catch (IOException | UnsupportedOperationException | NumberFormatException e) {
      return 0;
    }
  }

  /**
   * {@code path} (absolute) as the process sees it: under {@code /proc/<pid>/root}, its root
   * directory (its container's file system), valid while it lives.
   */
  public Path underRoot(int pid, String path) {
    return root.resolve(Integer.toString(pid)).resolve("root").resolve(path.startsWith("/") ? path.substring(1) : path);
  }

  /** The process's cgroup file ({@code /proc/<pid>/cgroup}), empty when unreadable. */
  public String cgroup(int pid) {
    try {
      return Files.readString(root.resolve(Integer.toString(pid)).resolve("cgroup"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }
}
