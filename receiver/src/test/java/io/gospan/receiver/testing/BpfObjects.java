package io.gospan.receiver.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * Test helper: the kernel's BPF programs, maps and links as {@code bpftool -j prog|map|link show}
 * lists them. Other gospans and BPF users run on a shared machine at the same time, so tests judge
 * only the objects held by processes they started: {@link #heldBy(Collection)} reads those
 * processes' file descriptors ({@code /proc/<pid>/fd} links {@code anon_inode:bpf-prog},
 * {@code bpf-map}, {@code bpf_link}; the id from {@code /proc/<pid>/fdinfo}: {@code prog_id},
 * {@code map_id}, {@code link_id}), as bpftool's own {@code pids} field would if Debian's bpftool
 * 7.1 were built with it.
 */
public record BpfObjects(List<BpfObject> objects) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One program, map or link: {@code kind} prog|map|link, its id, name (links: their type), holders' pids where known. */
  public record BpfObject(String kind, long id, String name, Set<Long> pids) {
    @Override
    public String toString() {
      return kind + " " + id + " " + name + " pids=" + pids;
    }
  }

  /** What bpftool lists now. */
  public static BpfObjects now() {
    List<BpfObject> all = new ArrayList<>();
    for (String kind : List.of("prog", "map", "link")) {
      String out = ExampleApps.run(List.of("bpftool", "-j", kind, "show"), 60);
      JsonNode arr;
      try {
        arr = JSON.readTree(out.isBlank() ? "[]" : out);
      } catch (IOException e) {
        throw new AssertionError("bpftool -j " + kind + " show: not JSON: " + out, e);
      }
      for (JsonNode o : arr) {
        Set<Long> pids = new java.util.TreeSet<>();
        o.path("pids").forEach(p -> pids.add(p.path("pid").asLong()));
        String name = kind.equals("link") ? o.path("type").asText() : o.path("name").asText();
        all.add(new BpfObject(kind, o.path("id").asLong(), name, pids));
      }
    }
    return new BpfObjects(all);
  }

  /** The objects listed now that at least one of {@code pids} holds a file descriptor of. */
  public List<BpfObject> heldBy(Collection<Long> pids) {
    java.util.Map<String, Set<Long>> held = new java.util.HashMap<>(); // "kind id" -> pids
    for (long pid : pids) {
      java.nio.file.Path fds = java.nio.file.Path.of("/proc", Long.toString(pid), "fd");
      try (var list = java.nio.file.Files.list(fds)) {
        for (java.nio.file.Path fd : list.toList()) {
          String target;
          try {
            target = java.nio.file.Files.readSymbolicLink(fd).toString();
          } catch (IOException e) {
            continue; // closed meanwhile
          }
          String kind = target.contains("bpf-prog") ? "prog" : target.contains("bpf-map") ? "map"
              : target.contains("bpf_link") ? "link" : null;
          if (kind == null) {
            continue;
          }
          String info;
          try {
            info = java.nio.file.Files.readString(java.nio.file.Path.of("/proc", Long.toString(pid), "fdinfo",
                fd.getFileName().toString()));
          } catch (IOException e) {
            continue;
          }
          java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + kind + "_id:\\s*(\\d+)").matcher(info);
          if (m.find()) {
            held.computeIfAbsent(kind + " " + m.group(1), k -> new java.util.TreeSet<>()).add(pid);
          }
        }
      } catch (IOException e) {
        throw new AssertionError("cannot list " + fds + ": " + e, e);
      }
    }
    return objects.stream()
        .filter(o -> held.containsKey(o.kind() + " " + o.id()))
        .map(o -> new BpfObject(o.kind(), o.id(), o.name(), held.get(o.kind() + " " + o.id())))
        .toList();
  }

  /** The objects whose kind and id are among {@code earlier}'s (what is still there of them). */
  public List<BpfObject> stillThere(Collection<BpfObject> earlier) {
    return objects.stream()
        .filter(o -> earlier.stream().anyMatch(e -> e.kind().equals(o.kind()) && e.id() == o.id()))
        .toList();
  }
}
