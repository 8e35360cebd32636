package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.bpf.BpfMap;
import io.gospan.receiver.bpf.BpfObject;
import io.gospan.receiver.bpf.BpfProgram;
import io.gospan.receiver.bpf.RingBuffer;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.GoTruth;
import io.gospan.receiver.testing.TruthOffsets;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real grpc.bpf.o, loaded through the Java binding, with an entry uprobe on
 * {@code (*loopyWriter).writeHeader} in the example server (attached by file offset) and client
 * (attached by symbol name). Argument locations and the {@code loopyWriter.side} offset come
 * from each binary's DWARF (via Go's debug/dwarf), never from constants.
 */
class WriteHeaderProbeIT {

  static final String WRITE_HEADER =
      "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader";

  static Path examples;

  @BeforeAll
  static void buildExamples() {
    examples = ExampleApps.build();
  }

  /** Registers a binary in a slot of {@code binaries} and in {@code slot_by_exe}, as GrpcProbes does. */
  static void putBinary(BpfObject obj, int slot, Path binary) throws Exception {
    ByteBuffer b = GrpcLayouts.BINARY.allocate();
    b.put(GrpcLayouts.BINARY.offset("exe"), ExeKey.of(binary).toBytes());
    b.putLong(GrpcLayouts.BINARY.offset("generation"), 1);
    b.put(GrpcLayouts.BINARY.offset("offsets"), TruthOffsets.forBinary(binary).toBytes());
    try (io.gospan.offsets.GoBinary g = io.gospan.offsets.GoBinary.open(binary)) {
      BinaryLayout.of(g).writeTo(b);
    }
    byte[] key = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(slot).array();
    obj.map("binaries").update(key, b.array(), BpfMap.BPF_ANY);
    obj.map("slot_by_exe").update(ExeKey.of(binary).toBytes(), key, BpfMap.BPF_ANY);
  }

  @Test
  void recordsCarryStreamIdsEndStreamAndSideReadFromTheGoRegisters() throws Exception {
    Path server = examples.resolve("greeter-server");
    Path client = examples.resolve("greeter-client");
    long serverFileOffset =
        GoTruth.fileOffset(GoTruth.query(server, List.of(WRITE_HEADER), List.of()), WRITE_HEADER);
    List<EventRecord> records = new ArrayList<>();

    BpfObject object = BpfObject.openResource("grpc.bpf.o");
    // every writeHeader is recorded: the server's response headers too (else skipped, counted)
    object.setGlobal("capture_response_headers", new byte[] {1});
    try (BpfObject obj = object.load()) {
      // attached without cookies below: the probes find these slots by the executable
      putBinary(obj, 0, server);
      putBinary(obj, 1, client);
      BpfProgram prog = obj.program("uprobe_loopy_writer_write_header");
      prog.attachUprobe(server, serverFileOffset, BpfProgram.ALL_PIDS, 0);
      prog.attachUprobe(client, WRITE_HEADER, BpfProgram.ALL_PIDS, 0);

      try (RingBuffer rb = RingBuffer.open(obj.map("events"), r -> records.add(EventRecord.decode(r)));
          ExampleApps.Server s = ExampleApps.startServer(examples)) {
        JsonNode summary = ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-n", "5");
        assertThat(summary.path("codes").path("OK").asInt()).isEqualTo(5);
        JsonNode failed =
            ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-n", "1", "-fail-code", "NOT_FOUND");
        assertThat(failed.path("codes").path("NOT_FOUND").asInt()).isEqualTo(1);

        // 5 OK calls: client request headers + server headers + server trailers = 15;
        // the NOT_FOUND call: client request headers + server trailers-only = 2.
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (records.size() < 17 && System.nanoTime() < deadline) {
          rb.poll(100);
        }
        rb.poll(200); // anything extra would be a defect
        long serverPid = s.pid();

        List<EventRecord> fromClients =
            records.stream().filter(r -> r.pid() != serverPid).collect(Collectors.toList());
        List<EventRecord> fromServer =
            records.stream().filter(r -> r.pid() == serverPid).collect(Collectors.toList());
        assertThat(records).as("all records").hasSize(17);

        // Client side: one request-headers write per call; each client is a new connection,
        // so stream ids are 1, 3, 5, 7, 9 for the first client and 1 for the second.
        assertThat(fromClients).allSatisfy(r -> {
          assertThat(r.probe()).isEqualTo(GrpcProbe.LOOPY_WRITER_WRITE_HEADER.id());
          assertThat(r.side()).isEqualTo(GrpcConstants.SIDE_CLIENT);
          assertThat(r.endStream()).isFalse();
        });
        assertThat(fromClients).extracting(EventRecord::streamId).containsExactly(1L, 3L, 5L, 7L, 9L, 1L);
        assertThat(fromClients.stream().map(EventRecord::pid).distinct()).hasSize(2);

        // Server side: headers (endStream false) then trailers (endStream true) per OK call;
        // trailers-only (endStream true) for the NOT_FOUND call.
        assertThat(fromServer).allSatisfy(r -> assertThat(r.side()).isEqualTo(GrpcConstants.SIDE_SERVER));
        assertThat(fromServer)
            .extracting(r -> r.streamId() + (r.endStream() ? "/end" : "/headers"))
            .containsExactly(
                "1/headers", "1/end", "3/headers", "3/end", "5/headers", "5/end", "7/headers", "7/end",
                "9/headers", "9/end", "1/end");
        assertThat(records).allSatisfy(r -> assertThat(r.tsNs()).isPositive());
        assertThat(records).extracting(EventRecord::tsNs).isSorted();
      }

      // Counters: every hit sent an event; none was lost, none lacked offsets.
      long[] c = counters(obj.map("probe_counters"), GrpcProbe.LOOPY_WRITER_WRITE_HEADER.id());
      assertThat(c[GrpcConstants.COUNTER_HITS]).as("hits").isEqualTo(17);
      assertThat(c[GrpcConstants.COUNTER_EVENTS_SENT]).as("events sent").isEqualTo(17);
      assertThat(c[GrpcConstants.COUNTER_RING_BUFFER_FULL]).as("ring buffer full").isZero();
      assertThat(c[GrpcConstants.COUNTER_READ_FAILED]).as("read failed").isZero();
      assertThat(c[GrpcConstants.COUNTER_NO_OFFSETS]).as("no offsets").isZero();
    }
  }

  /** The per-probe counters ({@code enum gospan_counter}), summed over CPUs. */
  static long[] counters(BpfMap map, int probe) {
    long[] out = new long[GrpcConstants.COUNTER_COUNT];
    for (int i = 0; i < out.length; i++) {
      byte[] key = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(probe * GrpcConstants.COUNTER_COUNT + i).array();
      ByteBuffer v = ByteBuffer.wrap(map.lookup(key).orElseThrow()).order(ByteOrder.LITTLE_ENDIAN);
      while (v.remaining() >= 8) {
        out[i] += v.getLong();
      }
    }
    return out;
  }
}
