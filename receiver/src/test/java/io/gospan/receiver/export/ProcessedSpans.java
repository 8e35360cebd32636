package io.gospan.receiver.export;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.util.function.Predicate;

/**
 * Reads the SDK BatchSpanProcessor's own count, {@code otel.sdk.processor.span.processed} (by
 * {@code error.type}: none = exported, {@code queue_full}, or the export failure), and the spans
 * refused before its queue ({@code gospan.spans.dropped}), from an in-memory reader on the
 * pipeline's meter provider ({@code Pipeline.Builder.metricReader}).
 */
final class ProcessedSpans {
  static final String METRIC = "otel.sdk.processor.span.processed";
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  private final InMemoryMetricReader reader;

  ProcessedSpans(InMemoryMetricReader reader) {
    this.reader = reader;
  }

  /** Spans handed to the exporter successfully. */
  long exported() {
    return sum(e -> e == null);
  }

  /** Spans dropped because the queue was full. */
  long queueFull() {
    return sum("queue_full"::equals);
  }

  /**
   * Spans refused before the processor's queue ({@link SpanAdmission}: {@code
   * gospan.spans.dropped}, by reason: {@code shed}, {@code queue_full}).
   */
  long admissionDropped() {
    long n = 0;
    for (MetricData m : reader.collectAllMetrics()) {
      if (m.getName().equals(SpanAdmission.DROPPED)) {
        for (LongPointData p : m.getLongSumData().getPoints()) {
          n += p.getValue();
        }
      }
    }
    return n;
  }

  /** Spans lost to failed exports (any other error.type). */
  long exportFailed() {
    return sum(e -> e != null && !e.equals("queue_full"));
  }

  long sum(Predicate<String> errorType) {
    long n = 0;
    for (MetricData m : reader.collectAllMetrics()) {
      if (m.getName().equals(METRIC)) {
        for (LongPointData p : m.getLongSumData().getPoints()) {
          if (errorType.test(p.getAttributes().get(ERROR_TYPE))) {
            n += p.getValue();
          }
        }
      }
    }
    return n;
  }
}
