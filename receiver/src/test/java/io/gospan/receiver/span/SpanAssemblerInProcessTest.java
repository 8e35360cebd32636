package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.StreamParent;
import io.gospan.receiver.event.StreamParentVia;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * In-process parents: a client stream created while a server stream of the same process was being
 * served ({@link StreamParent}) becomes that server span's child and takes its trace id. Processes:
 * a front client ({@value #FRONT}), a relay ({@value #RELAY}: serves the front, calls the back), a
 * back server ({@value #BACK}).
 */
class SpanAssemblerInProcessTest {
  static final long MS = 1_000_000L;
  static final int FRONT = 100;
  static final int RELAY = 300;
  static final int BACK = 200;
  static final String FRONT_METHOD = "test.Front/Call";

  TestClock time;
  InMemoryMetricReader metrics;
  List<FinishedSpan> out;
  SpanAssembler assembler;
  long t0;
  Events hop1; // front -> relay
  Events hop2a; // relay -> back
  Events hop2b; // relay -> back, a second connection

  @BeforeEach
  void setUp() {
    time = new TestClock();
    t0 = time.now;
    hop1 = new Events(FRONT, RELAY, 0xc000_a100L, 0xc000_b100L, 41000).path("/" + FRONT_METHOD);
    hop2a = new Events(RELAY, BACK, 0xc000_a200L, 0xc000_b200L, 42000).path("/test.Back/A");
    hop2b = new Events(RELAY, BACK, 0xc000_a201L, 0xc000_b201L, 42001).path("/test.Back/B");
    build(100);
  }

  void build(int maxPendingLinks) {
    build(Duration.ofSeconds(2), maxPendingLinks);
  }

  void build(Duration linkWait, int maxPendingLinks) {
    metrics = InMemoryMetricReader.create();
    out = new ArrayList<>();
    assembler =
        new SpanAssembler(
            new SpanAssembler.Settings(Duration.ofSeconds(30), 1000, linkWait, maxPendingLinks, RpcSemconv.Mode.STABLE, Set.of()),
            MonotonicClock.of(time), new FakeMetadata(),
            SdkMeterProvider.builder().registerMetricReader(metrics).build().get("test"), out::add, IdGenerator.random());
  }

  void feed(ProbeEvent... events) {
    for (ProbeEvent e : events) {
      assembler.accept(e);
    }
  }

  void feed(List<ProbeEvent> events) {
    events.forEach(assembler::accept);
  }

  void waitMillis(long ms) {
    time.advanceMillis(ms);
    assembler.expire();
  }

  long counter(AssemblyMetrics m) {
    long sum = 0;
    for (MetricData d : metrics.collectAllMetrics()) {
      if (d.getName().equals(m.metricName())) {
        for (var p : d.getData().getPoints()) {
          sum += ((LongPointData) p).getValue();
        }
      }
    }
    return sum;
  }

  /** StreamParents by result. */
  Map<String, Long> results() {
    Map<String, Long> r = new TreeMap<>();
    for (MetricData d : metrics.collectAllMetrics()) {
      if (d.getName().equals(AssemblyMetrics.LINKS_IN_PROCESS.metricName())) {
        for (var p : d.getData().getPoints()) {
          r.merge(p.getAttributes().get(AssemblyMetrics.RESULT), ((LongPointData) p).getValue(), Long::sum);
        }
      }
    }
    return r;
  }

  SpanData span(Side side, int pid, String name) {
    List<SpanData> l =
        out.stream().filter(f -> f.side() == side && f.pid() == pid && f.span().getName().equals(name)).map(FinishedSpan::span).toList();
    assertThat(l).as("%s %d %s in %s", side, pid, name, out).hasSize(1);
    return l.get(0);
  }

  // ------------------------------------------------------------------ the chain

  /** One front call: the relay serves it and calls the back twice, in the order the probes fire. */
  List<ProbeEvent> chain() {
    return List.of(
        hop1.clientStart(1, t0),
        hop1.serverStart(1, t0 + MS),
        hop2a.streamParent(1, t0 + 2 * MS, hop1, 1),
        hop2a.clientStart(1, t0 + 2 * MS),
        hop2b.streamParent(1, t0 + 3 * MS, hop1, 1),
        hop2b.clientStart(1, t0 + 3 * MS),
        hop2a.serverStart(1, t0 + 4 * MS),
        hop2b.serverStart(1, t0 + 4 * MS),
        hop2a.serverTrailersOnly(1, t0 + 5 * MS, 0, null),
        hop2b.serverTrailersOnly(1, t0 + 5 * MS, 0, null),
        hop2a.clientTrailersOnly(1, t0 + 6 * MS, 0, null),
        hop2b.clientTrailersOnly(1, t0 + 6 * MS, 0, null),
        hop1.serverTrailersOnly(1, t0 + 7 * MS, 0, null),
        hop1.clientTrailersOnly(1, t0 + 8 * MS, 0, null));
  }

  /** front client -> relay server -> two relay clients -> two back servers, exact parent ids, one trace id. */
  void assertChain() {
    SpanData front = span(Side.CLIENT, FRONT, FRONT_METHOD);
    SpanData relay = span(Side.SERVER, RELAY, FRONT_METHOD);
    SpanData relayA = span(Side.CLIENT, RELAY, "test.Back/A");
    SpanData relayB = span(Side.CLIENT, RELAY, "test.Back/B");
    SpanData backA = span(Side.SERVER, BACK, "test.Back/A");
    SpanData backB = span(Side.SERVER, BACK, "test.Back/B");
    assertThat(out).hasSize(6);
    assertThat(front.getParentSpanContext().isValid()).isFalse();
    assertThat(relay.getParentSpanId()).isEqualTo(front.getSpanId());
    assertThat(relay.getParentSpanContext().isRemote()).isTrue();
    assertThat(relayA.getParentSpanId()).isEqualTo(relay.getSpanId());
    assertThat(relayB.getParentSpanId()).isEqualTo(relay.getSpanId());
    assertThat(relayA.getParentSpanContext().isRemote()).as("a parent in the same process").isFalse();
    assertThat(backA.getParentSpanId()).isEqualTo(relayA.getSpanId());
    assertThat(backB.getParentSpanId()).isEqualTo(relayB.getSpanId());
    assertThat(out).allSatisfy(f -> assertThat(f.span().getTraceId()).isEqualTo(front.getTraceId()));
    assertThat(out.stream().map(f -> f.span().getSpanId()).distinct()).hasSize(6);
    assertThat(assembler.heldServerSpans() + assembler.heldClientSpans()).isZero();
  }

  @Test
  void chainThroughARelayIsOneTraceWithExactParents() {
    feed(chain());
    // In the probes' own order every trace id is decided when it is needed: nothing waits.
    assertChain();
    assertThat(results()).isEqualTo(Map.of("linked", 2L));
    assertThat(counter(AssemblyMetrics.SPANS_LINKED)).isEqualTo(3);
    assertThat(counter(AssemblyMetrics.LINKS_OVERFLOW)).isZero();
  }

  /**
   * The chain handed over in runs ({@link SpanAssembler#acceptAll}, as the ring buffer's reader
   * does), cut at every point into two runs, and as one run: the same six spans, parents and trace
   * as one event at a time.
   */
  @Test
  void chainHandedOverInRunsIsTheSameWhereverTheRunsAreCut() {
    ProbeEvent[] events = chain().toArray(new ProbeEvent[0]);
    for (int cut = 0; cut <= events.length; cut++) {
      build(100);
      assembler.acceptAll(events, 0, cut);
      assembler.acceptAll(events, cut, events.length);
      assertChain();
      assertThat(results()).as("cut at %d", cut).isEqualTo(Map.of("linked", 2L));
      assertThat(counter(AssemblyMetrics.SPANS_LINKED)).as("cut at %d", cut).isEqualTo(3);
    }
  }

  @Test
  void chainWhateverOrderTheRelaysEventsArriveIn() {
    // Reversed within each kind of event: the StreamParents first, then ends before starts.
    List<ProbeEvent> c = chain();
    List<ProbeEvent> reordered = new ArrayList<>();
    reordered.add(c.get(4));
    reordered.add(c.get(2));
    for (int i = c.size() - 1; i >= 0; i--) {
      if (!(c.get(i) instanceof StreamParent)) {
        reordered.add(c.get(i));
      }
    }
    feed(reordered);
    waitMillis(2_000);
    assertChain();
    assertThat(results()).isEqualTo(Map.of("linked", 2L));
  }

  // ------------------------------------------------------------------ the relay server's trace id decided late

  @Test
  void serverSpanLinkedToItsRemoteClientAfterItsChildrenArrivedGivesThemItsTraceId() {
    List<ProbeEvent> c = chain();
    ProbeEvent frontStart = c.get(0);
    ProbeEvent frontEnd = c.get(c.size() - 1);
    for (ProbeEvent e : c) {
      if (e != frontStart && e != frontEnd) {
        feed(e);
      }
    }
    // The relay server span may still get its client: it and everything below it wait.
    assertThat(out).isEmpty();
    assertThat(assembler.heldServerSpans()).isEqualTo(3);
    assertThat(assembler.heldClientSpans()).isEqualTo(2);
    waitMillis(1_000);
    assertThat(out).isEmpty();
    feed(frontStart); // the front client's start arrives late: the relay server span is its child
    assertThat(out).hasSize(5);
    feed(frontEnd);
    assertChain();
  }

  @Test
  void serverSpanNobodyLinksIsTheRootOfItsChildrenAfterLinkWait() {
    List<ProbeEvent> c = chain();
    feed(c.subList(1, c.size() - 1)); // the front client is not traced
    waitMillis(1_999);
    assertThat(out).isEmpty();
    waitMillis(1); // link_wait after the relay server span's start: decided, and everything below it
    assertThat(out).hasSize(5);
    SpanData relay = span(Side.SERVER, RELAY, FRONT_METHOD);
    assertThat(relay.getParentSpanContext().isValid()).isFalse();
    assertThat(span(Side.CLIENT, RELAY, "test.Back/A").getParentSpanId()).isEqualTo(relay.getSpanId());
    assertThat(span(Side.SERVER, BACK, "test.Back/B").getParentSpanId())
        .isEqualTo(span(Side.CLIENT, RELAY, "test.Back/B").getSpanId());
    assertThat(out).allSatisfy(f -> assertThat(f.span().getTraceId()).isEqualTo(relay.getTraceId()));
  }

  @Test
  void traceparentOnTheRelaysServerStreamGivesTheChainItsTraceId() {
    String tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    hop1.withRequestHeader("traceparent", tp);
    feed(chain());
    SpanData relay = span(Side.SERVER, RELAY, FRONT_METHOD);
    SpanData relayA = span(Side.CLIENT, RELAY, "test.Back/A");
    SpanData backA = span(Side.SERVER, BACK, "test.Back/A");
    assertThat(relay.getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(relay.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
    assertThat(relayA.getParentSpanId()).isEqualTo(relay.getSpanId());
    assertThat(relayA.getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(backA.getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
  }

  // ------------------------------------------------------------------ what wins, what is rejected

  @Test
  void traceparentTheApplicationSentOnTheClientStreamWins() {
    String tp = "00-11111111111111111111111111111111-2222222222222222-01";
    hop2a.withRequestHeader("traceparent", tp);
    feed(chain());
    SpanData relayA = span(Side.CLIENT, RELAY, "test.Back/A");
    assertThat(relayA.getTraceId()).isEqualTo("11111111111111111111111111111111");
    assertThat(relayA.getParentSpanId()).isEqualTo("2222222222222222");
    SpanData relayB = span(Side.CLIENT, RELAY, "test.Back/B");
    assertThat(relayB.getParentSpanId()).isEqualTo(span(Side.SERVER, RELAY, FRONT_METHOD).getSpanId());
    assertThat(results()).isEqualTo(Map.of("linked", 1L, "traceparent", 1L));
  }

  @Test
  void traceparentWinsWhenTheStreamParentComesAfterTheClientStart() {
    hop2a.withRequestHeader("traceparent", "00-11111111111111111111111111111111-2222222222222222-01");
    feed(hop1.serverStart(1, t0 + MS), hop2a.clientStart(1, t0 + 2 * MS), hop2a.streamParent(1, t0 + 2 * MS, hop1, 1),
        hop2a.clientTrailersOnly(1, t0 + 6 * MS, 0, null));
    assertThat(span(Side.CLIENT, RELAY, "test.Back/A").getTraceId()).isEqualTo("11111111111111111111111111111111");
    assertThat(results()).isEqualTo(Map.of("traceparent", 1L));
  }

  @Test
  void parentThatEndedBeforeTheClientStreamWasCreatedIsRejected() {
    feed(hop1.serverStart(1, t0 + MS), hop1.serverTrailersOnly(1, t0 + 2 * MS, 0, null)); // ended
    feed(hop2a.streamParent(1, t0 + 10 * MS, hop1, 1), hop2a.clientStart(1, t0 + 10 * MS),
        hop2a.clientTrailersOnly(1, t0 + 11 * MS, 0, null));
    SpanData relayA = span(Side.CLIENT, RELAY, "test.Back/A");
    assertThat(relayA.getParentSpanContext().isValid()).as("a root at once: rejected, nothing to wait for").isFalse();
    assertThat(results()).isEqualTo(Map.of("stale", 1L));
  }

  @Test
  void parentThatStartedAfterTheClientStreamWasCreatedIsRejected() {
    // The BPF entry named a server stream key that a newer stream (a new connection at the old one's address) now has.
    feed(hop1.serverStart(1, t0 + 5 * MS));
    feed(hop2a.clientStart(1, t0 + 2 * MS), hop2a.streamParent(1, t0 + 2 * MS, hop1, 1),
        hop2a.clientTrailersOnly(1, t0 + 3 * MS, 0, null));
    assertThat(span(Side.CLIENT, RELAY, "test.Back/A").getParentSpanContext().isValid()).isFalse();
    assertThat(results()).isEqualTo(Map.of("stale", 1L));
  }

  @Test
  void streamParentBeforeItsServerStreamStartedWaitsForIt() {
    feed(hop2a.streamParent(1, t0 + 2 * MS, hop1, 1), hop2a.clientStart(1, t0 + 2 * MS),
        hop2a.clientTrailersOnly(1, t0 + 3 * MS, 0, null));
    assertThat(out).isEmpty();
    waitMillis(500);
    feed(hop1.clientStart(1, t0), hop1.serverStart(1, t0 + MS), hop1.serverTrailersOnly(1, t0 + 4 * MS, 0, null));
    assertThat(span(Side.CLIENT, RELAY, "test.Back/A").getParentSpanId())
        .isEqualTo(span(Side.SERVER, RELAY, FRONT_METHOD).getSpanId());
    assertThat(results()).isEqualTo(Map.of("linked", 1L));
  }

  @Test
  void streamParentAfterTheClientEndStillLinksAndReleasesTheHeldSpan() {
    feed(hop1.clientStart(1, t0), hop1.serverStart(1, t0 + MS), hop2a.clientStart(1, t0 + 2 * MS),
        hop2a.clientTrailersOnly(1, t0 + 3 * MS, 0, null), hop1.serverTrailersOnly(1, t0 + 4 * MS, 0, null),
        hop1.clientTrailersOnly(1, t0 + 5 * MS, 0, null));
    assertThat(out).hasSize(2);
    assertThat(assembler.heldClientSpans()).isEqualTo(1); // the relay serves: it may still get its parent
    waitMillis(1_000);
    feed(hop2a.streamParent(1, t0 + 2 * MS, hop1, 1));
    assertThat(assembler.heldClientSpans()).isZero();
    SpanData relayA = span(Side.CLIENT, RELAY, "test.Back/A");
    assertThat(relayA.getParentSpanId()).isEqualTo(span(Side.SERVER, RELAY, FRONT_METHOD).getSpanId());
    assertThat(relayA.getTraceId()).isEqualTo(span(Side.CLIENT, FRONT, FRONT_METHOD).getTraceId());
    feed(hop2a.streamParent(1, t0 + 2 * MS, hop1, 1)); // a repeat changes nothing
    waitMillis(2_000);
    assertThat(out).hasSize(3);
    assertThat(results()).isEqualTo(Map.of("linked", 1L, "no_client", 1L));
  }

  @Test
  void parentNeverSeenMakesARootWhenLinkWaitIsOver() {
    feed(hop1.serverStart(7, t0)); // the relay serves something else
    feed(hop2a.streamParent(1, t0 + 2 * MS, hop1, 1), hop2a.clientStart(1, t0 + 2 * MS),
        hop2a.clientTrailersOnly(1, t0 + 3 * MS, 0, null));
    waitMillis(1_999);
    assertThat(out).isEmpty();
    waitMillis(1);
    SpanData relayA = span(Side.CLIENT, RELAY, "test.Back/A");
    assertThat(relayA.getParentSpanContext().isValid()).isFalse();
    assertThat(results()).isEqualTo(Map.of("not_found", 1L));
  }

  @Test
  void streamParentWhoseClientStreamNeverStartsIsCounted() {
    feed(hop1.serverStart(1, t0), hop2a.streamParent(1, t0 + 2 * MS, hop1, 1));
    waitMillis(2_000);
    assertThat(results()).isEqualTo(Map.of("no_client", 1L));
  }

  @Test
  void clientCallOutsideAnyServerCallIsARoot() {
    // A background loop of the relay: no StreamParent. The relay serves, so the span waits for one.
    feed(hop1.serverStart(1, t0));
    feed(hop2a.clientStart(1, t0 + MS), hop2a.serverStart(1, t0 + 2 * MS), hop2a.serverTrailersOnly(1, t0 + 3 * MS, 0, null),
        hop2a.clientTrailersOnly(1, t0 + 4 * MS, 0, null));
    assertThat(out).isEmpty();
    waitMillis(2_000);
    SpanData background = span(Side.CLIENT, RELAY, "test.Back/A");
    SpanData back = span(Side.SERVER, BACK, "test.Back/A");
    assertThat(background.getParentSpanContext().isValid()).isFalse();
    assertThat(back.getParentSpanId()).isEqualTo(background.getSpanId());
    assertThat(back.getTraceId()).isEqualTo(background.getTraceId());
    assertThat(results()).isEmpty();
  }

  @Test
  void clientOfAProcessNeverSeenServingIsARootAtOnce() {
    // No server stream and no StreamParent of the front process: its client spans cannot have an
    // in-process parent, and do not wait (today's spans of plain clients, no added delay).
    feed(hop1.clientStart(1, t0), hop1.clientTrailersOnly(1, t0 + MS, 0, null));
    assertThat(span(Side.CLIENT, FRONT, FRONT_METHOD).getParentSpanContext().isValid()).isFalse();
    assertThat(assembler.heldClientSpans()).isZero();
  }

  @Test
  void streamParentForADecidedClientSpanIsLate() {
    feed(hop2a.clientStart(1, t0 + 2 * MS)); // the relay was never seen serving: a root at its start
    feed(hop1.serverStart(1, t0 + MS), hop2a.streamParent(1, t0 + 2 * MS, hop1, 1));
    feed(hop2a.clientTrailersOnly(1, t0 + 3 * MS, 0, null));
    assertThat(span(Side.CLIENT, RELAY, "test.Back/A").getParentSpanContext().isValid()).isFalse();
    assertThat(results()).isEqualTo(Map.of("late", 1L));
  }

  @Test
  void aClientWhoseServerIsItsOwnParentIsNotACycle() {
    // A process calling itself: its server stream's client is the client stream the StreamParent
    // names; linking both would wait forever.
    Events self = new Events(RELAY, RELAY, 0xc000_a300L, 0xc000_b300L, 43000);
    feed(self.serverStart(1, t0 + 2 * MS), self.clientStart(1, t0 + MS), self.streamParent(1, t0 + 3 * MS, self, 1),
        self.serverTrailersOnly(1, t0 + 4 * MS, 0, null), self.clientTrailersOnly(1, t0 + 5 * MS, 0, null));
    waitMillis(2_000);
    assertThat(out).hasSize(2);
    assertThat(results()).isEqualTo(Map.of("stale", 1L));
  }

  @Test
  void malformedStreamParentsAreRejectedByReason() {
    feed(
        new StreamParent(0, 1, t0, 1, 1, 2, 1, StreamParentVia.CONTEXT),
        new StreamParent(5, 1, t0, 1, 0, 2, 1, StreamParentVia.CONTEXT),
        new StreamParent(5, 1, t0, 1, 1, 2, -1, StreamParentVia.CONTEXT),
        new StreamParent(5, 1, t0, 1, 1, 2, 1, null));
    assertThat(counter(AssemblyMetrics.EVENTS_MALFORMED)).isEqualTo(4);
    assertThat(results()).isEmpty();
  }

  @Test
  void zeroLinkWaitDisablesInProcessLinks() {
    build(Duration.ZERO, 100);
    feed(chain());
    assertThat(out).hasSize(6);
    assertThat(out).allSatisfy(f -> assertThat(f.span().getParentSpanContext().isValid()).isFalse());
    assertThat(results()).isEmpty();
  }

  // ------------------------------------------------------------------ bounds

  @Test
  void heldClientSpansAreBoundedAndOverflowIsEmittedAndCounted() {
    build(3);
    feed(hop1.serverStart(1, t0)); // the relay serves: its clients wait for their StreamParent
    for (int i = 0; i < 10; i++) {
      feed(hop2a.clientStart(2 * i + 1, t0 + MS), hop2a.clientTrailersOnly(2 * i + 1, t0 + 2 * MS, 0, null));
    }
    assertThat(assembler.heldClientSpans()).isEqualTo(3);
    assertThat(out).hasSize(7);
    assertThat(out).allSatisfy(f -> assertThat(f.span().getParentSpanContext().isValid()).isFalse());
    assertThat(counter(AssemblyMetrics.LINKS_OVERFLOW)).isEqualTo(7);
    waitMillis(2_000);
    assertThat(out).hasSize(10);
    assertThat(assembler.heldClientSpans()).isZero();
  }

  @Test
  void streamParentsWaitingForTheirClientAreBounded() {
    build(3);
    for (int i = 0; i < 10; i++) {
      feed(hop2a.streamParent(2 * i + 1, t0, hop1, 1));
    }
    assertThat(results()).isEqualTo(Map.of("overflow", 7L));
    waitMillis(2_000);
    assertThat(results()).isEqualTo(Map.of("overflow", 7L, "no_client", 3L));
  }

  @Test
  void stubsForParentsNotSeenYetAreBounded() {
    build(3);
    for (int i = 0; i < 10; i++) {
      // ten client streams, each naming a different server stream nobody has seen
      feed(hop2a.streamParent(2 * i + 1, t0, hop1, 2 * i + 1), hop2a.clientStart(2 * i + 1, t0),
          hop2a.clientTrailersOnly(2 * i + 1, t0 + MS, 0, null));
    }
    assertThat(results()).isEqualTo(Map.of("overflow", 7L));
    assertThat(out).hasSize(7);
    waitMillis(2_000);
    assertThat(out).hasSize(10);
    assertThat(results()).isEqualTo(Map.of("overflow", 7L, "not_found", 3L));
  }

  @Test
  void flushEmitsEverythingHeld() {
    List<ProbeEvent> c = chain();
    feed(c.subList(1, c.size() - 1));
    assertThat(out).isEmpty();
    assembler.flush();
    assertThat(out).hasSize(5);
    assertThat(out).allSatisfy(f -> assertThat(f.span().getTraceId()).isEqualTo(out.get(0).span().getTraceId()));
  }

  // ------------------------------------------------------------------ every order

  /**
   * Every order of one call's events through the relay with one back call (the front client's
   * start; the relay server's start and end; the StreamParent; the relay client's start and end;
   * the back server's start; then the back server's end and the front client's end): the same
   * tree, one trace.
   */
  @Test
  void everyPermutationGivesTheSameTree() {
    List<ProbeEvent> events =
        List.of(
            hop1.clientStart(1, t0),
            hop1.serverStart(1, t0 + MS),
            hop2a.streamParent(1, t0 + 2 * MS, hop1, 1),
            hop2a.clientStart(1, t0 + 2 * MS),
            hop2a.serverStart(1, t0 + 3 * MS),
            hop2a.clientTrailersOnly(1, t0 + 5 * MS, 0, null),
            hop1.serverTrailersOnly(1, t0 + 6 * MS, 0, null));
    List<ProbeEvent> last =
        List.of(hop2a.serverTrailersOnly(1, t0 + 4 * MS, 0, null), hop1.clientTrailersOnly(1, t0 + 7 * MS, 0, null));
    // The relay served before (a process is known to serve from its first server stream or StreamParent on).
    Events earlier = new Events(FRONT, RELAY, 0xc000_a999L, 0xc000_b999L, 41999).path("/test.Earlier/Call");
    List<ProbeEvent> warmUp = List.of(earlier.serverStart(1, t0 - 100 * MS), earlier.serverTrailersOnly(1, t0 - 99 * MS, 0, null));
    String expected = null;
    int[] order = {0, 1, 2, 3, 4, 5, 6};
    FakeMetadata metadata = new FakeMetadata();
    int permutations = 0;
    do {
      List<FinishedSpan> spans = new ArrayList<>();
      TestClock clock = new TestClock();
      SpanAssembler a =
          new SpanAssembler(
              new SpanAssembler.Settings(Duration.ofSeconds(30), 1000, Duration.ofSeconds(2), 100, RpcSemconv.Mode.STABLE, Set.of()),
              MonotonicClock.of(clock), metadata, MeterProvider.noop().get("test"), spans::add, IdGenerator.random());
      warmUp.forEach(a::accept);
      for (int i : order) {
        a.accept(events.get(i));
        clock.advanceMillis(1);
      }
      last.forEach(a::accept);
      clock.advanceMillis(5_000);
      a.expire();
      String tree = tree(spans);
      if (expected == null) {
        expected = tree;
        assertThat(tree)
            .isEqualTo(
                "CLIENT 100 test.Front/Call <- root\n"
                    + "CLIENT 300 test.Back/A <- SERVER 300 test.Front/Call\n"
                    + "SERVER 200 test.Back/A <- CLIENT 300 test.Back/A\n"
                    + "SERVER 300 test.Earlier/Call <- root\n"
                    + "SERVER 300 test.Front/Call <- CLIENT 100 test.Front/Call\n"
                    + "one trace\n");
      } else if (!tree.equals(expected)) {
        List<String> l = new ArrayList<>();
        for (int i : order) {
          l.add(NAMES[i]);
        }
        fail("order %s gave%n%s", l, tree);
      }
      permutations++;
    } while (nextPermutation(order));
    assertThat(permutations).isEqualTo(5_040);
  }

  static final String[] NAMES = {
    "front start", "relay server start", "StreamParent", "relay client start", "back server start", "relay client end",
    "relay server end"
  };

  /** Each span "KIND pid name <- parent's" sorted, then whether the chain is one trace (the warm-up's span left out). */
  static String tree(List<FinishedSpan> spans) {
    Map<String, String> labels = new HashMap<>();
    for (FinishedSpan f : spans) {
      labels.put(f.span().getSpanId(), f.side() + " " + f.pid() + " " + f.span().getName());
    }
    List<String> lines = new ArrayList<>();
    Set<String> traces = new java.util.HashSet<>();
    for (FinishedSpan f : spans) {
      SpanData s = f.span();
      String parent = s.getParentSpanContext().isValid() ? labels.getOrDefault(s.getParentSpanId(), "?") : "root";
      lines.add(labels.get(s.getSpanId()) + " <- " + parent);
      if (!s.getName().equals("test.Earlier/Call")) {
        traces.add(s.getTraceId());
      }
    }
    lines.sort(null);
    return String.join("\n", lines) + "\n" + (traces.size() == 1 ? "one trace" : traces.size() + " traces") + "\n";
  }

  /** Next lexicographic permutation in place; false after the last. */
  static boolean nextPermutation(int[] a) {
    int i = a.length - 2;
    while (i >= 0 && a[i] >= a[i + 1]) {
      i--;
    }
    if (i < 0) {
      return false;
    }
    int j = a.length - 1;
    while (a[j] <= a[i]) {
      j--;
    }
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int l = i + 1, r = a.length - 1; l < r; l++, r--) {
      t = a[l];
      a[l] = a[r];
      a[r] = t;
    }
    return true;
  }
}
