package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.event.HeaderEvent;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

/**
 * Test helper: the real probes loaded, binaries registered and attached the way the sidecar
 * does it, events and raw records collected.
 */
final class ProbeSession implements AutoCloseable {
  final List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
  final List<byte[]> raw = Collections.synchronizedList(new ArrayList<>());
  final GrpcProbes probes;

  /**
   * Extra header names, so every event is recorded (response headers before the trailers too)
   * and allowed metadata is captured on requests (user-agent).
   */
  static final HeaderNames ALL_EVENTS = HeaderNames.of(List.of("x-gospan-test", "user-agent"));

  ProbeSession() {
    this(ALL_EVENTS);
  }

  ProbeSession(HeaderNames names) {
    this(GrpcProbes.OBJECT, names);
  }

  /** With another build of grpc.bpf.c (e.g. {@code test/grpc_compat.bpf.o}). */
  ProbeSession(String object, HeaderNames names) {
    probes =
        GrpcProbes.open(
            GrpcProbes.Options.of(names, 1 << 24, events::add)
                .withObject(object)
                .withRawTap(
                    r -> {
                      byte[] b = new byte[r.remaining()];
                      r.get(b);
                      raw.add(b);
                    }));
  }

  /**
   * Registers and attaches every probe to a binary, with offsets and function entries from
   * gospan's own resolver (the production path; ProbeOffsetsIT compares it with Go's
   * debug/dwarf).
   */
  ProbeSession trace(Path binary) throws Exception {
    OffsetsResolution r;
    java.util.Optional<long[]> readOnlyData;
    try (GoBinary b = GoBinary.open(binary)) {
      r = OffsetsResolver.resolve(b);
      readOnlyData = b.elf().readOnlyData();
    }
    assertThat(r.attachable()).as("%s: %s", binary, r.missing()).containsAll(Probe.grpcTransport());
    probes.putBinary(ExeKey.of(binary), ProbeOffsets.toGoOffsets(r), readOnlyData);
    for (Probe p : r.attachable()) {
      probes.attach(ProbeOffsets.probe(p), ExeKey.of(binary), binary, r.functions().get(p).fileOffset());
    }
    return this;
  }

  /** Polls until {@code done} holds for the events so far (bounded), then drains briefly. */
  List<HeaderEvent> pollUntil(Predicate<List<HeaderEvent>> done, long timeoutMs) {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000;
    while (System.nanoTime() < deadline) {
      probes.poll(50);
      synchronized (events) {
        if (done.test(events)) {
          break;
        }
      }
    }
    probes.poll(100);
    synchronized (events) {
      return new ArrayList<>(events);
    }
  }

  @Override
  public void close() {
    probes.close();
  }
}
