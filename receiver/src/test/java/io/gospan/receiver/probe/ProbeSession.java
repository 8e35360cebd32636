package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.discovery.BinaryInspection;
import io.gospan.receiver.discovery.ProbeAttacher;
import io.gospan.receiver.discovery.ProcFs;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.StreamParent;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

/**
 * Test helper: the real probes loaded, binaries registered and attached by the sidecar's own
 * {@link ProbeAttacher}, events and raw records collected (polled on the test's thread, which
 * owns the attacher).
 */
final class ProbeSession implements AutoCloseable {
  final List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
  /** The StreamParent records (in-process propagation), in arrival order. */
  final List<StreamParent> parents = Collections.synchronizedList(new ArrayList<>());
  final List<byte[]> raw = Collections.synchronizedList(new ArrayList<>());
  final GrpcProbes probes;
  final ProbeAttacher attacher;

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
            GrpcProbes.Options.of(names, 1 << 24, e -> {
                  if (e instanceof HeaderEvent h) {
                    events.add(h);
                  } else if (e instanceof StreamParent sp) {
                    parents.add(sp);
                  }
                })
                .withObject(object)
                .withRawTap(
                    r -> {
                      byte[] b = new byte[r.remaining()];
                      r.get(b);
                      raw.add(b);
                    }));
    attacher = new ProbeAttacher(probes, ProcFs.system());
    // on the polling thread, i.e. the test's thread, the attacher's only one
    probes.onServeHttpGrpc(attacher::serveHttpInUse);
  }

  /**
   * Registers a binary and attaches its probes with the sidecar's own {@link ProbeAttacher}, as
   * gospan's {@link BinaryInspection} plans them (offsets and function entries from gospan's own
   * resolver; ProbeOffsetsIT compares it with Go's debug/dwarf): hpack WriteField waits until a
   * ServeHTTP path serves gRPC, as in the sidecar. A binary traced already is registered again
   * (its offsets rewritten, in a new slot if its slot was freed); its links stay.
   */
  ProbeSession trace(Path binary) throws Exception {
    BinaryInspection inspection = BinaryInspection.inspect(binary, Preference.DWARF);
    assertThat(inspection.attachable()).as("%s: %s", binary, inspection.refused()).containsAll(Probe.grpcTransport());
    ExeKey key = ExeKey.of(binary);
    if (attacher.binary(key).isPresent()) {
      probes.putBinary(key, ProbeOffsets.toGoOffsets(inspection.resolution().orElseThrow()), inspection.layout());
      return this;
    }
    ProbeAttacher.Outcome o = attacher.attach(key, binary, binary.toString(), inspection);
    assertThat(o.failure()).as("%s", binary).isNull();
    assertThat(o.binary().attached()).as("%s: %s", binary, o.binary().refused()).containsAll(Probe.grpcTransport());
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
    attacher.close();
    probes.close();
  }
}
