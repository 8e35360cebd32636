package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.HeaderEvent;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.trace.IdGenerator;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What span assembly's bounded state weighs: the heap an in-flight stream and a held span retain
 * (after full GCs), against the per-entry bytes docs/reliability.md gives for {@code
 * streams.max_in_flight} and {@code streams.max_pending_links}.
 */
class AssemblerMemoryTest {
  /** Documented upper bounds per entry, bytes. */
  static final long STREAM_BOUND = 1536;
  static final long HELD_SPAN_BOUND = 2048;
  static final long LARGEST_STREAM_BOUND = 2048;

  static long usedHeapAfterGc() throws InterruptedException {
    var mem = ManagementFactory.getMemoryMXBean();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(50);
      used = Math.min(used, mem.getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  static SpanAssembler assembler(TestClock time, List<FinishedSpan> out) {
    return new SpanAssembler(new SpanAssembler.Settings(Duration.ofMinutes(2), 100_000, Duration.ofSeconds(2), 100_000,
        RpcSemconv.Mode.STABLE, Set.of()), MonotonicClock.of(time), new FakeMetadata(),
        SdkMeterProvider.builder().build().get("t"), out::add, IdGenerator.random());
  }

  @Test
  void anInFlightStreamAndAHeldSpanStayWithinTheirDocumentedBytes() throws Exception {
    int n = 20_000;
    TestClock time = new TestClock();
    List<FinishedSpan> out = new ArrayList<>();
    Events conn = new Events(40000);
    List<HeaderEvent> starts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      starts.add(conn.clientStart(2 * i + 1, time.now));
    }
    long before = usedHeapAfterGc();
    SpanAssembler a = assembler(time, out);
    for (HeaderEvent e : starts) {
      a.accept(e);
    }
    starts = null;
    long inFlight = usedHeapAfterGc() - before;

    // Server spans whose client is not traced: each ends and waits link_wait for a parent, held.
    Events servers = new Events(41000);
    long beforeHeld = usedHeapAfterGc();
    for (int i = 0; i < n; i++) {
      a.accept(servers.serverStart(2 * i + 1, time.now));
      a.accept(servers.serverTrailersOnly(2 * i + 1, time.now, 0, null));
    }
    long held = usedHeapAfterGc() - beforeHeld;
    assertThat(out).as("held, not exported yet").isEmpty();
    System.out.printf("span assembly: %d bytes per in-flight stream, %d per held span (%d of each)%n",
        inFlight / n, held / n, n);
    assertThat(inFlight / n).as("bytes per in-flight stream").isLessThanOrEqualTo(STREAM_BOUND);
    assertThat(held / n).as("bytes per held span").isLessThanOrEqualTo(HELD_SPAN_BOUND);
    assertThat(a).isNotNull(); // keeps the assembler reachable until here
  }

  /** What a call traced at both ends keeps after it ended: its client and server remembered for late events and questions. */
  static final long REMEMBERED_CALL_BOUND = 400;

  /**
   * Both ends of a call ended, linked and exported: span assembly still remembers the client by
   * its flow and the server by its key for {@code link_wait} (late server starts, StreamParents,
   * other gospans' questions), at most {@code streams.max_pending_links} of each. At high rates
   * the cap is reached, and whatever they keep is copied and promoted by the collector: they keep
   * ids as numbers, not the nodes and streams.
   */
  @Test
  void aRememberedCallKeepsItsIdsNotItsObjects() throws Exception {
    int n = 20_000;
    TestClock time = new TestClock();
    List<FinishedSpan> exported = new ArrayList<>();
    SpanAssembler a = new SpanAssembler(new SpanAssembler.Settings(Duration.ofMinutes(2), 100_000, Duration.ofSeconds(2),
        100_000, RpcSemconv.Mode.STABLE, Set.of()), MonotonicClock.of(time), new FakeMetadata(),
        SdkMeterProvider.builder().build().get("t"), f -> {
          if (exported.size() < 2) {
            exported.add(f); // the first call's two spans, to check they were linked
          }
        }, IdGenerator.random());
    Events conn = new Events(40000);
    long before = usedHeapAfterGc();
    for (int i = 0; i < n; i++) {
      int stream = 2 * i + 1;
      a.accept(conn.clientStart(stream, time.now));
      a.accept(conn.serverStart(stream, time.now + 10));
      a.accept(conn.serverTrailersOnly(stream, time.now + 20, 0, null));
      a.accept(conn.clientTrailersOnly(stream, time.now + 30, 0, null));
    }
    long remembered = usedHeapAfterGc() - before;
    System.out.printf("span assembly: %d bytes per remembered call (%d calls)%n", remembered / n, n);
    assertThat(a.inFlight()).isZero();
    assertThat(exported).hasSize(2);
    assertThat(exported.get(0).span().getTraceId()).isEqualTo(exported.get(1).span().getTraceId());
    assertThat(remembered / n).as("bytes per remembered call").isLessThanOrEqualTo(REMEMBERED_CALL_BOUND);
  }

  /** The largest start a record can carry: 10 fields (GOSPAN_MAX_FIELDS), each value 124 bytes, all kept. */
  @Test
  void anInFlightStreamWithTheLargestStartStaysWithinItsDocumentedBytes() throws Exception {
    int n = 5_000;
    TestClock time = new TestClock();
    List<String> names = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      names.add("x-meta-" + i);
    }
    SpanAssembler a = new SpanAssembler(new SpanAssembler.Settings(Duration.ofMinutes(2), 100_000, Duration.ofSeconds(2),
        100_000, RpcSemconv.Mode.STABLE, Set.copyOf(names)), MonotonicClock.of(time), new FakeMetadata(),
        SdkMeterProvider.builder().build().get("t"), f -> { }, IdGenerator.random());
    Events conn = new Events(40000);
    List<HeaderEvent> starts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      List<io.gospan.receiver.event.HeaderField> f = new ArrayList<>();
      f.add(io.gospan.receiver.event.HeaderField.of(":path", "/greeter.Greeter/" + "M".repeat(100) + i));
      f.add(io.gospan.receiver.event.HeaderField.of(":authority", "a".repeat(120) + i));
      f.add(io.gospan.receiver.event.HeaderField.of("traceparent", "00-" + "1".repeat(32) + "-" + "2".repeat(16) + "-01"));
      for (String name : names) {
        f.add(io.gospan.receiver.event.HeaderField.of(name, (name + i).repeat(20).substring(0, 124)));
      }
      starts.add(Events.ev(100, time.now, io.gospan.receiver.event.ProbeKind.LOOPY_WRITER_WRITE_HEADER,
          io.gospan.receiver.event.Side.CLIENT, conn.clientConn, null, 2 * i + 1, false, f));
    }
    long before = usedHeapAfterGc();
    for (HeaderEvent e : starts) {
      a.accept(e);
    }
    starts = null;
    long inFlight = usedHeapAfterGc() - before;
    System.out.printf("span assembly: %d bytes per in-flight stream with the largest start (%d of them)%n", inFlight / n, n);
    assertThat(a.inFlight()).isEqualTo(n);
    assertThat(inFlight / n).as("bytes per in-flight stream, largest start").isLessThanOrEqualTo(LARGEST_STREAM_BOUND);
  }
}
