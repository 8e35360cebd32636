package io.gospan.receiver.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.metrics.SelfTelemetry;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.gospan.receiver.span.FinishedSpan;
import io.gospan.receiver.span.MonotonicClock;
import io.gospan.receiver.span.SpanAssembler;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BoundedSpanBatcherTest {

  static SpanData aSpan() {
    List<FinishedSpan> out = new ArrayList<>();
    SpanAssembler a = new SpanAssembler(Pipeline.assemblerSettings(GospanConfig.defaults()), MonotonicClock.fixed(0),
        new FakeMetadata(), MeterProvider.noop().get("test"), out::add, IdGenerator.random());
    Events e = new Events(40000);
    a.accept(e.clientStart(1, 10));
    a.accept(e.clientTrailersOnly(1, 20, 0, null));
    return out.get(0).span();
  }

  /** An exporter that blocks until released, recording what it got. */
  static final class GateExporter implements SpanExporter {
    final CountDownLatch gate = new CountDownLatch(1);
    final List<Integer> batches = new CopyOnWriteArrayList<>();
    volatile boolean fail;
    volatile boolean throwError;

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      if (throwError) {
        throw new NoSuchMethodError("simulated broken dependency");
      }
      try {
        gate.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      batches.add(spans.size());
      return fail ? CompletableResultCode.ofFailure() : CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      gate.countDown();
      return CompletableResultCode.ofSuccess();
    }
  }

  @Test
  void offerNeverBlocksAndCountsQueueFullDrops() {
    SelfTelemetry t = new SelfTelemetry();
    GateExporter exporter = new GateExporter();
    SpanData s = aSpan();
    try (BoundedSpanBatcher b = new BoundedSpanBatcher(exporter, 10, 5, Duration.ofMillis(10), Duration.ofSeconds(20), t)) {
      long start = System.nanoTime();
      int accepted = 0;
      for (int i = 0; i < 1000; i++) {
        if (b.offer(s)) {
          accepted++;
        }
      }
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1000);
      // At most the queue plus one batch in the (blocked) exporter.
      assertThat(accepted).isBetween(10, 15);
      assertThat(t.counter(SelfTelemetry.SPANS_DROPPED).value(Attributes.of(SelfTelemetry.REASON, "queue_full")))
          .isEqualTo(1000 - accepted);
      exporter.gate.countDown();
      assertThat(b.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(t.counter(SelfTelemetry.SPANS_EXPORTED).total()).isEqualTo(accepted);
      assertThat(exporter.batches).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(5));
    }
  }

  @Test
  void failedAndThrowingExportsAreCountedAndTheWorkerSurvives() {
    SelfTelemetry t = new SelfTelemetry();
    GateExporter exporter = new GateExporter();
    exporter.gate.countDown();
    exporter.fail = true;
    SpanData s = aSpan();
    try (BoundedSpanBatcher b = new BoundedSpanBatcher(exporter, 100, 10, Duration.ofSeconds(60), Duration.ofSeconds(5), t)) {
      for (int i = 0; i < 3; i++) {
        b.offer(s);
      }
      assertThat(b.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(t.counter(SelfTelemetry.EXPORT_FAILURES).total()).isEqualTo(1);
      assertThat(t.counter(SelfTelemetry.SPANS_DROPPED).value(Attributes.of(SelfTelemetry.REASON, "export_failed"))).isEqualTo(3);

      exporter.throwError = true;
      b.offer(s);
      assertThat(b.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(b.isAlive()).isTrue();
      assertThat(t.counter(SelfTelemetry.EXPORT_FAILURES).total()).isEqualTo(2);

      exporter.throwError = false;
      exporter.fail = false;
      b.offer(s);
      b.offer(s);
      assertThat(b.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(t.counter(SelfTelemetry.SPANS_EXPORTED).total()).isEqualTo(2);
    }
  }

  @Test
  void fullBatchIsExportedWithoutWaitingForTheDelay() throws Exception {
    SelfTelemetry t = new SelfTelemetry();
    GateExporter exporter = new GateExporter();
    exporter.gate.countDown();
    SpanData s = aSpan();
    try (BoundedSpanBatcher b = new BoundedSpanBatcher(exporter, 100, 4, Duration.ofHours(1), Duration.ofSeconds(5), t)) {
      for (int i = 0; i < 8; i++) {
        b.offer(s);
      }
      assertThat(OtlpGrpcReceiver.await(10_000, () -> t.counter(SelfTelemetry.SPANS_EXPORTED).total() == 8)).isTrue();
      assertThat(exporter.batches).containsOnly(4);
    }
  }
}
