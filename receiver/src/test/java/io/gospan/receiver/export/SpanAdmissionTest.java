package io.gospan.receiver.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.trace.TestSpanData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Whole traces in or out of the span processor's queue, within its bounds in spans and bytes. */
class SpanAdmissionTest {
  private final InMemoryMetricReader metrics = InMemoryMetricReader.create();
  private final SdkMeterProvider provider = SdkMeterProvider.builder().registerMetricReader(metrics).build();

  static SpanData span(int trace, int span) {
    String traceId = String.format("%032x", trace + 1);
    String spanId = String.format("%016x", span + 1);
    return TestSpanData.builder()
        .setSpanContext(SpanContext.create(traceId, spanId, TraceFlags.getSampled(), TraceState.getDefault()))
        .setName("greeter.Greeter/SayHello").setKind(SpanKind.SERVER).setStatus(StatusData.unset())
        .setStartEpochNanos(1).setEndEpochNanos(2).setHasEnded(true).build();
  }

  /** The exporter behind the queue: takes everything. */
  static final class Sink implements SpanExporter {
    final List<SpanData> got = new ArrayList<>();

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      got.addAll(spans);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  @Test
  void behindItShedsNewTracesWholeAndKeepsEverySpanOfTheTracesItAdmitted() {
    SpanAdmission a = new SpanAdmission(100, 1 << 20, provider.get("t"), 0);
    SpanExporter out = a.tracking(new Sink());
    // trace 0 starts while the queue is empty: admitted
    assertThat(a.admit(span(0, 0))).isTrue();
    for (int i = 1; i < 50; i++) { // trace i, one span each, fills the queue to half
      assertThat(a.admit(span(i, 0))).isTrue();
    }
    // half full: shedding from now on
    assertThat(a.admit(span(1000, 0))).as("a new trace is shed").isFalse();
    assertThat(a.admit(span(1000, 1))).as("and every later span of it").isFalse();
    assertThat(a.admit(span(0, 1))).as("a trace admitted before keeps its spans").isTrue();
    assertThat(a.admit(span(7, 1))).isTrue();
    // the exporter takes 40 spans: 11 wait, below a quarter: admitting again
    List<SpanData> batch = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      batch.add(span(i, 0));
    }
    out.export(batch);
    assertThat(a.queuedSpans()).isEqualTo(12);
    assertThat(a.admit(span(2000, 0))).as("new traces again").isTrue();
    assertThat(a.admit(span(1000, 2))).as("a trace shed stays shed").isFalse();
    assertThat(a.totals()).containsExactly(3, 1, 0);
    assertThat(a.report()).isEqualTo(3);
    assertThat(a.report()).as("reported once").isZero();
  }

  @Test
  void sheddingLastsItsMinimumTimeOnceStarted() throws Exception {
    SpanAdmission a = new SpanAdmission(10, 1 << 20, provider.get("t"), 300);
    SpanExporter out = a.tracking(new Sink());
    for (int i = 0; i < 5; i++) {
      a.admit(span(i, 0));
    }
    assertThat(a.admit(span(100, 0))).as("half full: shedding").isFalse();
    out.export(List.of(span(0, 0), span(1, 0), span(2, 0), span(3, 0), span(4, 0)));
    assertThat(a.admit(span(101, 0))).as("empty again, but not for the minimum time yet").isFalse();
    Thread.sleep(310);
    assertThat(a.admit(span(102, 0))).as("after it").isTrue();
  }

  @Test
  void theQueueNeverHoldsMoreThanItsBoundsInSpansOrBytes() {
    SpanAdmission bySpans = new SpanAdmission(10, 1 << 20, provider.get("t"), 0);
    for (int i = 0; i < 30; i++) {
      bySpans.admit(span(0, i)); // one trace admitted while the queue was empty: never shed, but bounded
    }
    assertThat(bySpans.queuedSpans()).isEqualTo(10);
    assertThat(bySpans.totals()).containsExactly(0, 0, 20);

    // spans with a set of their own each: the whole of each counts
    long one = SpanSizes.estimateWithoutAttributes(withAttributes(0, 0, "a")) + SpanSizes.attributes(withAttributes(0, 0, "a").getAttributes());
    SpanAdmission byBytes = new SpanAdmission(1000, 5 * one, provider.get("t"), 0);
    for (int i = 0; i < 30; i++) {
      byBytes.admit(withAttributes(0, i, "a"));
    }
    assertThat(byBytes.queuedBytes()).isLessThanOrEqualTo(5 * one);
    assertThat(byBytes.queuedSpans()).isEqualTo(5);
  }

  /** A span with an attribute set of its own: server.address {@code address}. */
  static SpanData withAttributes(int trace, int span, String address) {
    return withAttributes(trace, span, Attributes.of(AttributeKey.stringKey("server.address"), address,
        AttributeKey.stringKey("rpc.method"), "SayHello"));
  }

  static SpanData withAttributes(int trace, int span, Attributes attributes) {
    return TestSpanData.builder().setSpanContext(span(trace, span).getSpanContext()).setName("greeter.Greeter/SayHello")
        .setKind(SpanKind.SERVER).setStatus(StatusData.unset()).setStartEpochNanos(1).setEndEpochNanos(2)
        .setAttributes(attributes).setHasEnded(true).build();
  }

  @Test
  void anAttributeSetSharedByWaitingSpansCountsOnceUntilTheLastOfThemLeaves() {
    SpanAdmission a = new SpanAdmission(1000, 1 << 20, provider.get("t"), 0);
    SpanExporter out = a.tracking(new Sink());
    Attributes shared = Attributes.of(AttributeKey.stringKey("server.address"), "greeter.example:50051",
        AttributeKey.stringKey("rpc.method"), "SayHello");
    long spanPart = SpanSizes.estimateWithoutAttributes(withAttributes(0, 0, shared));
    long setPart = SpanSizes.attributes(shared);
    assertThat(setPart).as("the set weighs something").isGreaterThan(0);
    List<SpanData> sharing = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      sharing.add(withAttributes(i, 0, shared));
      assertThat(a.admit(sharing.get(i))).isTrue();
    }
    assertThat(a.queuedBytes()).as("10 spans, their one set once").isEqualTo(10 * spanPart + setPart);
    SpanData own = withAttributes(20, 0, "greeter.example:50051"); // an equal set, not the same instance
    long ownSet = SpanSizes.attributes(own.getAttributes());
    assertThat(own.getAttributes()).isEqualTo(shared).isNotSameAs(shared);
    a.admit(own);
    assertThat(a.queuedBytes()).as("counted by identity: another instance counts too").isEqualTo(11 * spanPart + setPart + ownSet);

    out.export(sharing.subList(0, 9));
    assertThat(a.queuedBytes()).as("one span still holds the shared set").isEqualTo(2 * spanPart + setPart + ownSet);
    out.export(List.of(sharing.get(9), own));
    assertThat(a.queuedBytes()).as("nothing waits").isZero();
    assertThat(a.queuedSpans()).isZero();
    // the set counts again with the next span that holds it
    a.admit(withAttributes(30, 0, shared));
    assertThat(a.queuedBytes()).isEqualTo(spanPart + setPart);
  }

  @Test
  void eventsReadLateTurnSheddingOnAndBackOff() throws Exception {
    SpanAdmission a = new SpanAdmission(100, 1 << 20, provider.get("t"), 0);
    long late = TimeUnit.MILLISECONDS.toNanos(SpanAdmission.LAG_SHED_MILLIS + 50);
    a.eventRead(System.nanoTime() - late);
    assertThat(a.admit(span(0, 0))).as("one late event: a stall of the reader, not a backlog").isTrue();
    Thread.sleep(SpanAdmission.LAG_SHED_MILLIS + 10);
    a.eventRead(System.nanoTime() - late);
    assertThat(a.admit(span(1, 0))).as("late for as long again: the ring buffer's reader is behind").isFalse();
    a.eventRead(System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(5));
    assertThat(a.admit(span(2, 0))).as("caught up").isTrue();
    a.eventRead(System.nanoTime() - TimeUnit.HOURS.toNanos(2)); // not this machine's clock: ignored
    assertThat(a.admit(span(3, 0))).isTrue();
  }

  @Test
  void dropsAreCountedByReasonAndTracesShed() {
    SpanAdmission a = new SpanAdmission(4, 1 << 20, provider.get("t"), 0);
    a.admit(span(0, 0));
    a.admit(span(0, 1)); // half full
    a.admit(span(1, 0)); // shed
    a.admit(span(1, 1)); // shed
    a.admit(span(0, 2));
    a.admit(span(0, 3));
    a.admit(span(0, 4)); // queue_full
    var data = metrics.collectAllMetrics();
    long shed = 0;
    long full = 0;
    long traces = 0;
    for (var m : data) {
      if (m.getName().equals(SpanAdmission.DROPPED)) {
        for (var p : m.getLongSumData().getPoints()) {
          String r = p.getAttributes().get(SpanAdmission.REASON);
          if ("shed".equals(r)) {
            shed += p.getValue();
          } else if ("queue_full".equals(r)) {
            full += p.getValue();
          }
        }
      } else if (m.getName().equals(SpanAdmission.TRACES_SHED)) {
        traces += m.getLongSumData().getPoints().iterator().next().getValue();
      }
    }
    assertThat(new long[] {shed, traces, full}).containsExactly(2, 1, 1);
  }
}
