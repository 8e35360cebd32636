package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderEvent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;

/** What the tests of span assembly's parts share: streams made from {@link Events}, and counters read back. */
final class PartsFixture {
  private PartsFixture() {}

  /** The stream {@code e} starts, with a new undecided node, no deadline. */
  static TracedStream stream(HeaderEvent e) {
    StreamKey key = StreamKey.of(e);
    return new TracedStream(key, e, Long.MAX_VALUE, null, new SpanIdentity(key, spanId(e.streamId()), e.monotonicNs()));
  }

  /** The stream {@code e} starts, timing out at {@code deadline}. */
  static TracedStream stream(HeaderEvent e, long deadline) {
    StreamKey key = StreamKey.of(e);
    return new TracedStream(key, e, deadline, null, new SpanIdentity(key, spanId(e.streamId()), e.monotonicNs()));
  }

  /** A valid span id (16 hex digits) made from {@code n}. */
  static String spanId(long n) {
    return String.format("%016x", n + 1);
  }

  /** {@link AssemblyCounters} on a meter whose metrics {@link #count} reads. */
  static final class Counters {
    final InMemoryMetricReader reader = InMemoryMetricReader.create();
    final AssemblyCounters counters =
        new AssemblyCounters(SdkMeterProvider.builder().registerMetricReader(reader).build().get("test"), new Object());

    /** The count of {@code m} whose {@code key} is {@code value}, or over every series when {@code key} is null. */
    long count(AssemblyMetrics m, AttributeKey<String> key, String value) {
      long sum = 0;
      for (MetricData d : reader.collectAllMetrics()) {
        if (d.getName().equals(m.metricName())) {
          for (Object p : d.getData().getPoints()) {
            LongPointData l = (LongPointData) p;
            if (key == null || value.equals(l.getAttributes().get(key))) {
              sum += l.getValue();
            }
          }
        }
      }
      return sum;
    }
  }
}
