package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.Side;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The streams probe set's events: a client span starts at {@code NewStream}'s return (no request
 * headers: only {@code :path}) and ends at {@code closeStream} (grpc-status, a raw grpc-message); a
 * server span ends at {@code writeStatus}. What the client's own request headers used to give it
 * (authority, allowed metadata, the application's traceparent) comes from its server's request
 * headers when gospan sees that end too.
 */
class SpanAssemblerStreamsSetTest {
  static final long MS = 1_000_000L;
  static final int FRONT = 100;
  static final int RELAY = 300;
  static final int BACK = 200;

  TestClock time;
  InMemoryMetricReader metrics;
  List<FinishedSpan> out;
  SpanAssembler assembler;
  long t0;
  Events hop; // a plain client -> a server
  Events hop1; // front -> relay
  Events hop2; // relay -> back

  @BeforeEach
  void setUp() {
    time = new TestClock();
    t0 = time.now;
    hop = new Events(41000);
    hop1 = new Events(FRONT, RELAY, 0xc000_a100L, 0xc000_b100L, 41001).path("/test.Front/Call");
    hop2 = new Events(RELAY, BACK, 0xc000_a200L, 0xc000_b200L, 42000).path("/test.Back/A");
    build(Set.of("x-request-id"));
  }

  void build(Set<String> allow) {
    metrics = InMemoryMetricReader.create();
    out = new ArrayList<>();
    assembler =
        new SpanAssembler(
            new SpanAssembler.Settings(Duration.ofSeconds(30), 1000, Duration.ofSeconds(2), 100, RpcSemconv.Mode.STABLE, allow),
            MonotonicClock.of(time), new FakeMetadata(),
            SdkMeterProvider.builder().registerMetricReader(metrics).build().get("test"), out::add, IdGenerator.random());
  }

  void feed(ProbeEvent... events) {
    for (ProbeEvent e : events) {
      assembler.accept(e);
    }
  }

  void waitMillis(long ms) {
    time.advanceMillis(ms);
    assembler.expire();
  }

  SpanData span(Side side, int pid) {
    List<SpanData> l = out.stream().filter(f -> f.side() == side && f.pid() == pid).map(FinishedSpan::span).toList();
    assertThat(l).as("%s %d in %s", side, pid, out).hasSize(1);
    return l.get(0);
  }

  Map<String, Long> results() {
    Map<String, Long> r = new TreeMap<>();
    for (MetricData d : metrics.collectAllMetrics()) {
      if (d.getName().equals(AssemblyMetrics.LINKS_IN_PROCESS.metricName())) {
        for (var p : d.getData().getPoints()) {
          r.merge(p.getAttributes().get(AssemblyMetrics.RESULT), ((LongPointData) p).getValue(), Long::sum);
        }
      }
    }
    return r;
  }

  @Test
  void aCallIsTwoSpansLinkedByTheSocketWithTheStatusGrpcGoClosedThemWith() {
    feed(hop.clientNewStream(1, t0), hop.serverStart(1, t0 + MS), hop.serverWriteStatus(1, t0 + 2 * MS, 5, "not found: 100%"),
        hop.clientCloseStream(1, t0 + 3 * MS, 5, "not found: 100%"));
    SpanData client = span(Side.CLIENT, Events.CLIENT_PID);
    SpanData server = span(Side.SERVER, Events.SERVER_PID);
    assertThat(client.getName()).isEqualTo("helloworld.Greeter/SayHello");
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(server.getTraceId()).isEqualTo(client.getTraceId());
    assertThat(client.getParentSpanContext().isValid()).isFalse();
    // the message is grpc-go's own string: no percent-decoding ("100%" is no escape)
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(client.getStatus().getDescription()).isEqualTo("not found: 100%");
    assertThat(client.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code"))).isEqualTo("NOT_FOUND");
    assertThat(server.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code"))).isEqualTo("NOT_FOUND");
    assertThat(client.getStartEpochNanos()).isLessThan(server.getStartEpochNanos());
    assertThat(client.getEndEpochNanos() - client.getStartEpochNanos()).isEqualTo(3 * MS);
  }

  @Test
  void theClientSpanTakesItsServersAuthorityAndAllowedMetadata() {
    hop.withRequestHeader("x-request-id", "r-1");
    feed(hop.clientNewStream(1, t0), hop.serverStart(1, t0 + MS), hop.serverWriteStatus(1, t0 + 2 * MS, 0, null),
        hop.clientCloseStream(1, t0 + 3 * MS, 0, null));
    SpanData client = span(Side.CLIENT, Events.CLIENT_PID);
    assertThat(client.getAttributes().get(AttributeKey.stringKey("server.address"))).isEqualTo("greeter.example");
    assertThat(client.getAttributes().get(AttributeKey.longKey("server.port"))).isEqualTo(50051L);
    assertThat(client.getAttributes().get(AttributeKey.stringArrayKey("rpc.request.metadata.x-request-id"))).containsExactly("r-1");
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
  }

  @Test
  void aClientWhoseServerGospanDoesNotSeeIsARootWithTheSocketsServerEndAtItsEnd() {
    feed(hop.clientNewStream(1, t0));
    assertThat(out).isEmpty();
    feed(hop.clientCloseStream(1, t0 + MS, 14, "connection refused"));
    SpanData client = span(Side.CLIENT, Events.CLIENT_PID); // at its end, without waiting for link_wait
    assertThat(client.getParentSpanContext().isValid()).isFalse();
    assertThat(client.getAttributes().get(AttributeKey.stringKey("server.address"))).isEqualTo("10.0.0.2");
    assertThat(client.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code"))).isEqualTo("UNAVAILABLE");
  }

  @Test
  void theApplicationsTraceparentSeenByTheServerIsTheClientSpansParentToo() {
    String tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    hop.withRequestHeader("traceparent", tp);
    feed(hop.clientNewStream(1, t0), hop.serverStart(1, t0 + MS), hop.serverWriteStatus(1, t0 + 2 * MS, 0, null),
        hop.clientCloseStream(1, t0 + 3 * MS, 0, null));
    SpanData client = span(Side.CLIENT, Events.CLIENT_PID);
    SpanData server = span(Side.SERVER, Events.SERVER_PID);
    // as when the client's own headers were read: both are children of the application's span
    assertThat(client.getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(client.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
    assertThat(server.getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(server.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
  }

  @Test
  void aServerStartSeenBeforeItsClientsNewStreamStillLinks() {
    // NewStream queues the HEADERS frame before it returns: its server may receive them first
    feed(hop.serverStart(1, t0), hop.clientNewStream(1, t0 + MS / 10), hop.serverWriteStatus(1, t0 + MS, 0, null),
        hop.clientCloseStream(1, t0 + 2 * MS, 0, null));
    SpanData client = span(Side.CLIENT, Events.CLIENT_PID);
    SpanData server = span(Side.SERVER, Events.SERVER_PID);
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(server.getTraceId()).isEqualTo(client.getTraceId());
    assertThat(client.getAttributes().get(AttributeKey.stringKey("server.address"))).isEqualTo("greeter.example");
  }

  @Test
  void aServerStartFarEarlierThanTheClientsStartIsNotItsServer() {
    feed(hop.serverStart(1, t0), hop.serverWriteStatus(1, t0 + MS, 0, null));
    waitMillis(500);
    feed(hop.clientNewStream(1, time.now), hop.clientCloseStream(1, time.now + MS, 0, null));
    waitMillis(2_000);
    assertThat(span(Side.SERVER, Events.SERVER_PID).getParentSpanContext().isValid()).isFalse();
    assertThat(span(Side.CLIENT, Events.CLIENT_PID).getParentSpanContext().isValid()).isFalse();
  }

  @Test
  void aSecondWriteStatusDoesNotEndTheNextStreamUnderTheSameKey() {
    // grpc-go v1.33 called WriteStatus again for a stream already done ("context canceled"); the next
    // connection got the freed one's address, and its first stream is 1 again (EtcdGrpcProxyIT in CI)
    feed(hop.serverStart(1, t0), hop.serverWriteStatus(1, t0 + MS, 0, ""),
        hop.serverWriteStatus(1, t0 + 2 * MS, 2, "context canceled"),
        hop.serverStart(1, t0 + 3 * MS), hop.serverWriteStatus(1, t0 + 5 * MS, 0, ""));
    waitMillis(10_000);
    List<SpanData> servers = out.stream().filter(f -> f.side() == Side.SERVER).map(FinishedSpan::span).toList();
    assertThat(servers).as("%s", out).hasSize(2);
    for (SpanData s : servers) {
      assertThat(s.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code"))).isEqualTo("OK");
    }
    assertThat(servers.stream().mapToLong(s -> s.getEndEpochNanos() - s.getStartEpochNanos()).sorted().toArray())
        .containsExactly(MS, 2 * MS);
  }

  @Test
  void aCloseStreamBeforeItsNewStreamEndsTheSpanWhenTheStartComes() {
    // the reader may close a stream (RST_STREAM, a trailers-only reply) before the caller's NewStream returns
    feed(hop.clientCloseStream(1, t0 + 2 * MS, 8, "too many"), hop.clientNewStream(1, t0 + MS));
    SpanData client = span(Side.CLIENT, Events.CLIENT_PID);
    assertThat(client.getEndEpochNanos() - client.getStartEpochNanos()).isEqualTo(MS);
    assertThat(client.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code"))).isEqualTo("RESOURCE_EXHAUSTED");
  }

  @Test
  void aRelaysChainIsOneTraceWithTheStreamsSet() {
    feed(hop1.clientNewStream(1, t0), hop1.serverStart(1, t0 + MS),
        hop2.clientNewStream(1, t0 + 2 * MS), hop2.streamParent(1, t0 + 2 * MS, hop1, 1),
        hop2.serverStart(1, t0 + 3 * MS), hop2.serverWriteStatus(1, t0 + 4 * MS, 0, null),
        hop2.clientCloseStream(1, t0 + 5 * MS, 0, null), hop1.serverWriteStatus(1, t0 + 6 * MS, 0, null),
        hop1.clientCloseStream(1, t0 + 7 * MS, 0, null));
    SpanData front = span(Side.CLIENT, FRONT);
    SpanData relay = span(Side.SERVER, RELAY);
    SpanData relayClient = span(Side.CLIENT, RELAY);
    SpanData back = span(Side.SERVER, BACK);
    assertThat(out).hasSize(4);
    assertThat(relay.getParentSpanId()).isEqualTo(front.getSpanId());
    assertThat(relayClient.getParentSpanId()).isEqualTo(relay.getSpanId());
    assertThat(back.getParentSpanId()).isEqualTo(relayClient.getSpanId());
    assertThat(out).allSatisfy(f -> assertThat(f.span().getTraceId()).isEqualTo(front.getTraceId()));
    assertThat(results()).isEqualTo(Map.of("linked", 1L));
  }

  @Test
  void theApplicationsTraceparentWinsOverTheInProcessParentWhenTheServerSeesItFirst() {
    String tp = "00-11111111111111111111111111111111-2222222222222222-01";
    hop2.withRequestHeader("traceparent", tp);
    // the relay's server span is not decided yet (its client's start is late): the in-process link waits
    feed(hop1.serverStart(1, t0 + MS), hop2.clientNewStream(1, t0 + 2 * MS), hop2.streamParent(1, t0 + 2 * MS, hop1, 1),
        hop2.serverStart(1, t0 + 3 * MS), hop2.serverWriteStatus(1, t0 + 4 * MS, 0, null),
        hop2.clientCloseStream(1, t0 + 5 * MS, 0, null), hop1.clientNewStream(1, t0),
        hop1.serverWriteStatus(1, t0 + 6 * MS, 0, null), hop1.clientCloseStream(1, t0 + 7 * MS, 0, null));
    SpanData relayClient = span(Side.CLIENT, RELAY);
    assertThat(relayClient.getTraceId()).isEqualTo("11111111111111111111111111111111");
    assertThat(relayClient.getParentSpanId()).isEqualTo("2222222222222222");
    assertThat(span(Side.SERVER, RELAY).getParentSpanId()).isEqualTo(span(Side.CLIENT, FRONT).getSpanId());
  }

  @Test
  void aStreamParentForAClientTheApplicationsTraceparentDecidedCountsAsTraceparent() {
    String tp = "00-11111111111111111111111111111111-2222222222222222-01";
    hop2.withRequestHeader("traceparent", tp);
    feed(hop1.clientNewStream(1, t0), hop1.serverStart(1, t0 + MS), hop2.clientNewStream(1, t0 + 2 * MS),
        hop2.serverStart(1, t0 + 3 * MS), hop2.streamParent(1, t0 + 2 * MS, hop1, 1),
        hop2.serverWriteStatus(1, t0 + 4 * MS, 0, null), hop2.clientCloseStream(1, t0 + 5 * MS, 0, null),
        hop1.serverWriteStatus(1, t0 + 6 * MS, 0, null), hop1.clientCloseStream(1, t0 + 7 * MS, 0, null));
    assertThat(span(Side.CLIENT, RELAY).getParentSpanId()).isEqualTo("2222222222222222");
    assertThat(results()).isEqualTo(Map.of("traceparent", 1L));
  }

  @Test
  void eventsOfBothProbeSetsMixInOneAssembler() {
    Events old = new Events(43000);
    feed(old.clientStart(1, t0), hop.clientNewStream(1, t0), old.serverStart(1, t0 + MS), hop.serverStart(1, t0 + MS),
        old.serverTrailersOnly(1, t0 + 2 * MS, 0, null), hop.serverWriteStatus(1, t0 + 2 * MS, 0, null),
        old.clientTrailersOnly(1, t0 + 3 * MS, 0, null), hop.clientCloseStream(1, t0 + 3 * MS, 0, null));
    assertThat(out).hasSize(4);
    for (FinishedSpan f : out) {
      if (f.side() == Side.SERVER) {
        String parent = f.span().getParentSpanId();
        assertThat(out.stream().filter(c -> c.side() == Side.CLIENT && c.span().getSpanId().equals(parent))).hasSize(1);
      }
    }
  }
}
