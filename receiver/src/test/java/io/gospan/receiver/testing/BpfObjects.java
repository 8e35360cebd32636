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
 * lists them, each with the pids of the processes holding a file descriptor of it ({@code pids}:
 * [{pid, comm}]). Other gospans and BPF users run on a shared machine at the same time, so tests
 * judge only the objects held by processes they started: {@link #heldBy(Collection)}.
 */
public record BpfObjects(List<BpfObject> objects) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One program, map or link: {@code kind} prog|map|link, its id, name (links: their type), holders' pids. */
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

  /** The objects at least one of {@code pids} holds. */
  public List<BpfObject> heldBy(Collection<Long> pids) {
    return objects.stream().filter(o -> o.pids().stream().anyMatch(pids::contains)).toList();
  }

  /** The objects whose kind and id are among {@code earlier}'s (what is still there of them). */
  public List<BpfObject> stillThere(Collection<BpfObject> earlier) {
    return objects.stream()
        .filter(o -> earlier.stream().anyMatch(e -> e.kind().equals(o.kind()) && e.id() == o.id()))
        .toList();
  }
}
