package io.gospan.receiver.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.testing.GoTruth;
import io.gospan.receiver.testing.TruthOffsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

/**
 * Test helper: the real probes loaded, binaries registered with offsets and function file
 * offsets from their DWARF/symbols (gotruth), events and raw records collected.
 */
final class ProbeSession implements AutoCloseable {
  final List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
  final List<byte[]> raw = Collections.synchronizedList(new ArrayList<>());
  final GrpcProbes probes;

  ProbeSession() {
    probes =
        GrpcProbes.open(
            HeaderNames.defaults(),
            1 << 24,
            events::add,
            r -> {
              byte[] b = new byte[r.remaining()];
              r.get(b);
              raw.add(b);
            });
  }

  /** Registers and attaches every probe to a binary. */
  ProbeSession trace(Path binary) throws Exception {
    probes.putBinary(ExeKey.of(binary), TruthOffsets.forBinary(binary));
    JsonNode t = TruthOffsets.truth(binary);
    for (GrpcProbe p : GrpcProbe.values()) {
      probes.attach(p, binary, GoTruth.fileOffset(t, p.function()));
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
