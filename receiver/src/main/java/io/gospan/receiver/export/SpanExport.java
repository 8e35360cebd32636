package io.gospan.receiver.export;

import io.gospan.receiver.config.ExporterType;
import io.gospan.receiver.config.GospanConfig.ExporterConfig;
import io.gospan.receiver.config.OtlpSignal;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.InternalTelemetryVersion;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The way of a finished span to the exporter, built from {@code exporter.*}:
 *
 * <pre>
 *  admit ─► SpanAdmission ─► BatchSpanProcessor (exporter.batch) ─► RequestSplitter
 *    ─► ExportFailureLog ─► [ExportQueue (exporter.queue, OTLP only)] ─► the exporter [+ console]
 * </pre>
 *
 * <p>Spans go through the SDK's {@link BatchSpanProcessor}: bounded queue, a full queue drops the
 * span, never blocks; its own metrics count them ({@code otel.sdk.processor.span.processed{error.type}},
 * {@code otel.sdk.processor.span.queue.size}). {@link SpanAdmission} sheds whole traces before that
 * queue fills; {@link RequestSplitter} keeps each request within the collector's message size;
 * {@link ExportFailureLog} counts the spans of failed exports. With {@code exporter.type: otlp} and
 * {@code exporter.queue.max_bytes > 0}, the {@link ExportQueue} keeps what the collector does not
 * take (bounded in bytes, in memory or on disk) and sends it oldest first once it answers. Each
 * part's drops are logged with their true count by {@link #reportDrops}.
 */
public final class SpanExport {
  private final SpanAdmission admission;
  private final BatchSpanProcessor processor;
  private final Optional<ExportQueue> queue;
  /** The parts whose drops {@link #reportDrops} logs, in that order. */
  private final List<LongSupplier> dropReports;
  /** Whether a span was queued yet: the first one is exported at once ({@link #admit}). */
  private volatile boolean anyQueued;

  /** {@code addConsole}: as {@code exporter.console} says ({@link Exporters#withConsole}), after the queue. */
  private SpanExport(ExporterConfig c, SpanExporter configured, boolean addConsole, Meter meter, MeterProvider meterProvider) {
    this.queue = c.queue().enabled() && c.type() == ExporterType.OTLP
        ? Optional.of(ExportQueue.create(c.queue(), configured, attemptMillis(c), meter))
        : Optional.empty();
    SpanExporter queued = queue.<SpanExporter>map(q -> q).orElse(configured);
    SpanExporter main = addConsole ? Exporters.withConsole(c, queued) : queued;
    ExportFailureLog failures = new ExportFailureLog(main);
    var batch = c.batch();
    this.admission = new SpanAdmission(batch.maxQueueSize(), batch.maxQueueBytes(), meter);
    this.processor =
        // each batch in requests within the collector's message size, above the failure log and
        // the export queue (which keep, count and retry each request)
        BatchSpanProcessor.builder(admission.tracking(new RequestSplitter(failures, batch.maxExportRequestBytes())))
            .setMaxQueueSize(batch.maxQueueSize())
            .setMaxExportBatchSize(batch.maxExportBatchSize())
            .setScheduleDelay(batch.scheduleDelay())
            .setExporterTimeout(Duration.ofMillis(Exporters.worstCaseExportMillis(c.otlp(), c.retry())))
            // every span offered here was kept by span assembly's sampler (sampling.*, marked sampled):
            // none is dropped for a flag
            .setExportUnsampledSpans(true)
            .setMeterProvider(meterProvider)
            .setInternalTelemetryVersion(InternalTelemetryVersion.LATEST)
            .build();
    this.dropReports = queue.isPresent()
        ? List.of(queue.get()::report, admission::report, failures::report)
        : List.of(admission::report, failures::report);
  }

  /**
   * The chain to the exporter {@code c} configures; {@code exporter.console: true} adds the
   * console exporter beside it (after the export queue).
   *
   * @param meter where the admission and the export queue count ({@code io.gospan})
   * @param meterProvider where the span processor counts ({@code otel.sdk.processor.span.*})
   */
  public static SpanExport create(ExporterConfig c, Meter meter, MeterProvider meterProvider) {
    return new SpanExport(c, Exporters.typedSpanExporter(c), true, meter, meterProvider);
  }

  /** As {@link #create(ExporterConfig, Meter, MeterProvider)}, with spans going to {@code exporter} (tests, embedding). */
  public static SpanExport create(ExporterConfig c, SpanExporter exporter, Meter meter, MeterProvider meterProvider) {
    return new SpanExport(c, exporter, false, meter, meterProvider);
  }

  /** How long one try of the export queue may take (ms): the OTLP traces timeout and a second. */
  private static long attemptMillis(ExporterConfig c) {
    return c.otlp().forSignal(OtlpSignal.TRACES).timeout().toMillis() + 1000;
  }

  /**
   * Offers a finished span; it is queued unless admission sheds its trace or the queue is full. Never
   * blocks. The first span queued since start is exported at once with whatever joined it while the
   * processor's worker woke (a flush, asynchronous), not a full batch or {@code
   * exporter.batch.schedule_delay} later: the first span reaches the collector as soon as the
   * export path can carry it, and that path (the exporter's classes, the gRPC channel's
   * connection) is exercised by a batch of a few spans rather than by the first full one while
   * the queue fills behind it (docs/benchmarks.md, "Cold start").
   */
  public void admit(SpanData span) {
    if (admission.admit(span)) {
      processor.onEnd(new FinishedReadableSpan(span));
      if (!anyQueued) {
        anyQueued = true; // two threads may both flush: harmless
        processor.forceFlush();
      }
    }
  }

  /** An event was read whose kernel time is {@code monotonicNs}: how late events are read steers shedding. */
  public void eventRead(long monotonicNs) {
    admission.eventRead(monotonicNs);
  }

  /** As {@link #eventRead(long)}, against {@code nowNs}, a {@link System#nanoTime} read the caller made. */
  public void eventRead(long monotonicNs, long nowNs) {
    admission.eventRead(monotonicNs, nowNs);
  }

  /**
   * Exports what the processor holds now. A flush asked for while another runs (the first span's,
   * {@link #admit}) is answered by the SDK's processor with that one, which may end before the
   * spans queued since are exported: while spans wait after it ends, this flushes again (at most
   * {@value #FLUSH_TRIES} times, from another thread: the processor completes a flush before it
   * takes the next request).
   */
  public CompletableResultCode flush() {
    CompletableResultCode done = new CompletableResultCode();
    flush(done, FLUSH_TRIES);
    return done;
  }

  private static final int FLUSH_TRIES = 5;

  private void flush(CompletableResultCode done, int tries) {
    CompletableResultCode r = processor.forceFlush();
    r.whenComplete(() -> {
      if (!r.isSuccess()) {
        done.fail();
      } else if (admission.queuedSpans() > 0 && tries > 1) {
        CompletableFuture.runAsync(() -> flush(done, tries - 1), CompletableFuture.delayedExecutor(10, TimeUnit.MILLISECONDS));
      } else {
        done.succeed();
      }
    });
  }

  /**
   * Exports what is queued, then shuts the exporters down. Flushes first ({@link #flush}, at most
   * 10 s): the processor's own shutdown flushes once, and asked while the first span's flush runs
   * it would take that flush's end for its own and stop before the spans queued since.
   */
  public CompletableResultCode shutdown() {
    flush().join(10, TimeUnit.SECONDS);
    return processor.shutdown();
  }

  /** Logs the spans each part dropped since the last report; returns their number. */
  public long reportDrops() {
    long dropped = 0;
    for (LongSupplier r : dropReports) {
      dropped += r.getAsLong();
    }
    return dropped;
  }

  /** The export queue ({@code exporter.queue}), empty when spans are not queued. */
  Optional<ExportQueue> exportQueue() {
    return queue;
  }
}
