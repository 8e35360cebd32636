package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SpanEmitterTest {
  final TestClock time = new TestClock();
  final PartsFixture.Counters counters = new PartsFixture.Counters();
  final List<FinishedSpan> out = new ArrayList<>();
  final SpanEmitter emitter = new SpanEmitter(MonotonicClock.of(time), new FakeMetadata(),
      new SpanAttributes(RpcSemconv.of(RpcSemconv.Mode.STABLE), Set.of()), out::add, counters.counters);
  final Events conn = new Events(40000).path(Events.PATH);

  static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  static final String PARENT_ID = "00f067aa0ba902b7";

  @Test
  void emitsTheSpanOfAnEndedStreamWithItsIdsTimesAndStatus() {
    TracedStream s = PartsFixture.stream(conn.serverStart(1, 1_000));
    s.resource = new FakeMetadata().resource(Events.SERVER_PID);
    s.node.traceId(TRACE_ID, null);
    s.node.parentContext = SpanContext.createFromRemoteParent(TRACE_ID, PARENT_ID, TraceFlags.getSampled(), TraceState.getDefault());
    emitter.emit(new EndedSpan(s, 3_000, Status.Code.INTERNAL, "boom", null), s.node);

    FinishedSpan f = out.get(0);
    SpanData span = f.span();
    assertThat(span.getName()).isEqualTo("helloworld.Greeter/SayHello");
    assertThat(span.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(span.getTraceId()).isEqualTo(TRACE_ID);
    assertThat(span.getSpanId()).isEqualTo(s.node.spanId);
    assertThat(span.getParentSpanId()).isEqualTo(PARENT_ID);
    assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(span.getStatus().getDescription()).isEqualTo("boom");
    assertThat(span.getStartEpochNanos()).isEqualTo(1_000 + TestClock.OFFSET);
    assertThat(span.getEndEpochNanos()).isEqualTo(3_000 + TestClock.OFFSET);
    assertThat(span.getResource()).isSameAs(s.resource);
    assertThat(f.durationNanos()).isEqualTo(2_000);
    assertThat(counters.count(AssemblyMetrics.SPANS_LINKED, null, null)).isEqualTo(1); // a server span with a client parent
  }

  @Test
  void anEndBeforeTheStartIsClampedAndAClientSpanIsNotCountedLinked() {
    TracedStream c = PartsFixture.stream(conn.clientStart(1, 5_000));
    c.node.traceId(TRACE_ID, null);
    emitter.emit(new EndedSpan(c, 4_000, Status.Code.OK, null, null), c.node);
    SpanData span = out.get(0).span();
    assertThat(span.getKind()).isEqualTo(SpanKind.CLIENT);
    assertThat(span.getEndEpochNanos()).isEqualTo(span.getStartEpochNanos());
    assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(span.getParentSpanContext().isValid()).isFalse();
    assertThat(span.getResource().getAttribute(io.opentelemetry.api.common.AttributeKey.longKey("process.pid")))
        .isEqualTo((long) Events.CLIENT_PID); // no resource read at the start: the process's now
    assertThat(counters.count(AssemblyMetrics.SPANS_LINKED, null, null)).isZero();
  }

  @Test
  void aSpanNotSampledGoesWithoutItsSpanButWithWhatRedMetricsNeed() {
    TracedStream s = PartsFixture.stream(conn.serverStart(1, 1_000));
    s.node.traceId(TRACE_ID, null);
    s.node.sampled = false;
    emitter.emit(new EndedSpan(s, 3_500, Status.Code.NOT_FOUND, "gone", null), s.node);
    FinishedSpan f = out.get(0);
    assertThat(f.sampled()).isFalse();
    assertThat(f.span()).isNull();
    assertThat(List.of(f.pid(), f.side(), f.method(), f.status(), f.durationNanos()))
        .isEqualTo(List.of(Events.SERVER_PID, io.gospan.receiver.event.Side.SERVER, "helloworld.Greeter/SayHello",
            Status.Code.NOT_FOUND, 2_500L));
  }
}
