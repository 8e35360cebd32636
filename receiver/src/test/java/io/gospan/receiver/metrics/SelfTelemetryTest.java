package io.gospan.receiver.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.common.CompletableResultCode;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SelfTelemetryTest {

  static final class Reader implements MetricReader {
    CollectionRegistration reg = CollectionRegistration.noop();

    @Override
    public void register(CollectionRegistration registration) {
      reg = registration;
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType t) {
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
  }

  @Test
  void countersAndObservedValuesReachTheSdkMeter() throws Exception {
    SelfTelemetry t = new SelfTelemetry();
    t.counter(SelfTelemetry.EVENTS_READ, "Events read").add(3, Attributes.of(SelfTelemetry.PROBE, "loopy_writer_write_header"));
    AtomicLong lost = new AtomicLong(7);
    t.observeCounter(SelfTelemetry.EVENTS_LOST, "Events lost in BPF",
        r -> r.record(lost.get(), Attributes.of(SelfTelemetry.PROBE, "http2_server_operate_headers")));
    t.observeGauge(SelfTelemetry.PROCESSES_TRACED, "Processes traced", r -> r.record(2));

    Reader reader = new Reader();
    try (SdkMeterProvider mp = SdkMeterProvider.builder().registerMetricReader(reader).build()) {
      t.attach(mp.get("io.gospan"));
      t.counter(SelfTelemetry.EVENTS_UNMATCHED, "unmatched").add(5); // created after attach
      lost.set(9);
      Collection<MetricData> data = reader.reg.collectAllMetrics();
      assertThat(data).extracting(MetricData::getName)
          .contains(SelfTelemetry.EVENTS_READ, SelfTelemetry.EVENTS_LOST, SelfTelemetry.PROCESSES_TRACED,
              SelfTelemetry.EVENTS_UNMATCHED);
      MetricData lostData = data.stream().filter(d -> d.getName().equals(SelfTelemetry.EVENTS_LOST)).findFirst().orElseThrow();
      assertThat(lostData.getLongSumData().getPoints()).singleElement().satisfies(p -> assertThat(p.getValue()).isEqualTo(9));
      MetricData unmatched = data.stream().filter(d -> d.getName().equals(SelfTelemetry.EVENTS_UNMATCHED)).findFirst().orElseThrow();
      assertThat(unmatched.getLongSumData().getPoints()).singleElement().satisfies(p -> assertThat(p.getValue()).isEqualTo(5));
    }
  }
}
