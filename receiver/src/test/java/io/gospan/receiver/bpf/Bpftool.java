package io.gospan.receiver.bpf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test helper: what the kernel holds, as {@code bpftool -j} lists it, and what this JVM holds of it
 * ({@link #ownFds}: other processes on the machine, e.g. another gospan, load BPF objects too).
 */
public final class Bpftool {
  private Bpftool() {}

  /** `bpftool -j {prog|map|link} list`. */
  static JsonNode list(String what) {
    ProcessBuilder pb = new ProcessBuilder("bpftool", "-j", what, "list");
    pb.redirectErrorStream(false);
    // no stdin pipe, and stdout and stderr closed before returning: NativeResourceLeakIT counts
    // this JVM's fds, and a Process's pipes otherwise stay open until a GC cleans them up
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    try {
      Process p = pb.start();
      byte[] out;
      String err;
      try (var stdout = p.getInputStream();
          var stderr = p.getErrorStream()) {
        out = stdout.readAllBytes();
        err = new String(stderr.readAllBytes(), StandardCharsets.UTF_8);
      }
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError("bpftool " + what + " list failed: " + err);
      }
      return new ObjectMapper().readTree(out);
    } catch (IOException e) {
      throw new AssertionError("bpftool is needed by this test (apt-get install bpftool): " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Names of the kernel objects of a kind ({@code name} as the kernel truncated it, 15 chars). */
  static List<String> names(String what) {
    List<String> names = new ArrayList<>();
    for (JsonNode n : list(what)) {
      names.add(n.path("name").asText(""));
    }
    return names;
  }

  /** Link ids whose program is one of ours, by the kernel's truncated program name. */
  static List<Integer> linkIdsOfPrograms(List<Integer> progIds) {
    List<Integer> ids = new ArrayList<>();
    for (JsonNode n : list("link")) {
      if (progIds.contains(n.path("prog_id").asInt(-1))) {
        ids.add(n.path("id").asInt());
      }
    }
    return ids;
  }

  /** The kernel's 15-character form of a BPF object name. */
  static String kernelName(String name) {
    return name.length() > 15 ? name.substring(0, 15) : name;
  }

  /** The kinds of BPF objects a process holds by fd, as {@code /proc/<pid>/fd} names them. */
  public enum Kind {
    MAP("anon_inode:bpf-map"),
    PROG("anon_inode:bpf-prog"),
    LINK("anon_inode:bpf_link");

    final String target;

    Kind(String target) {
      this.target = target;
    }
  }

  /**
   * How many BPF objects of a kind this JVM holds by fd (read from {@code /proc/self/fd}): the
   * count a leak raises, whatever other processes load meanwhile.
   */
  public static long ownFds(Kind kind) {
    long n = 0;
    try (var s = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
      for (var fd : s.toList()) {
        try {
          if (java.nio.file.Files.readSymbolicLink(fd).toString().equals(kind.target)) {
            n++;
          }
        } catch (IOException e) {
          // the listing's own fd, closed by now
        }
      }
    } catch (IOException e) {
      throw new AssertionError("listing /proc/self/fd: " + e, e);
    }
    return n;
  }

  /** How many uprobe links this JVM holds ({@code /proc/self/fdinfo}: {@code event_type: uprobe}). */
  public static long ownUprobeLinks() {
    long n = 0;
    try (var s = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fdinfo"))) {
      for (var info : s.toList()) {
        try {
          String text = java.nio.file.Files.readString(info);
          if (text.contains("link_id:") && text.lines().anyMatch(l -> l.startsWith("event_type:") && l.endsWith("uprobe"))) {
            n++;
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    } catch (IOException e) {
      throw new AssertionError("listing /proc/self/fdinfo: " + e, e);
    }
    return n;
  }
}
