package io.gospan.receiver.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.Side;
import io.gospan.receiver.span.FinishedSpan;
import io.gospan.receiver.span.RpcSemconv;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.resources.Resource;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedMetricsTest {

  static Resource resourceOf(int pid) {
    return Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "svc-" + pid));
  }

  static MetricData named(Collection<MetricData> data, String name, String service) {
    return data.stream()
        .filter(d -> d.getName().equals(name))
        .filter(d -> ("svc-" + service).equals(d.getResource().getAttribute(AttributeKey.stringKey("service.name"))))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " for " + service + " in " + data));
  }

  /**
   * The histograms' attributes are memoized per side, method and status in fewer slots than there
   * are calls here: each series still carries its own call's attributes, in both generations.
   */
  @Test
  void attributesOfManyCallsStayTheirOwn() {
    try (RedMetrics red = new RedMetrics(RpcSemconv.Mode.DUP, RedMetricsTest::resourceOf)) {
      RedMetrics.Reader reader = red.reader();
      Status.Code[] codes = {Status.Code.OK, Status.Code.NOT_FOUND, Status.Code.INTERNAL};
      for (int round = 0; round < 2; round++) {
        for (int m = 0; m < 300; m++) {
          for (Status.Code code : codes) {
            // a new String each time: equal methods, not the same object
            red.record(new FinishedSpan(null, 1, Side.SERVER, new String("p.S/M" + m), code, 1_000_000));
            red.record(new FinishedSpan(null, 1, Side.CLIENT, new String("p.S/M" + m), code, 1_000_000));
          }
        }
      }
      Collection<MetricData> data = reader.collect();
      for (String name : List.of("rpc.server.call.duration", "rpc.client.call.duration")) {
        Collection<HistogramPointData> points = named(data, name, "1").getHistogramData().getPoints();
        assertThat(points).hasSize(300 * codes.length);
        boolean server = name.startsWith("rpc.server");
        for (HistogramPointData p : points) {
          assertThat(p.getCount()).isEqualTo(2);
          String status = p.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code"));
          // NOT_FOUND is an error on the client only (GrpcStatus.isError)
          boolean error = status.equals("INTERNAL") || (!server && status.equals("NOT_FOUND"));
          assertThat(p.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo(error ? status : null);
          assertThat(p.getAttributes().get(AttributeKey.stringKey("rpc.method"))).matches("p\\.S/M[0-9]+");
        }
      }
      for (String name : List.of("rpc.server.duration", "rpc.client.duration")) {
        Collection<HistogramPointData> points = named(data, name, "1").getHistogramData().getPoints();
        assertThat(points).hasSize(300 * codes.length);
        for (HistogramPointData p : points) {
          assertThat(p.getCount()).isEqualTo(2);
          assertThat(p.getAttributes().get(AttributeKey.stringKey("rpc.service"))).isEqualTo("p.S");
          assertThat(p.getAttributes().get(AttributeKey.longKey("rpc.grpc.status_code"))).isIn(0L, 5L, 13L);
        }
      }
    }
  }

  @Test
  void stableHistogramsPerProcessResource() {
    try (RedMetrics red = new RedMetrics(RpcSemconv.Mode.STABLE, RedMetricsTest::resourceOf)) {
      RedMetrics.Reader reader = red.reader();
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.OK, 2_000_000));
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.OK, 4_000_000));
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.INTERNAL, 1_000_000));
      red.record(new FinishedSpan(null, 2, Side.CLIENT, null, Status.Code.NOT_FOUND, 1_000_000));
      red.record(new FinishedSpan(null, 2, Side.CLIENT, "a.B/C", null, 1_000_000)); // incomplete: ignored
      Collection<MetricData> data = reader.collect();

      MetricData server = named(data, "rpc.server.call.duration", "1");
      assertThat(server.getUnit()).isEqualTo("s");
      List<HistogramPointData> points = List.copyOf(server.getHistogramData().getPoints());
      assertThat(points).hasSize(2);
      HistogramPointData ok =
          points.stream().filter(p -> "OK".equals(p.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code"))))
              .findFirst().orElseThrow();
      assertThat(ok.getCount()).isEqualTo(2);
      assertThat(ok.getSum()).isCloseTo(0.006, org.assertj.core.data.Offset.offset(1e-12));
      assertThat(ok.getAttributes().get(AttributeKey.stringKey("rpc.method"))).isEqualTo("a.B/C");
      assertThat(ok.getAttributes().get(AttributeKey.stringKey("rpc.system.name"))).isEqualTo("grpc");
      assertThat(ok.getAttributes().get(AttributeKey.stringKey("error.type"))).isNull();
      HistogramPointData err = points.stream().filter(p -> p != ok).findFirst().orElseThrow();
      assertThat(err.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("INTERNAL");

      MetricData client = named(data, "rpc.client.call.duration", "2");
      HistogramPointData c = client.getHistogramData().getPoints().iterator().next();
      assertThat(c.getCount()).isEqualTo(1);
      assertThat(c.getAttributes().get(AttributeKey.stringKey("rpc.method"))).isEqualTo("_OTHER");
      assertThat(c.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("NOT_FOUND");
      assertThat(data).noneMatch(d -> d.getName().equals("rpc.server.duration"));

      red.forget(1);
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.OK, 1_000_000)); // ended after the exit
      assertThat(named(reader.collect(), "rpc.server.call.duration", "1").getHistogramData().getPoints())
          .as("an exited process's last calls are produced once").extracting(HistogramPointData::getCount).contains(3L);
      assertThat(reader.collect()).noneMatch(d -> d.getName().equals("rpc.server.call.duration"));
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.OK, 1_000_000)); // held, ended later still
      assertThat(reader.collect()).anyMatch(d -> d.getName().equals("rpc.server.call.duration"));
      assertThat(reader.collect()).as("no entry left behind by the exited pid")
          .noneMatch(d -> d.getName().equals("rpc.server.call.duration"));
    }
  }

  @Test
  void oldAndDupConventions() {
    try (RedMetrics red = new RedMetrics(RpcSemconv.Mode.DUP, RedMetricsTest::resourceOf)) {
      RedMetrics.Reader reader = red.reader();
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.UNAVAILABLE, 3_000_000));
      Collection<MetricData> data = reader.collect();
      MetricData old = named(data, "rpc.server.duration", "1");
      assertThat(old.getUnit()).isEqualTo("ms");
      HistogramPointData p = old.getHistogramData().getPoints().iterator().next();
      assertThat(p.getSum()).isCloseTo(3.0, org.assertj.core.data.Offset.offset(1e-9));
      assertThat(p.getAttributes().get(AttributeKey.stringKey("rpc.system"))).isEqualTo("grpc");
      assertThat(p.getAttributes().get(AttributeKey.stringKey("rpc.service"))).isEqualTo("a.B");
      assertThat(p.getAttributes().get(AttributeKey.stringKey("rpc.method"))).isEqualTo("C");
      assertThat(p.getAttributes().get(AttributeKey.longKey("rpc.grpc.status_code"))).isEqualTo(14L);
      assertThat(named(data, "rpc.server.call.duration", "1")).isNotNull();
    }
  }

  static boolean hasServer(Collection<MetricData> data) {
    return data.stream().anyMatch(d -> d.getName().equals("rpc.server.call.duration"));
  }

  @Test
  void anExitedProcessStaysUntilEveryReaderHasCollectedIt() {
    long[] now = {0};
    try (RedMetrics red = new RedMetrics(RpcSemconv.Mode.STABLE, RedMetricsTest::resourceOf, java.time.Duration.ZERO, () -> now[0])) {
      RedMetrics.Reader otlp = red.reader();
      RedMetrics.Reader prometheus = red.reader();
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.OK, 1_000_000));
      assertThat(hasServer(otlp.collect())).isTrue();
      red.forget(1);
      assertThat(hasServer(otlp.collect())).as("the first reader after the exit").isTrue();
      assertThat(hasServer(otlp.collect())).as("still there: the second reader has not collected it yet").isTrue();
      assertThat(named(prometheus.collect(), "rpc.server.call.duration", "1").getHistogramData().getPoints())
          .as("each reader sees every call (cumulative)").extracting(HistogramPointData::getCount).containsExactly(1L);
      assertThat(hasServer(otlp.collect())).as("gone once both have").isFalse();
      assertThat(hasServer(prometheus.collect())).isFalse();
    }
  }

  @Test
  void aReaderThatNeverCollectsIsNotWaitedForLongerThanTheBound() {
    long[] now = {0};
    try (RedMetrics red = new RedMetrics(RpcSemconv.Mode.STABLE, RedMetricsTest::resourceOf, java.time.Duration.ZERO, () -> now[0])) {
      RedMetrics.Reader otlp = red.reader();
      red.reader(); // /metrics, never scraped
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.OK, 1_000_000));
      red.record(new FinishedSpan(null, 2, Side.SERVER, "a.B/C", Status.Code.OK, 1_000_000));
      red.forget(1);
      now[0] += RedMetrics.EXITED_KEPT_NANOS;
      assertThat(hasServer(otlp.collect())).isTrue();
      assertThat(otlp.collect()).as("kept for the other reader").anyMatch(d -> "svc-1".equals(service(d)));
      now[0] += 1;
      red.forget(2); // an exit sweeps too, without any reader collecting
      now[0] += 1;
      assertThat(otlp.collect()).as("pid 1 waited long enough").noneMatch(d -> "svc-1".equals(service(d)));
    }
  }

  static String service(MetricData d) {
    return d.getResource().getAttribute(AttributeKey.stringKey("service.name"));
  }

  @Test
  void anExitedProcessStaysUntilItsHeldSpansCouldHaveEnded() {
    long[] now = {0};
    try (RedMetrics red = new RedMetrics(RpcSemconv.Mode.STABLE, RedMetricsTest::resourceOf, java.time.Duration.ofSeconds(2),
        () -> now[0])) {
      RedMetrics.Reader reader = red.reader();
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.OK, 1_000_000));
      red.forget(1);
      now[0] += 1_000_000_000L;
      assertThat(hasServer(reader.collect())).isTrue();
      red.record(new FinishedSpan(null, 1, Side.SERVER, "a.B/C", Status.Code.OK, 1_000_000)); // held for linking, ended after
      now[0] += 1_000_000_000L;
      assertThat(named(reader.collect(), "rpc.server.call.duration", "1").getHistogramData().getPoints())
          .as("one series with both calls").extracting(HistogramPointData::getCount).containsExactly(2L);
      assertThat(hasServer(reader.collect())).as("collected after the settle time: gone").isFalse();
    }
  }
}
