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
 * Opening, loading, attaching and closing 200 times leaves nothing behind: no BPF map, program or
 * link held by this JVM (counted from its own fds, so that other processes loading BPF meanwhile,
 * e.g. another gospan, do not count) and no other fd.
 */
class NativeResourceLeakIT {

  static final String WRITE_HEADER =
      "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader";

  @Test
  void twoHundredOpenAttachCloseCyclesLeaveNothingBehind() throws Exception {
    Path server = ExampleApps.build().resolve("greeter-server");
    String ourProg = "uprobe_loopy_writer_write_header";
    cycle(server, 0); // warm-up: the JVM opens jars and native libraries once, lazily
    long mapsBefore = Bpftool.ownFds(Bpftool.Kind.MAP);
    long progsBefore = Bpftool.ownFds(Bpftool.Kind.PROG);
    long linksBefore = Bpftool.ownFds(Bpftool.Kind.LINK);
    List<String> fdsBefore = openFds();

    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o").load();
        BpfLink link = obj.program(ourProg).attachUprobe(server, WRITE_HEADER, BpfProgram.ALL_PIDS, 0)) {
      // while open, they are counted: the checks below can see a leak
      assertThat(Bpftool.ownFds(Bpftool.Kind.MAP)).isGreaterThan(mapsBefore);
      assertThat(Bpftool.ownFds(Bpftool.Kind.PROG)).isGreaterThan(progsBefore);
      assertThat(Bpftool.ownFds(Bpftool.Kind.LINK)).isEqualTo(linksBefore + 1);
      assertThat(countNamed("prog", List.of(ourProg))).as("the kernel lists the program").isPositive();
    }
    for (int i = 0; i < 200; i++) {
      cycle(server, i);
    }

    assertThat(Bpftool.ownFds(Bpftool.Kind.MAP)).as("BPF maps this JVM still holds").isEqualTo(mapsBefore);
    assertThat(Bpftool.ownFds(Bpftool.Kind.PROG)).as("BPF programs this JVM still holds").isEqualTo(progsBefore);
    assertThat(Bpftool.ownFds(Bpftool.Kind.LINK)).as("BPF links this JVM still holds").isEqualTo(linksBefore);
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
