package io.gospan.receiver.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Opening, loading, attaching and closing 200 times leaves nothing in the kernel (no link, map
 * or program of ours in {@code bpftool} listings) and no fd in this process.
 */
class NativeResourceLeakIT {

  static final String WRITE_HEADER =
      "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader";

  @Test
  void twoHundredOpenAttachCloseCyclesLeaveNothingBehind() throws Exception {
    Path server = ExampleApps.build().resolve("greeter-server");
    List<String> ourMaps = List.of("binaries", "slot_by_exe", "header_names", "events", "probe_counters");
    String ourProg = "uprobe_loopy_writer_write_header";
    cycle(server, 0); // warm-up: the JVM opens jars and native libraries once, lazily
    // the kernel frees the warm-up's maps, program and links from deferred work: count once
    // they are gone
    long mapsBefore = settled(() -> countNamed("map", ourMaps));
    long progsBefore = settled(() -> countNamed("prog", List.of(ourProg)));
    long linksBefore = settled(() -> Bpftool.list("link").size());
    List<String> fdsBefore = openFds();

    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o").load();
        BpfLink link = obj.program(ourProg).attachUprobe(server, WRITE_HEADER, BpfProgram.ALL_PIDS, 0)) {
      // while open, the kernel does list them: the checks below can see a leak
      assertThat(countNamed("prog", List.of(ourProg))).isEqualTo(progsBefore + 1);
      assertThat(Bpftool.list("link").size()).isEqualTo(linksBefore + 1);
    }
    for (int i = 0; i < 200; i++) {
      cycle(server, i);
    }

    // The kernel frees maps, programs and links from deferred work after their last reference
    // goes: allow it a moment (bounded) before calling what is still listed a leak.
    long deadline = System.nanoTime() + 10_000_000_000L;
    while ((countNamed("map", ourMaps) > mapsBefore || countNamed("prog", List.of(ourProg)) > progsBefore
            || Bpftool.list("link").size() > linksBefore)
        && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertThat(countNamed("map", ourMaps)).as("our maps left in the kernel").isEqualTo(mapsBefore);
    assertThat(countNamed("prog", List.of(ourProg))).as("our programs left").isEqualTo(progsBefore);
    assertThat(Bpftool.list("link").size()).as("links left").isEqualTo(linksBefore);
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
      if (i % 2 == 0) {
        link.close();
      }
    }
  }

  /** A count once it has stopped changing: the same 3 times, 200 ms apart (at most 10 s). */
  private static long settled(java.util.function.LongSupplier count) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    long last = count.getAsLong();
    int same = 1;
    while (same < 3 && System.nanoTime() < deadline) {
      Thread.sleep(200);
      long now = count.getAsLong();
      same = now == last ? same + 1 : 1;
      last = now;
    }
    return last;
  }

  private static long countNamed(String what, List<String> names) {
    long n = 0;
    for (JsonNode node : Bpftool.list(what)) {
      String listed = node.path("name").asText();
      // bpftool prints a program's full name from its BTF, a map's as the kernel keeps it
      // (15 characters)
      if (names.stream().anyMatch(ours -> ours.equals(listed) || Bpftool.kernelName(ours).equals(listed))) {
        n++;
      }
    }
    return n;
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
