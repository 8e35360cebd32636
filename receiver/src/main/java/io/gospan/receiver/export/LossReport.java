package io.gospan.receiver.export;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs, at each {@link #report}, what gospan's loss counters rose by since the last report: a
 * reader of gospan's own metrics (the numbers {@code /metrics} shows), so the log's counts add up
 * to the metrics'. One line, only when something was lost, e.g.
 *
 * <pre>
 * losses since the last report: gospan.events.lost{reason="ring_buffer_full"} 46294, gospan.streams.overflow 12
 * </pre>
 *
 * <p>The counters: {@link #COUNTERS} (events lost in the kernel, by reason; records that could
 * not be decoded or were malformed; streams not traced over {@code streams.max_in_flight}; spans
 * exported unlinked over {@code streams.max_pending_links}). Spans dropped on the way out have
 * their own lines with the same property (the span processor's queue, the export queue, failed
 * exports).
 */
final class LossReport implements MetricReader {
  private static final Logger log = LoggerFactory.getLogger(LossReport.class);
  /** The counters reported, and the attribute each is split by ("" for none). */
  static final Map<String, String> COUNTERS = Map.of(
      "gospan.events.lost", "reason",
      "gospan.events.undecodable", "",
      "gospan.events.malformed", "reason",
      "gospan.streams.overflow", "",
      "gospan.links.overflow", "");

  private volatile CollectionRegistration registration = CollectionRegistration.noop();
  private final Map<String, Long> reported = new TreeMap<>(); // guarded by this

  @Override
  public void register(CollectionRegistration registration) {
    this.registration = registration;
  }

  @Override
  public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
    return AggregationTemporality.CUMULATIVE;
  }

  @Override
  public CompletableResultCode forceFlush() {
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode shutdown() {
    return CompletableResultCode.ofSuccess();
  }

  /** Totals of the loss counters now, by {@code name} or {@code name{attr="value"}}. */
  Map<String, Long> totals() {
    Map<String, Long> out = new TreeMap<>();
    for (MetricData m : registration.collectAllMetrics()) {
      String attr = COUNTERS.get(m.getName());
      if (attr == null || m.getType() != MetricDataType.LONG_SUM) {
        continue;
      }
      for (LongPointData p : m.getLongSumData().getPoints()) {
        String value = attr.isEmpty() ? null : p.getAttributes().get(AttributeKey.stringKey(attr));
        String key = value == null ? m.getName() : m.getName() + "{" + attr + "=\"" + value + "\"}";
        out.merge(key, p.getValue(), Long::sum);
      }
    }
    return out;
  }

  /** Logs the rises since the last call (if any); returns their sum. */
  synchronized long report() {
    StringBuilder line = new StringBuilder();
    long all = 0;
    for (Map.Entry<String, Long> e : totals().entrySet()) {
      long rise = e.getValue() - reported.getOrDefault(e.getKey(), 0L);
      if (rise > 0) {
        line.append(line.length() == 0 ? "" : ", ").append(e.getKey()).append(' ').append(rise);
        all += rise;
      }
      reported.put(e.getKey(), e.getValue());
    }
    if (all > 0) {
      log.warn("losses since the last report: {}", line);
    }
    return all;
  }
}
