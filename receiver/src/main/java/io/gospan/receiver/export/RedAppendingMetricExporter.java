package io.gospan.receiver.export;

import io.gospan.receiver.metrics.RedMetrics;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.MemoryMode;
import io.opentelemetry.sdk.metrics.Aggregation;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The OTLP metric exporter, with the RED metrics of every traced process added to each export.
 * RED metrics carry the traced process's resource, one per process; a {@code MetricProducer} on the
 * meter provider would also reach the Prometheus reader of gospan's self-telemetry, which has one
 * target (gospan's). So they join here, at the OTLP reader's collection time, through their own
 * {@link RedMetrics.Reader}; {@code /metrics} has another ({@link SelfTelemetry}), with the
 * process's resource attributes as labels.
 */
final class RedAppendingMetricExporter implements MetricExporter {
  private final MetricExporter delegate;
  private final RedMetrics.Reader red;

  RedAppendingMetricExporter(MetricExporter delegate, RedMetrics.Reader red) {
    this.delegate = delegate;
    this.red = red;
  }

  @Override
  public CompletableResultCode export(Collection<MetricData> metrics) {
    Collection<MetricData> redData = red.collect();
    if (redData.isEmpty()) {
      return delegate.export(metrics);
    }
    List<MetricData> all = new ArrayList<>(metrics.size() + redData.size());
    all.addAll(metrics);
    all.addAll(redData);
    return delegate.export(all);
  }

  @Override
  public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
    return delegate.getAggregationTemporality(instrumentType);
  }

  @Override
  public Aggregation getDefaultAggregation(InstrumentType instrumentType) {
    return delegate.getDefaultAggregation(instrumentType);
  }

  @Override
  public MemoryMode getMemoryMode() {
    return delegate.getMemoryMode();
  }

  @Override
  public CompletableResultCode flush() {
    return delegate.flush();
  }

  @Override
  public CompletableResultCode shutdown() {
    return delegate.shutdown();
  }
}
