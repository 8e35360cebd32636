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

  /** Offers a finished span; it is queued unless admission sheds its trace or the queue is full. Never blocks. */
  public void admit(SpanData span) {
    if (admission.admit(span)) {
      processor.onEnd(new FinishedReadableSpan(span));
    }
  }

  /** An event was read whose kernel time is {@code monotonicNs}: how late events are read steers shedding. */
  public void eventRead(long monotonicNs) {
    admission.eventRead(monotonicNs);
  }

  /** Exports what the processor holds now. */
  public CompletableResultCode flush() {
    return processor.forceFlush();
  }

  /** Exports what is queued, then shuts the exporters down. */
  public CompletableResultCode shutdown() {
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
