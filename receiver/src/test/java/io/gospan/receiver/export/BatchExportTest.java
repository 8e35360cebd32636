package io.gospan.receiver.export;

import io.gospan.receiver.app.PipelineBuilder;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The SDK's BatchSpanProcessor behind the pipeline: bounded, never blocking, drops counted and logged with the true count. */
class BatchExportTest {

  /** An exporter that blocks until released, recording batch sizes. */
  static final class GateExporter implements io.opentelemetry.sdk.trace.export.SpanExporter {
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
        gate.await(20, TimeUnit.SECONDS);
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

  /** Without the export queue: a failed export is the span processor's to count (ExportQueueTest has the queue). */
  static Pipeline pipeline(String batch, GateExporter exporter, InMemoryMetricReader metrics) {
    return PipelineBuilder.create(ConfigLoader.parse(
            "exporter: {batch: " + batch + ", queue: {max_bytes: 0}}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n", "t", Map.of()))
        .spanExporter(exporter)
        .processMetadata(new FakeMetadata())
        .metricReader(metrics)
        .build();
  }

  /** {@code n} client calls, one span each. */
  static void calls(Pipeline p, Events conn, int firstStream, int n) {
    long t = p.clock().monotonicNow();
    for (int i = 0; i < n; i++) {
      int stream = firstStream + 2 * i;
      p.accept(conn.clientStart(stream, t));
      p.accept(conn.clientTrailersOnly(stream, t + 1_000, 0, null));
    }
  }

  @Test
  void theFirstSpanIsExportedAtOnceTheNextOnesInBatches() throws Exception {
    GateExporter exporter = new GateExporter();
    exporter.gate.countDown();
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    Events conn = new Events(40000);
    try (Pipeline p = pipeline("{schedule_delay: 60s}", exporter, metrics)) {
      calls(p, conn, 1, 1);
      assertThat(OtlpGrpcReceiver.await(5_000, () -> exporter.batches.equals(List.of(1))))
          .as("the first span exported without waiting for a full batch or the 60 s delay: %s", exporter.batches).isTrue();
      calls(p, conn, 3, 3);
      Thread.sleep(500);
      assertThat(exporter.batches).as("later spans wait for their batch").containsExactly(1);
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(exporter.batches).containsExactly(1, 3);
    }
  }

  @Test
  void aFullQueueDropsWithoutBlockingAndTheLogHasTheTrueCount() {
    GateExporter exporter = new GateExporter();
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    ProcessedSpans processed = new ProcessedSpans(metrics);
    try (Pipeline p = pipeline("{max_queue_size: 10, max_export_batch_size: 5, schedule_delay: 10ms}", exporter, metrics)) {
      long start = System.nanoTime();
      calls(p, new Events(40000), 1, 1000);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2000);
      // Refused before the processor's queue (new traces shed once it is half full, then its
      // bound): the processor's own queue (10, rounded up to 16) never overflows.
      long dropped = processed.admissionDropped();
      assertThat(processed.queueFull()).isZero();
      // At most the queue (10) plus the batch handed to the (blocked) exporter got in.
      assertThat(1000 - dropped).isBetween(5L, 15L);
      exporter.gate.countDown();
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(processed.exported()).isEqualTo(1000 - dropped);
      assertThat(exporter.batches).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(5));
      assertThat(p.reportDrops()).as("drops reported in the log with their true count").isEqualTo(dropped);
    }
  }

  @Test
  void failedAndThrowingExportsAreCountedAndExportGoesOn() throws Exception {
    GateExporter exporter = new GateExporter();
    exporter.gate.countDown();
    exporter.fail = true;
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    ProcessedSpans processed = new ProcessedSpans(metrics);
    Events conn = new Events(40000);
    try (Pipeline p = pipeline("{schedule_delay: 60s}", exporter, metrics)) {
      calls(p, conn, 1, 3);
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      // the processor counts an export's outcome once its result completes, after flush() may return
      assertThat(OtlpGrpcReceiver.await(10_000, () -> processed.exportFailed() == 3)).as("exportFailed == 3").isTrue();

      // A LinkageError would end the SDK's worker thread; the pipeline turns it into a failed export.
      exporter.throwError = true;
      calls(p, conn, 101, 1);
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      // the processor counts an export's outcome once its result completes, after flush() may return
      assertThat(OtlpGrpcReceiver.await(10_000, () -> processed.exportFailed() == 4)).as("exportFailed == 4").isTrue();
      assertThat(p.reportDrops()).as("spans lost to failed exports, logged").isEqualTo(4);
      assertThat(p.reportDrops()).as("nothing new since the last report").isZero();

      exporter.throwError = false;
      exporter.fail = false;
      calls(p, conn, 201, 2);
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      // the processor counts an export's outcome once its result completes, after flush() may return
      assertThat(OtlpGrpcReceiver.await(10_000, () -> processed.exported() == 2)).as("exported == 2").isTrue();
    }
  }

  @Test
  void aFullBatchIsExportedWithoutWaitingForTheDelay() throws Exception {
    GateExporter exporter = new GateExporter();
    exporter.gate.countDown();
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    ProcessedSpans processed = new ProcessedSpans(metrics);
    try (Pipeline p = pipeline("{max_export_batch_size: 4, schedule_delay: 1h}", exporter, metrics)) {
      Events conn = new Events(40000);
      calls(p, conn, 1, 1); // the first span goes at once (theFirstSpanIsExportedAtOnce...)
      assertThat(OtlpGrpcReceiver.await(10_000, () -> processed.exported() == 1)).isTrue();
      calls(p, conn, 3, 8);
      assertThat(OtlpGrpcReceiver.await(10_000, () -> processed.exported() == 9)).isTrue();
      assertThat(exporter.batches).containsExactly(1, 4, 4);
    }
  }
}
