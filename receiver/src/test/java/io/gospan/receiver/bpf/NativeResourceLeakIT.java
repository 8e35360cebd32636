package io.gospan.receiver.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Opening, loading, attaching and closing 200 times leaves nothing in the kernel (no link, map
 * or program of ours in {@code bpftool} listings) and no fd in this process. "Ours" by id: every
 * map, program and link id this JVM held (its /proc/self/fdinfo), so that another process's
 * objects of the same names (another gospan on the machine) are never counted.
 */
class NativeResourceLeakIT {

  static final String WRITE_HEADER =
      "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader";

  /** Ids of the maps, programs and links this JVM held: "map_id", "prog_id", "link_id" of /proc/self/fdinfo. */
  static final java.util.Map<String, java.util.Set<Long>> HELD = new java.util.concurrent.ConcurrentHashMap<>();

  static void recordHeld() throws java.io.IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fdinfo"))) {
      for (Path fd : fds.toList()) {
        try {
          for (String line : Files.readAllLines(fd)) {
            for (String key : List.of("map_id", "prog_id", "link_id")) {
              if (line.startsWith(key + ":")) {
                HELD.computeIfAbsent(key, k -> java.util.concurrent.ConcurrentHashMap.newKeySet())
                    .add(Long.parseLong(line.substring(key.length() + 1).strip()));
              }
            }
          }
        } catch (java.io.IOException | RuntimeException e) {
          // closed meanwhile
        }
      }
    }
  }

  /** How many of the {@code what}s ("map", "prog", "link") this JVM held bpftool still lists. */
  static long stillListed(String what) {
    java.util.Set<Long> held = HELD.getOrDefault(what + "_id", java.util.Set.of());
    long n = 0;
    for (com.fasterxml.jackson.databind.JsonNode node : Bpftool.list(what)) {
      if (held.contains(node.path("id").asLong())) {
        n++;
      }
    }
    return n;
  }

  @Test
  void twoHundredOpenAttachCloseCyclesLeaveNothingBehind() throws Exception {
    Path server = ExampleApps.build().resolve("greeter-server");
    String ourProg = "uprobe_loopy_writer_write_header";
    cycle(server, 0); // warm-up: the JVM opens jars and native libraries once, lazily
    List<String> fdsBefore = openFds();

    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o").load();
        BpfLink link = obj.program(ourProg).attachUprobe(server, WRITE_HEADER, BpfProgram.ALL_PIDS, 0)) {
      recordHeld();
      // while open, the kernel does list them: the checks below can see a leak
      assertThat(stillListed("prog")).as("our programs listed while open").isPositive();
      assertThat(stillListed("map")).as("our maps listed while open").isPositive();
      assertThat(stillListed("link")).as("our link listed while open").isPositive();
    }
    for (int i = 0; i < 200; i++) {
      cycle(server, i);
    }

    // The kernel frees maps, programs and links from deferred work after their last reference
    // goes: allow it a moment (bounded) before calling what is still listed a leak.
    long deadline = System.nanoTime() + 10_000_000_000L;
    while ((stillListed("map") > 0 || stillListed("prog") > 0 || stillListed("link") > 0) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertThat(HELD.get("prog_id")).as("programs held over the cycles").hasSizeGreaterThan(200);
    assertThat(stillListed("map")).as("our maps left in the kernel").isZero();
    assertThat(stillListed("prog")).as("our programs left").isZero();
    assertThat(stillListed("link")).as("links left").isZero();
    List<String> fdsAfter = openFds();
    assertThat(fdsAfter.size())
        .as("fds of this JVM, before: %s; after: %s", fdsBefore, fdsAfter)
        .isLessThanOrEqualTo(fdsBefore.size() + 2);
  }

  /** Open, load, attach, open a ring buffer, close: half the links explicitly, half by the object. */
  private static void cycle(Path server, int i) {
    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o")) {
      obj.map("events").setMaxEntries(1 << 16); // keep 200 loads light on locked memory
      obj.load();
      BpfLink link =
          obj.program("uprobe_loopy_writer_write_header").attachUprobe(server, WRITE_HEADER, BpfProgram.ALL_PIDS, 0);
      try (RingBuffer rb = RingBuffer.open(obj.map("events"), r -> { })) {
        assertThat(link.fd()).isPositive();
        rb.poll(0);
      }
      try {
        recordHeld();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      if (i % 2 == 0) {
        link.close();
      }
    }
  }

  /** What this JVM's fds point to ({@code /proc/self/fd}), sorted. */
  private static List<String> openFds() throws Exception {
    List<String> targets = new java.util.ArrayList<>();
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : s.toList()) {
        try {
          targets.add(Files.readSymbolicLink(fd).toString());
        } catch (java.io.IOException e) {
          targets.add("?"); // the listing's own fd, closed by now
        }
      }
    }
    java.util.Collections.sort(targets);
    return targets;
  }
}
