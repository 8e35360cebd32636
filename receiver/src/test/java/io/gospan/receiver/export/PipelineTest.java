package io.gospan.receiver.export;

import io.gospan.receiver.app.PipelineBuilder;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.event.ProcessInfo;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PipelineTest {

  static final class Collecting implements SpanExporter {
    final List<SpanData> spans = new CopyOnWriteArrayList<>();
    volatile boolean shutdown;

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      spans.addAll(batch);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      shutdown = true;
      return CompletableResultCode.ofSuccess();
    }
  }

  static GospanConfig config() {
    return ConfigLoader.parse(
        "streams: {timeout: 1s, link_wait: 0s}\nmetrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n", "t", Map.of());
  }

  @Test
  void lifecycleCallsEndStreamsAndCloseFlushes() {
    Collecting exporter = new Collecting();
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    ProcessedSpans processed = new ProcessedSpans(metrics);
    Pipeline p = PipelineBuilder.create(config()).spanExporter(exporter).processMetadata(new FakeMetadata()).metricReader(metrics).build();
    assertThat(p.healthy()).isTrue();
    assertThat(p.telemetryAddress()).isNull();
    Events conn = new Events(40000);
    long t0 = p.clock().monotonicNow();
    p.registerProcess(new ProcessInfo(Events.SERVER_PID, null, "go1.23.0"));
    p.accept(conn.clientStart(1, t0));
    p.accept(conn.serverStart(1, t0));
    p.accept(conn.serverStart(3, t0));
    p.accept(conn.clientStart(5, t0));
    p.connectionClosed(conn.clientPid, conn.clientConn); // client streams 1 and 5
    p.processExited(conn.serverPid); // server streams 1 and 3
    assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
    assertThat(exporter.spans).hasSize(4);
    assertThat(processed.exported()).isEqualTo(4);
    assertThat(exporter.spans)
        .extracting(s -> s.getAttributes().get(AttributeKey.stringKey("gospan.incomplete.reason")))
        .containsExactlyInAnyOrder("connection_closed", "connection_closed", "process_exited", "process_exited");

    p.accept(conn.clientStart(7, p.clock().monotonicNow()));
    p.close();
    assertThat(exporter.spans).hasSize(5);
    assertThat(exporter.spans.get(4).getAttributes().get(AttributeKey.stringKey("gospan.incomplete.reason")))
        .isEqualTo("shutdown");
    assertThat(exporter.shutdown).isTrue();
    assertThat(p.healthy()).isFalse();
    p.close(); // idempotent
  }

  @Test
  void spanAssemblyCountsReachTheSdkMeterUnderTheirNames() throws Exception {
    Collecting exporter = new Collecting();
    io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader reader =
        io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader.create();
    try (Pipeline p = withMetricReader(exporter, reader)) {
      Events conn = new Events(40000);
      long t0 = p.clock().monotonicNow();
      p.accept(conn.clientStart(1, t0));
      p.accept(conn.clientStart(3, t0));
      p.accept(conn.clientTrailersOnly(1, t0 + 1_000_000, 0, null));
      p.accept(conn.clientTrailersOnly(9, t0 + 1_000_000, 0, null)); // no start: unmatched once link_wait (0) is over
      assertTwoStartsOneEndOneUnmatched(reader);
    }
  }

  /**
   * A poll's events handed over as one run ({@link Pipeline#acceptAll}, how the ring buffer's reader
   * feeds them): counted, assembled and exported as one at a time; events outside {@code [from, to)}
   * are not fed.
   */
  @Test
  void eventsHandedOverInARunAreAssembledAndCountedAsOneAtATime() throws Exception {
    Collecting exporter = new Collecting();
    io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader reader =
        io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader.create();
    try (Pipeline p = withMetricReader(exporter, reader)) {
      Events conn = new Events(40000);
      long t0 = p.clock().monotonicNow();
      io.gospan.receiver.event.ProbeEvent[] run = {
          conn.clientStart(11, t0), // before from: not fed
          conn.clientStart(1, t0),
          conn.clientStart(3, t0),
          conn.clientTrailersOnly(1, t0 + 1_000_000, 0, null),
          conn.clientTrailersOnly(9, t0 + 1_000_000, 0, null), // no start: unmatched once link_wait (0) is over
          conn.clientStart(13, t0)}; // from to on: not fed
      p.acceptAll(run, 1, 5);
      p.acceptAll(run, 5, 5); // an empty run
      assertTwoStartsOneEndOneUnmatched(reader);
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(exporter.spans).hasSize(1);
      assertThat(exporter.spans.get(0).getAttributes().get(AttributeKey.stringKey("gospan.incomplete.reason"))).isNull();
    }
  }

  private static Pipeline withMetricReader(
      Collecting exporter, io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader reader) {
    return PipelineBuilder.create(config()).spanExporter(exporter).processMetadata(new FakeMetadata())
        .metricReader(reader).build();
  }

  /**
   * The counts after two client starts, one end of a started stream and one end without a start
   * (unmatched once link_wait, 0, is over): events read by probe, one unmatched, one in flight.
   */
  private static void assertTwoStartsOneEndOneUnmatched(io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader reader) {
    java.util.Map<String, java.util.Map<String, Long>> values = longPointsByProbe(reader);
    assertThat(values.get("gospan.events.read"))
        .containsEntry("loopy_writer_write_header", 2L)
        .containsEntry("http2_client_operate_headers", 2L);
    assertThat(values.get("gospan.events.unmatched")).containsEntry("null", 1L);
    assertThat(values.get("gospan.streams.in_flight")).containsEntry("null", 1L);
  }

  /** Each long metric's points by their {@code probe} attribute ("null" without one), by metric name. */
  private static java.util.Map<String, java.util.Map<String, Long>> longPointsByProbe(
      io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader reader) {
    java.util.Map<String, java.util.Map<String, Long>> values = new java.util.TreeMap<>();
    for (io.opentelemetry.sdk.metrics.data.MetricData d : reader.collectAllMetrics()) {
      for (io.opentelemetry.sdk.metrics.data.PointData pt : d.getData().getPoints()) {
        if (pt instanceof io.opentelemetry.sdk.metrics.data.LongPointData l) {
          values.computeIfAbsent(d.getName(), k -> new java.util.TreeMap<>())
              .put(String.valueOf(pt.getAttributes().get(AttributeKey.stringKey("probe"))), l.getValue());
        }
      }
    }
    return values;
  }

  @Test
  void timedOutStreamsAreEndedByThePipelineTimer() throws Exception {
    Collecting exporter = new Collecting();
    try (Pipeline p = PipelineBuilder.create(config()).spanExporter(exporter).processMetadata(new FakeMetadata()).build()) {
      Events conn = new Events(40000);
      p.accept(conn.clientStart(1, p.clock().monotonicNow()));
      assertThat(OtlpGrpcReceiver.await(10_000, () -> {
            p.flush().join(5, TimeUnit.SECONDS);
            return !exporter.spans.isEmpty();
          }))
          .isTrue();
      assertThat(exporter.spans.get(0).getAttributes().get(AttributeKey.stringKey("gospan.incomplete.reason")))
          .isEqualTo("timeout");
    }
  }

  /**
   * Once no event came for a while the expiry timer runs rarely (an idle sidecar wakes less), and
   * the next event brings the active period back at once (100 ms, then as the rate asks): a stream started after the idle spell
   * still times out within a period of its timeout, not an idle period later.
   */
  @Test
  void anEventAfterAnIdleSpellBringsTheExpiryPeriodBack() throws InterruptedException {
    Collecting exporter = new Collecting();
    Pipeline p = PipelineBuilder.create(config()).spanExporter(exporter).processMetadata(new FakeMetadata())
        .expiryIdle(java.time.Duration.ofSeconds(2), java.time.Duration.ofSeconds(30))
        .build();
    try {
      Thread.sleep(2500); // idle: the timer's next run is 30 s away
      p.registerProcess(new ProcessInfo(Events.SERVER_PID, null, "go1.23.0"));
      Events conn = new Events(40000);
      long started = System.nanoTime();
      p.accept(conn.serverStart(1, p.clock().monotonicNow()));
      assertThat(p.assembler().inFlight()).isEqualTo(1);
      while (p.assembler().inFlight() > 0 && System.nanoTime() - started < 10_000_000_000L) {
        Thread.sleep(10);
      }
      long endedMillis = (System.nanoTime() - started) / 1_000_000;
      // streams.timeout 1 s, the first period (100 ms) then the slow one (500 ms: one event is a low
      // rate) and a loaded machine's scheduling on top; the timer stays active for 2 s after the event
      assertThat(p.assembler().inFlight()).isZero();
      assertThat(endedMillis).isBetween(1000L, 3000L);
    } finally {
      p.close();
    }
  }
}
