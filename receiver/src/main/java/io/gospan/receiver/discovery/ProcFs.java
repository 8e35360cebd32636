package io.gospan.receiver.discovery;

import io.gospan.receiver.probe.ExeKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
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

  /** The pids now listed. */
  public Set<Integer> pids() {
    Set<Integer> pids = new HashSet<>();
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(root)) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        if (!name.isEmpty() && name.chars().allMatch(Character::isDigit)) {
          try {
            pids.add(Integer.parseInt(name));
          } catch (NumberFormatException ignored) {
            // not a pid
          }
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot list " + root + ": " + e.getMessage(), e);
    }
    return pids;
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
   * the pid, it identifies one process even when the pid is reused. -1 when it is gone.
   */
  public long startTime(int pid) {
    try {
      String stat = Files.readString(root.resolve(Integer.toString(pid)).resolve("stat"), StandardCharsets.UTF_8);
      // comm (field 2) may hold spaces and parentheses: fields resume after the last ')'
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(f[19]);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** TCP ports the process listens on (IPv4 and IPv6), from its fds and its net namespace's tables. */
  public Set<Integer> listeningPorts(int pid) {
    Path dir = root.resolve(Integer.toString(pid));
    Set<String> inodes = new HashSet<>();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(dir.resolve("fd"))) {
      for (Path fd : fds) {
        try {
          String link = Files.readSymbolicLink(fd).toString();
          if (link.startsWith("socket:[")) {
            inodes.add(link.substring(8, link.length() - 1));
          }
        } catch (IOException ignored) {
          // closed meanwhile
        }
      }
    } catch (IOException e) {
      return Set.of();
    }
    Set<Integer> ports = new HashSet<>();
    for (String table : new String[] {"tcp", "tcp6"}) {
      try {
        for (String line : Files.readAllLines(dir.resolve("net").resolve(table))) {
          // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
          String[] f = line.trim().split("\\s+");
          if (f.length > 9 && "0A".equals(f[3]) && inodes.contains(f[9])) { // 0A = TCP_LISTEN
            String local = f[1];
            ports.add(Integer.parseInt(local.substring(local.indexOf(':') + 1), 16));
          }
        }
      } catch (IOException | RuntimeException ignored) {
        // table absent (no IPv6) or process gone
      }
    }
    return ports;
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
