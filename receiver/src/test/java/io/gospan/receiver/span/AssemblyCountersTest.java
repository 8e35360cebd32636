package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.ProbeKind;
import io.opentelemetry.sdk.metrics.data.MetricData;
import org.junit.jupiter.api.Test;

class AssemblyCountersTest {
  final PartsFixture.Counters c = new PartsFixture.Counters();

  @Test
  void eventsReadAppearByProbeWithTheirFirstEvent() {
    assertThat(c.count(AssemblyMetrics.EVENTS_READ, null, null)).isZero();
    assertThat(c.reader.collectAllMetrics()).noneMatch(d -> d.getName().equals(AssemblyMetrics.EVENTS_READ.metricName()));
    c.counters.eventRead(ProbeKind.LOOPY_WRITER_WRITE_HEADER);
    c.counters.eventRead(ProbeKind.LOOPY_WRITER_WRITE_HEADER);
    c.counters.eventRead(ProbeKind.HTTP2_SERVER_OPERATE_HEADERS);
    assertThat(c.count(AssemblyMetrics.EVENTS_READ, AssemblyMetrics.PROBE, "loopy_writer_write_header")).isEqualTo(2);
    assertThat(c.count(AssemblyMetrics.EVENTS_READ, AssemblyMetrics.PROBE, "http2_server_operate_headers")).isEqualTo(1);
    assertThat(c.count(AssemblyMetrics.EVENTS_READ, null, null)).isEqualTo(3);
  }

  @Test
  void countsByReasonAndObservesLinkedSpansAndStreamsInFlight() {
    c.counters.malformed("bad_pid");
    c.counters.incomplete("timeout");
    c.counters.incomplete("timeout");
    c.counters.serverSpanLinked();
    c.counters.unmatched(3);
    c.counters.inFlight(7);
    assertThat(c.count(AssemblyMetrics.EVENTS_MALFORMED, AssemblyMetrics.REASON, "bad_pid")).isEqualTo(1);
    assertThat(c.count(AssemblyMetrics.SPANS_INCOMPLETE, AssemblyMetrics.REASON, "timeout")).isEqualTo(2);
    assertThat(c.count(AssemblyMetrics.SPANS_LINKED, null, null)).isEqualTo(1);
    assertThat(c.count(AssemblyMetrics.EVENTS_UNMATCHED, null, null)).isEqualTo(3);
    MetricData inFlight = c.reader.collectAllMetrics().stream()
        .filter(d -> d.getName().equals(AssemblyMetrics.STREAMS_IN_FLIGHT.metricName())).findFirst().orElseThrow();
    assertThat(inFlight.getLongGaugeData().getPoints()).singleElement().satisfies(p -> assertThat(p.getValue()).isEqualTo(7));
  }
}
