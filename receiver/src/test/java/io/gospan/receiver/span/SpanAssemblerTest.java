package io.gospan.receiver.span;

import io.grpc.Status;
import java.util.Map;
import java.util.HashMap;
import io.opentelemetry.sdk.resources.Resource;
import io.gospan.receiver.event.SocketPair;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
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
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SpanAssemblerTest {
  static final long MS = 1_000_000L;

  TestClock time;
  MonotonicClock clock;
  InMemoryMetricReader metrics;
  List<FinishedSpan> out;
  SpanAssembler assembler;
  Events conn;
  long t0;

  @BeforeEach
  void setUp() {
    time = new TestClock();
    clock = MonotonicClock.of(time);
    conn = new Events(40000);
    t0 = time.now;
    build(settings(RpcSemconv.Mode.STABLE));
  }

  static SpanAssembler.Settings settings(RpcSemconv.Mode mode) {
    return new SpanAssembler.Settings(
        Duration.ofSeconds(30), 1000, Duration.ofSeconds(2), 100, mode, Set.of("x-request-id", "authorization"));
  }

  void build(SpanAssembler.Settings s) {
    metrics = InMemoryMetricReader.create();
    out = new ArrayList<>();
    assembler = new SpanAssembler(s, clock, new FakeMetadata(),
        SdkMeterProvider.builder().registerMetricReader(metrics).build().get("test"), out::add, IdGenerator.random());
  }

  /**
   * After every test here: each exported span's trace id as numbers ({@link TraceIdBits}, what export
   * admits it by) is its span context's trace id, whichever way its trace id was decided (a root, a
   * client span's, a traceparent's, another gospan's, remembered ids of an ended span).
   */
  @org.junit.jupiter.api.AfterEach
  void traceIdBitsAreTheSpanContextsTraceId() {
    for (FinishedSpan f : out) {
      if (f.span() == null) {
        continue;
      }
      String traceId = f.span().getSpanContext().getTraceId();
      TraceIdBits bits = (TraceIdBits) f.span();
      assertThat(io.opentelemetry.api.trace.TraceId.fromLongs(bits.traceIdHigh(), bits.traceIdLow()))
          .as("trace id bits of %s", f.span().getName()).isEqualTo(traceId);
    }
  }

  void feed(HeaderEvent... events) {
    for (HeaderEvent e : events) {
      assembler.accept(e);
    }
  }

  SpanData only(SpanKind kind) {
    List<SpanData> l = out.stream().map(FinishedSpan::span).filter(s -> s.getKind() == kind).toList();
    assertThat(l).hasSize(1);
    return l.get(0);
  }

  /** The instrument's points now (cumulative), by attributes. */
  List<LongPointData> points(AssemblyMetrics m) {
    List<LongPointData> points = new ArrayList<>();
    for (MetricData d : metrics.collectAllMetrics()) {
      if (d.getName().equals(m.metricName())) {
        d.getData().getPoints().forEach(p -> points.add((LongPointData) p));
      }
    }
    return points;
  }

  /** The count over every attribute set. */
  long counter(AssemblyMetrics m) {
    return points(m).stream().mapToLong(LongPointData::getValue).sum();
  }

  /** The count for exactly these attributes. */
  long counter(AssemblyMetrics m, Attributes attributes) {
    return points(m).stream().filter(p -> p.getAttributes().equals(attributes)).mapToLong(LongPointData::getValue).sum();
  }

  static <T> T attr(SpanData s, AttributeKey<T> key) {
    return s.getAttributes().get(key);
  }

  // ------------------------------------------------------------------ RPC shapes

  @Test
  void aNewConnectionAtTheAddressOfAClosedOneIsANewStreamNotADuplicate() {
    // Same pid and connection id (Go reused the object's address), different client port.
    Events reused = new Events(Events.CLIENT_PID, Events.SERVER_PID, conn.clientConn, conn.serverConn, 40001);
    feed(conn.clientStart(1, t0)); // its end was lost
    feed(
        reused.clientStart(1, t0 + 10 * MS),
        reused.clientHeaders(1, t0 + 11 * MS),
        reused.clientTrailers(1, t0 + 12 * MS, 0, null));
    // the old stream ends incomplete (its connection is gone), the new one completes
    assertThat(out).hasSize(2);
    assertThat(counter(AssemblyMetrics.EVENTS_DUPLICATE)).isZero();
    assertThat(counter(AssemblyMetrics.SPANS_INCOMPLETE)).isEqualTo(1);
    assertThat(assembler.inFlight()).isZero();
  }

  @Test
  void unaryOkGivesLinkedClientAndServerSpans() {
    feed(
        conn.clientStart(1, t0),
        conn.serverStart(1, t0 + 1 * MS),
        conn.serverHeaders(1, t0 + 2 * MS),
        conn.serverTrailers(1, t0 + 3 * MS, 0, null),
        conn.clientHeaders(1, t0 + 4 * MS),
        conn.clientTrailers(1, t0 + 5 * MS, 0, null));

    assertThat(out).hasSize(2);
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(client.getName()).isEqualTo("helloworld.Greeter/SayHello");
    assertThat(server.getName()).isEqualTo("helloworld.Greeter/SayHello");
    assertThat(client.getStartEpochNanos()).isEqualTo(t0 + TestClock.OFFSET);
    assertThat(client.getEndEpochNanos()).isEqualTo(t0 + 5 * MS + TestClock.OFFSET);
    assertThat(server.getStartEpochNanos()).isEqualTo(t0 + 1 * MS + TestClock.OFFSET);
    assertThat(server.getEndEpochNanos()).isEqualTo(t0 + 3 * MS + TestClock.OFFSET);
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);

    assertThat(client.getParentSpanContext().isValid()).isFalse();
    assertThat(server.getTraceId()).isEqualTo(client.getTraceId());
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(server.getParentSpanContext().isRemote()).isTrue();
    assertThat(counter(AssemblyMetrics.SPANS_LINKED)).isEqualTo(1);

    assertThat(attr(client, RpcAttributes.RPC_SYSTEM_NAME)).isEqualTo("grpc");
    assertThat(attr(client, RpcAttributes.RPC_METHOD)).isEqualTo("helloworld.Greeter/SayHello");
    assertThat(attr(client, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isEqualTo("OK");
    assertThat(attr(client, RpcAttributes.ERROR_TYPE)).isNull();
    assertThat(attr(client, RpcAttributes.SERVER_ADDRESS)).isEqualTo("greeter.example");
    assertThat(attr(client, RpcAttributes.SERVER_PORT)).isEqualTo(50051L);
    assertThat(attr(client, RpcAttributes.NETWORK_PEER_ADDRESS)).isEqualTo("10.0.0.2");
    assertThat(attr(client, RpcAttributes.NETWORK_PEER_PORT)).isEqualTo(50051L);
    assertThat(attr(client, RpcAttributes.CLIENT_ADDRESS)).isNull();
    assertThat(attr(server, RpcAttributes.CLIENT_ADDRESS)).isEqualTo("10.0.0.1");
    assertThat(attr(server, RpcAttributes.CLIENT_PORT)).isEqualTo(40000L);
    assertThat(attr(server, RpcAttributes.NETWORK_PEER_ADDRESS)).isEqualTo("10.0.0.1");
    assertThat(attr(server, RpcAttributes.RPC_SYSTEM)).isNull();
    assertThat(attr(server, RpcAttributes.GOSPAN_INCOMPLETE)).isNull();
    assertThat(client.getResource().getAttribute(AttributeKey.stringKey("service.name"))).isEqualTo("svc-100");
    assertThat(server.getResource().getAttribute(AttributeKey.stringKey("service.name"))).isEqualTo("svc-200");

    FinishedSpan f = out.get(0);
    assertThat(f.complete()).isTrue();
    assertThat(f.method()).isEqualTo("helloworld.Greeter/SayHello");
    assertThat(assembler.inFlight()).isZero();
    assertThat(assembler.heldServerSpans()).isZero();
  }

  @Test
  void unixDomainSocketEndsAreLinkedByInodeAndCarryThePath() {
    Events unix = Events.unix(31_337, 31_338, "/run/containerd/containerd.sock");
    feed(
        unix.clientStart(1, t0),
        unix.serverStart(1, t0 + MS),
        unix.serverTrailers(1, t0 + 2 * MS, 5, "not found"),
        unix.clientTrailers(1, t0 + 3 * MS, 5, "not found"));
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(server.getTraceId()).isEqualTo(client.getTraceId());
    assertThat(attr(client, RpcAttributes.NETWORK_TRANSPORT)).isEqualTo("unix");
    assertThat(attr(client, RpcAttributes.NETWORK_PEER_ADDRESS)).isEqualTo("/run/containerd/containerd.sock");
    assertThat(attr(client, RpcAttributes.NETWORK_PEER_PORT)).isNull();
    assertThat(attr(client, RpcAttributes.NETWORK_TYPE)).isNull();
    assertThat(attr(client, RpcAttributes.NETWORK_LOCAL_ADDRESS)).isNull();
    assertThat(attr(client, RpcAttributes.SERVER_ADDRESS)).as(":authority first").isEqualTo("greeter.example");
    assertThat(attr(server, RpcAttributes.NETWORK_TRANSPORT)).isEqualTo("unix");
    assertThat(attr(server, RpcAttributes.NETWORK_LOCAL_ADDRESS)).isEqualTo("/run/containerd/containerd.sock");
    assertThat(attr(server, RpcAttributes.NETWORK_PEER_ADDRESS)).as("the client's end is unnamed").isNull();
    assertThat(attr(server, RpcAttributes.CLIENT_ADDRESS)).isNull();
    assertThat(attr(server, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isEqualTo("NOT_FOUND");
    assertThat(attr(client, RpcAttributes.GOSPAN_CONNECTION_UNIDENTIFIED)).isNull();
  }

  @Test
  void unixEndsMatchByInodeWhicheverEndsPathWasRead() {
    // a client bound to a name of its own: it reads its own path, the server reads its own; the
    // inodes still mirror each other
    SocketPair client = new SocketPair(new SocketPair.Unix(7, "@client"), new SocketPair.Unix(8, ""));
    SocketPair server = new SocketPair(new SocketPair.Unix(8, "/run/s.sock"), new SocketPair.Unix(7, ""));
    Events c = new Events(Events.CLIENT_PID, Events.SERVER_PID, 0xc000_1000L, 0xc000_2000L, client);
    Events sv = new Events(Events.CLIENT_PID, Events.SERVER_PID, 0xc000_1000L, 0xc000_2000L, server.reversed());
    feed(c.clientStart(1, t0), sv.serverStart(1, t0 + MS), sv.serverTrailers(1, t0 + 2 * MS, 0, null),
        c.clientTrailers(1, t0 + 3 * MS, 0, null));
    assertThat(only(SpanKind.SERVER).getParentSpanId()).isEqualTo(only(SpanKind.CLIENT).getSpanId());
    assertThat(attr(only(SpanKind.CLIENT), RpcAttributes.NETWORK_LOCAL_ADDRESS)).isEqualTo("@client");
  }

  @Test
  void aStartWithoutItsSocketSaysWhy() {
    Events none = new Events(Events.CLIENT_PID, Events.SERVER_PID, 0xc000_1000L, 0xc000_2000L, (SocketPair) null);
    HeaderEvent start = none.clientStart(1, t0);
    feed(new HeaderEvent(start.pid(), start.tid(), start.monotonicNs(), start.probe(), start.side(), start.connectionId(), -1,
            null, 1, false, start.fields(), false, "unknown_type"),
        none.clientTrailers(1, t0 + MS, 0, null));
    SpanData client = only(SpanKind.CLIENT);
    assertThat(attr(client, RpcAttributes.GOSPAN_CONNECTION_UNIDENTIFIED)).isEqualTo("unknown_type");
    assertThat(attr(client, RpcAttributes.NETWORK_PEER_ADDRESS)).isNull();
  }

  @Test
  void aSpanKeepsTheResourceReadAtItsStartAfterItsProcessIsForgotten() {
    // the process exits (discovery forgets it, /proc/<pid> is gone) before its span is exported: the
    // resource read at the stream's start is the one exported, not a rebuilt one
    Map<Integer, Boolean> gone = new HashMap<>();
    ProcessMetadata metadata = new ProcessMetadata() {
      @Override
      public void register(io.gospan.receiver.event.ProcessInfo info) {}

      @Override
      public Resource resource(int pid) {
        return Resource.create(Attributes.of(AttributeKey.stringKey("service.name"),
            gone.getOrDefault(pid, false) ? "unknown_service:go" : "ctr"));
      }

      @Override
      public void forget(int pid) {
        gone.put(pid, true);
      }

      @Override
      public int size() {
        return 0;
      }
    };
    out = new ArrayList<>();
    assembler = new SpanAssembler(settings(RpcSemconv.Mode.STABLE), clock, metadata,
        SdkMeterProvider.builder().build().get("test"), out::add, IdGenerator.random());
    // a server span waits link_wait for its client's: held past its process's exit
    feed(conn.serverStart(1, t0), conn.serverTrailers(1, t0 + MS, 0, null));
    assertThat(out).isEmpty();
    metadata.forget(Events.SERVER_PID);
    assembler.flush();
    assertThat(only(SpanKind.SERVER).getResource().getAttribute(AttributeKey.stringKey("service.name"))).isEqualTo("ctr");
  }

  @Test
  void unaryErrorFollowsPerSideRules() {
    feed(
        conn.clientStart(1, t0),
        conn.serverStart(1, t0 + MS),
        conn.serverHeaders(1, t0 + 2 * MS),
        conn.serverTrailers(1, t0 + 3 * MS, 5, "no%20such%20user: %E2%9C%93 100%"),
        conn.clientHeaders(1, t0 + 4 * MS),
        conn.clientTrailers(1, t0 + 5 * MS, 5, "no%20such%20user: %E2%9C%93 100%"));
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    // NOT_FOUND: the client's error, not the server's.
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(client.getStatus().getDescription()).isEqualTo("no such user: ✓ 100%");
    assertThat(attr(client, RpcAttributes.ERROR_TYPE)).isEqualTo("NOT_FOUND");
    assertThat(attr(client, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isEqualTo("NOT_FOUND");
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(attr(server, RpcAttributes.ERROR_TYPE)).isNull();
    assertThat(attr(server, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isEqualTo("NOT_FOUND");
  }

  @Test
  void serverSideErrorCodesMarkTheServerSpan() {
    int stream = 1;
    for (Status.Code s : Status.Code.values()) {
      feed(conn.serverStart(stream, t0), conn.serverTrailers(stream, t0 + MS, s.value(), "m"));
      stream += 2;
    }
    assembler.flush();
    List<String> errors =
        out.stream()
            .map(FinishedSpan::span)
            .filter(sp -> sp.getStatus().getStatusCode() == StatusCode.ERROR)
            .map(sp -> attr(sp, RpcAttributes.RPC_RESPONSE_STATUS_CODE))
            .toList();
    assertThat(errors)
        .containsExactlyInAnyOrder("UNKNOWN", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS");
  }

  @Test
  void trailersOnlyEndsBothSides() {
    feed(
        conn.clientStart(1, t0),
        conn.serverStart(1, t0 + MS),
        conn.serverTrailersOnly(1, t0 + 2 * MS, 12, "unknown service"),
        conn.clientTrailersOnly(1, t0 + 3 * MS, 12, "unknown service"));
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(server.getStatus().getDescription()).isEqualTo("unknown service");
    assertThat(attr(server, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isEqualTo("UNIMPLEMENTED");
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
  }

  /** Server-, client- and bidi-streaming look alike at the header level: one span from open to trailers. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("streamingKinds")
  void streamingCallIsOneSpanFromOpenToTrailers(String kind, long durationMs) {
    feed(conn.clientStart(1, t0), conn.serverStart(1, t0 + MS), conn.serverHeaders(1, t0 + 2 * MS), conn.clientHeaders(1, t0 + 3 * MS));
    time.advanceMillis(durationMs); // messages flow; no header events
    assembler.expire();
    assertThat(out).isEmpty();
    feed(
        conn.serverTrailers(1, t0 + durationMs * MS, 0, null),
        conn.clientTrailers(1, t0 + (durationMs + 1) * MS, 0, null));
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(client.getEndEpochNanos() - client.getStartEpochNanos()).isEqualTo((durationMs + 1) * MS);
    assertThat(server.getEndEpochNanos() - server.getStartEpochNanos()).isEqualTo((durationMs - 1) * MS);
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
  }

  static Stream<Arguments> streamingKinds() {
    return Stream.of(
        Arguments.of("server streaming", 5_000L), Arguments.of("client streaming", 12_000L), Arguments.of("bidi", 25_000L));
  }

  @Test
  void concurrentStreamsOnOneConnectionAndReusedIdsOnAnother() {
    Events other = new Events(40001); // another connection: stream ids restart at 1
    feed(
        conn.clientStart(1, t0),
        conn.clientStart(3, t0 + MS),
        other.clientStart(1, t0 + 2 * MS),
        conn.serverStart(3, t0 + 3 * MS),
        conn.serverStart(1, t0 + 3 * MS),
        other.serverStart(1, t0 + 4 * MS),
        conn.serverTrailers(3, t0 + 5 * MS, 0, null),
        other.serverTrailers(1, t0 + 6 * MS, 13, "boom"),
        conn.serverTrailers(1, t0 + 7 * MS, 0, null),
        conn.clientTrailers(1, t0 + 8 * MS, 0, null),
        other.clientTrailers(1, t0 + 9 * MS, 13, "boom"),
        conn.clientTrailers(3, t0 + 10 * MS, 0, null));
    assertThat(out).hasSize(6);
    List<SpanData> clients = out.stream().map(FinishedSpan::span).filter(s -> s.getKind() == SpanKind.CLIENT).toList();
    List<SpanData> servers = out.stream().map(FinishedSpan::span).filter(s -> s.getKind() == SpanKind.SERVER).toList();
    for (SpanData server : servers) {
      SpanData parent =
          clients.stream().filter(c -> c.getSpanId().equals(server.getParentSpanId())).findFirst().orElseThrow();
      assertThat(parent.getTraceId()).isEqualTo(server.getTraceId());
      assertThat(attr(parent, RpcAttributes.NETWORK_PEER_PORT)).isEqualTo(50051L);
      assertThat(attr(parent, RpcAttributes.RPC_RESPONSE_STATUS_CODE))
          .isEqualTo(attr(server, RpcAttributes.RPC_RESPONSE_STATUS_CODE));
      assertThat(attr(server, RpcAttributes.CLIENT_PORT)).isEqualTo(attr(server, RpcAttributes.CLIENT_PORT));
    }
    assertThat(clients.stream().map(SpanData::getTraceId).distinct()).hasSize(3);
  }

  // ------------------------------------------------------------------ ends that never come

  @Test
  void lostEndTimesOutAsIncomplete() {
    feed(conn.clientStart(1, t0), conn.clientHeaders(1, t0 + 2 * MS));
    time.advanceMillis(29_000);
    assembler.expire();
    assertThat(out).isEmpty();
    time.advanceMillis(1_000);
    assembler.expire();
    SpanData client = only(SpanKind.CLIENT);
    assertThat(attr(client, RpcAttributes.GOSPAN_INCOMPLETE)).isTrue();
    assertThat(attr(client, RpcAttributes.GOSPAN_INCOMPLETE_REASON)).isEqualTo("timeout");
    assertThat(attr(client, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isNull();
    assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(client.getEndEpochNanos()).isEqualTo(t0 + 2 * MS + TestClock.OFFSET); // last event seen
    assertThat(out.get(0).complete()).isFalse();
    assertThat(counter(AssemblyMetrics.SPANS_INCOMPLETE, Attributes.of(AssemblyMetrics.REASON, "timeout")))
        .isEqualTo(1);
    assertThat(assembler.inFlight()).isZero();
    // The late trailers are unmatched, not a second span.
    feed(conn.clientTrailers(1, time.now, 0, null));
    time.advanceMillis(3_000);
    assembler.expire();
    assertThat(out).hasSize(1);
    assertThat(counter(AssemblyMetrics.EVENTS_UNMATCHED)).isEqualTo(1);
  }

  @Test
  void cancelledCallEndsBothSidesWhenTheConnectionCloses() {
    // The client cancels: RST_STREAM, no trailers on either side.
    feed(conn.clientStart(1, t0), conn.serverStart(1, t0 + MS), conn.serverHeaders(1, t0 + 2 * MS));
    assembler.connectionClosed(conn.serverPid, conn.serverConn);
    assembler.connectionClosed(conn.clientPid, conn.clientConn);
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(attr(client, RpcAttributes.GOSPAN_INCOMPLETE_REASON)).isEqualTo("connection_closed");
    assertThat(attr(server, RpcAttributes.GOSPAN_INCOMPLETE_REASON)).isEqualTo("connection_closed");
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
  }

  @Test
  void cancelledWithStatusFromServerIsNotAServerError() {
    feed(
        conn.clientStart(1, t0),
        conn.serverStart(1, t0 + MS),
        conn.serverTrailers(1, t0 + 2 * MS, 1, "context canceled"));
    time.advanceMillis(31_000);
    assembler.expire(); // the client's end never comes (it reset the stream)
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(attr(server, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isEqualTo("CANCELLED");
    assertThat(attr(client, RpcAttributes.GOSPAN_INCOMPLETE)).isTrue();
  }

  @Test
  void rstStreamOnServerTimesOutAndProcessExitEndsTheRest() {
    feed(conn.serverStart(1, t0), conn.serverStart(3, t0 + MS), conn.clientStart(5, t0 + MS));
    time.advanceMillis(30_000);
    assembler.expire();
    assertThat(out).hasSize(3);
    assertThat(out).allSatisfy(f -> assertThat(f.complete()).isFalse());
    feed(conn.serverStart(7, time.now));
    assembler.processExited(conn.serverPid);
    assertThat(out).hasSize(4);
    assertThat(attr(out.get(3).span(), RpcAttributes.GOSPAN_INCOMPLETE_REASON)).isEqualTo("process_exited");
  }

  @Test
  void flushEndsEverythingAsShutdown() {
    feed(conn.clientStart(1, t0), conn.serverStart(3, t0));
    assembler.flush();
    assertThat(out).hasSize(2);
    assertThat(out).allSatisfy(f -> assertThat(attr(f.span(), RpcAttributes.GOSPAN_INCOMPLETE_REASON)).isEqualTo("shutdown"));
  }

  // ------------------------------------------------------------------ arrival orders

  /** Every interleaving of the client's (start, end) with the server's (start, end). */
  static Stream<Arguments> interleavings() {
    List<Arguments> all = new ArrayList<>();
    String[] orders = {"CcSs", "CSce", "CSsc", "SCcs", "SCsc", "SsCc"};
    for (String o : orders) {
      all.add(Arguments.of(o));
    }
    return all.stream();
  }

  /** C/c = client start/end, S/s = server start/end (the order of arrival, not of occurrence). */
  @ParameterizedTest(name = "arrival order {0}")
  @MethodSource("interleavings")
  void linksWhateverOrderTheSidesArriveIn(String order) {
    String o = order.replace("e", "s");
    for (char ch : o.toCharArray()) {
      time.advanceMillis(1);
      switch (ch) {
        case 'C' -> feed(conn.clientStart(1, t0));
        case 'c' -> feed(conn.clientTrailersOnly(1, t0 + 4 * MS, 0, null));
        case 'S' -> feed(conn.serverStart(1, t0 + MS));
        case 's' -> feed(conn.serverTrailersOnly(1, t0 + 3 * MS, 0, null));
        default -> throw new AssertionError(ch);
      }
    }
    time.advanceMillis(5_000);
    assembler.expire();
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getTraceId()).isEqualTo(client.getTraceId());
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(assembler.heldServerSpans()).isZero();
  }

  @Test
  void endBeforeStartOnOneSideStillMakesTheSpan() {
    feed(conn.clientTrailersOnly(1, t0 + 4 * MS, 0, null), conn.clientStart(1, t0));
    SpanData client = only(SpanKind.CLIENT);
    assertThat(client.getEndEpochNanos() - client.getStartEpochNanos()).isEqualTo(4 * MS);
    assertThat(counter(AssemblyMetrics.EVENTS_UNMATCHED)).isZero();
  }

  /**
   * A server start read after its client's end (the events of the two processes read out of
   * order) links to the client from what is remembered of it once it ended: its ids as numbers.
   */
  @Test
  void aServerStartReadAfterItsClientEndedLinksByTheRememberedIds() {
    feed(conn.clientStart(1, t0), conn.clientTrailersOnly(1, t0 + 4 * MS, 0, null));
    SpanData client = only(SpanKind.CLIENT);
    feed(conn.serverStart(1, t0 + MS), conn.serverTrailersOnly(1, t0 + 3 * MS, 0, null));
    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getTraceId()).isEqualTo(client.getTraceId());
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(server.getParentSpanContext().isRemote()).isTrue();
  }

  @Test
  void serverWithNoTracedClientIsReleasedAsRootAfterLinkWait() {
    feed(conn.serverStart(1, t0), conn.serverTrailers(1, t0 + MS, 0, null));
    assertThat(out).isEmpty();
    assertThat(assembler.heldServerSpans()).isEqualTo(1);
    time.advanceMillis(1_999);
    assembler.expire();
    assertThat(out).isEmpty();
    time.advanceMillis(1);
    assembler.expire();
    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getParentSpanContext().isValid()).isFalse();
    assertThat(server.getSpanContext().isValid()).isTrue();
    // A client start after the wait does not re-parent an exported span.
    feed(conn.clientStart(1, t0 - MS), conn.clientTrailersOnly(1, t0 + 2 * MS, 0, null));
    assertThat(only(SpanKind.CLIENT).getTraceId()).isNotEqualTo(server.getTraceId());
  }

  @Test
  void aCallThroughADnatLinksByTheClientsAddress() {
    // The client called a service address (a ClusterIP); a DNAT delivered it to the server.
    Events dnat = Events.throughDnat(40000, Events.addr("10.96.0.10", 80));
    feed(
        dnat.clientStart(1, t0),
        dnat.serverStart(1, t0 + MS),
        dnat.serverTrailersOnly(1, t0 + 2 * MS, 0, null),
        dnat.clientTrailersOnly(1, t0 + 3 * MS, 0, null));
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    assertThat(server.getTraceId()).isEqualTo(client.getTraceId());
    assertThat(attr(client, RpcAttributes.NETWORK_PEER_ADDRESS)).isEqualTo("10.96.0.10");
    assertThat(attr(server, RpcAttributes.CLIENT_ADDRESS)).isEqualTo("10.0.0.1");
  }

  @Test
  void anotherClientPortOrStreamIdIsAnotherCall() {
    Events other = new Events(40001);
    feed(conn.clientStart(1, t0), other.serverStart(1, t0 + MS), conn.serverStart(3, t0 + MS));
    feed(other.serverTrailersOnly(1, t0 + 2 * MS, 0, null), conn.serverTrailersOnly(3, t0 + 2 * MS, 0, null),
        conn.clientTrailersOnly(1, t0 + 3 * MS, 0, null));
    time.advanceMillis(3_000);
    assembler.expire();
    assertThat(out).hasSize(3);
    assertThat(out.stream().map(FinishedSpan::span).filter(s -> s.getKind() == SpanKind.SERVER))
        .allSatisfy(s -> assertThat(s.getParentSpanContext().isValid()).isFalse());
  }

  @Test
  void clientOfAnEarlierConnectionWithTheSame4TupleIsNotAParent() {
    feed(conn.clientStart(1, t0), conn.clientTrailersOnly(1, t0 + MS, 0, null));
    // Same 4-tuple and stream id, but the server stream started after that client span ended.
    feed(conn.serverStart(1, t0 + 10 * MS), conn.serverTrailersOnly(1, t0 + 11 * MS, 0, null));
    time.advanceMillis(3_000);
    assembler.expire();
    assertThat(only(SpanKind.SERVER).getParentSpanContext().isValid()).isFalse();
  }

  @Test
  void noSocketsMeansNoLinkingAndNoWait() {
    HeaderEvent s = conn.serverStart(1, t0);
    HeaderEvent noSockets =
        new HeaderEvent(s.pid(), s.tid(), s.monotonicNs(), s.probe(), s.side(), s.connectionId(), -1, null, 1, false, s.fields(), false);
    HeaderEvent end = conn.serverTrailers(1, t0 + MS, 0, null);
    feed(noSockets, new HeaderEvent(end.pid(), end.tid(), end.monotonicNs(), end.probe(), end.side(), end.connectionId(), -1,
        null, 1, true, end.fields(), false));
    SpanData server = only(SpanKind.SERVER);
    assertThat(attr(server, RpcAttributes.NETWORK_PEER_ADDRESS)).isNull();
    assertThat(attr(server, RpcAttributes.SERVER_ADDRESS)).isEqualTo("greeter.example");
  }

  // ------------------------------------------------------------------ trace context

  @Test
  void traceparentMakesBothSidesChildrenOfIt() {
    String tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    conn.withRequestHeader("traceparent", tp).withRequestHeader("tracestate", "vendor=abc");
    feed(
        conn.clientStart(1, t0),
        conn.serverStart(1, t0 + MS),
        conn.serverTrailersOnly(1, t0 + 2 * MS, 0, null),
        conn.clientTrailersOnly(1, t0 + 3 * MS, 0, null));
    SpanData client = only(SpanKind.CLIENT);
    SpanData server = only(SpanKind.SERVER);
    assertThat(client.getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(client.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
    assertThat(server.getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(server.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
    assertThat(server.getSpanContext().getTraceState().get("vendor")).isEqualTo("abc");
    assertThat(counter(AssemblyMetrics.SPANS_LINKED)).isZero();
  }

  @Test
  void malformedTraceparentIsIgnoredAndCounted() {
    conn.withRequestHeader("traceparent", "00-zzzz-00f067aa0ba902b7-01");
    feed(conn.clientStart(1, t0), conn.clientTrailersOnly(1, t0 + MS, 0, null));
    SpanData client = only(SpanKind.CLIENT);
    assertThat(client.getParentSpanContext().isValid()).isFalse();
    assertThat(client.getSpanContext().isValid()).isTrue();
    assertThat(counter(AssemblyMetrics.TRACEPARENT_MALFORMED)).isEqualTo(1);
  }

  // ------------------------------------------------------------------ duplicates and malformed events

  @Test
  void duplicateEventsAreCountedNotDoubled() {
    HeaderEvent start = conn.clientStart(1, t0);
    HeaderEvent end = conn.clientTrailersOnly(1, t0 + MS, 0, null);
    feed(start, start, end, end);
    assertThat(out).hasSize(1);
    assertThat(counter(AssemblyMetrics.EVENTS_DUPLICATE)).isEqualTo(1);
    time.advanceMillis(3_000);
    assembler.expire();
    assertThat(counter(AssemblyMetrics.EVENTS_UNMATCHED)).isEqualTo(1);
    assertThat(out).hasSize(1);
  }

  @Test
  void malformedEventsAreRejectedByReason() {
    HeaderEvent ok = conn.clientStart(1, t0);
    feed(
        null,
        new HeaderEvent(0, 1, t0, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.CLIENT, 1, 1, null, 1, false, ok.fields(), false),
        new HeaderEvent(5, 1, t0, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.CLIENT, 1, 1, null, 0, false, ok.fields(), false),
        new HeaderEvent(5, 1, t0, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS, Side.SERVER, 1, 1, null, 1, true, List.of(), false),
        new HeaderEvent(5, 1, t0, null, Side.SERVER, 1, 1, null, 1, true, null, false));
    assertThat(out).isEmpty();
    assertThat(counter(AssemblyMetrics.EVENTS_MALFORMED)).isEqualTo(5);
    assertThat(counter(AssemblyMetrics.EVENTS_MALFORMED, Attributes.of(AssemblyMetrics.REASON, "bad_stream_id"))).isEqualTo(1);
    assertThat(counter(AssemblyMetrics.EVENTS_MALFORMED, Attributes.of(AssemblyMetrics.REASON, "probe_side_mismatch")))
        .isEqualTo(1);
    assertThat(assembler.inFlight()).isZero();
  }

  // ------------------------------------------------------------------ events in runs (acceptAll)

  /**
   * A run's events share one clock read, yet none is taken to happen after its "now": an event
   * written after the read (its {@code bpf_ktime_get_ns} later than the read) counts its timeout
   * from its own time. The clock reads t0 when the run is handed over; stream 1 started 1 ms before,
   * stream 2 5 ms after (the clock ticked while the run was read). At t0 + 30 s + 1 ms only stream 1
   * has timed out (30 s after its "now", the read); stream 2 times out 30 s after its own start.
   */
  @Test
  void runWhoseEventsSpanAClockTickTimesEachOutFromItsOwnNow() {
    assembler.acceptAll(new io.gospan.receiver.event.ProbeEvent[] {
        conn.clientStart(1, t0 - MS), conn.clientStart(2, t0 + 5 * MS)}, 0, 2);
    assertThat(assembler.inFlight()).isEqualTo(2);
    time.now = t0 + 30_000 * MS + MS;
    assembler.expire();
    assertThat(out).hasSize(1);
    assertThat(out.get(0).complete()).isFalse();
    assertThat(out.get(0).span().getStartEpochNanos()).isEqualTo(t0 - MS + TestClock.OFFSET);
    assertThat(assembler.inFlight()).isEqualTo(1);
    time.now = t0 + 30_000 * MS + 5 * MS - 1;
    assembler.expire();
    assertThat(out).as("stream 2's timeout counts from its own start").hasSize(1);
    time.now = t0 + 30_000 * MS + 5 * MS;
    assembler.expire();
    assertThat(out).hasSize(2);
    assertThat(out.get(1).span().getStartEpochNanos()).isEqualTo(t0 + 5 * MS + TestClock.OFFSET);
    assertThat(counter(AssemblyMetrics.SPANS_INCOMPLETE, Attributes.of(AssemblyMetrics.REASON, "timeout"))).isEqualTo(2);
  }

  /** A malformed event inside a run is counted and skipped; the events around it still make their span. */
  @Test
  void malformedEventInsideARunIsCountedAndTheRestAssembled() {
    HeaderEvent start = conn.clientStart(1, t0);
    io.gospan.receiver.event.ProbeEvent[] run = {
        start,
        new HeaderEvent(0, 1, t0, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.CLIENT, 1, 1, null, 1, false, start.fields(), false),
        null,
        conn.clientHeaders(1, t0 + MS),
        conn.clientTrailers(1, t0 + 2 * MS, 0, null)};
    assembler.acceptAll(run, 0, run.length);
    assertThat(out).hasSize(1);
    assertThat(out.get(0).complete()).isTrue();
    assertThat(counter(AssemblyMetrics.EVENTS_MALFORMED)).isEqualTo(2);
    assertThat(counter(AssemblyMetrics.EVENTS_MALFORMED, Attributes.of(AssemblyMetrics.REASON, "bad_pid"))).isEqualTo(1);
    assertThat(counter(AssemblyMetrics.EVENTS_MALFORMED, Attributes.of(AssemblyMetrics.REASON, "null"))).isEqualTo(1);
    assertThat(assembler.inFlight()).isZero();
  }

  /**
   * A span sink that throws for one span inside a run: the events after it are still assembled (as
   * each would be one at a time), and the exception reaches the caller after the run.
   */
  @Test
  void sinkThatThrowsInsideARunLosesOnlyItsOwnEvent() {
    metrics = InMemoryMetricReader.create();
    out = new ArrayList<>();
    assembler = new SpanAssembler(settings(RpcSemconv.Mode.STABLE), clock, new FakeMetadata(),
        SdkMeterProvider.builder().registerMetricReader(metrics).build().get("test"),
        f -> {
          if (f.span().getSpanContext().isValid() && out.isEmpty() && failNext[0]) {
            failNext[0] = false;
            throw new IllegalStateException("sink failed");
          }
          out.add(f);
        }, IdGenerator.random());
    io.gospan.receiver.event.ProbeEvent[] run = {
        conn.clientStart(1, t0), conn.clientStart(2, t0),
        conn.clientTrailersOnly(1, t0 + MS, 0, null), conn.clientTrailersOnly(2, t0 + MS, 0, null)};
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> assembler.acceptAll(run, 0, run.length))
        .isInstanceOf(IllegalStateException.class).hasMessage("sink failed");
    assertThat(out).hasSize(1);
    assertThat(assembler.inFlight()).isZero();
  }

  private final boolean[] failNext = {true};

  @Test
  void badGrpcStatusIsUnknownAndMissingOneComesFromHttpStatus() {
    feed(conn.clientStart(1, t0), Events.ev(conn.clientPid, t0 + MS, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS, Side.CLIENT,
        conn.clientConn, conn.clientSockets, 1, true, List.of(HeaderField.of("grpc-status", "banana"))));
    feed(conn.clientStart(3, t0), Events.ev(conn.clientPid, t0 + MS, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS, Side.CLIENT,
        conn.clientConn, conn.clientSockets, 3, true, List.of(HeaderField.of(":status", "503"))));
    assertThat(out).hasSize(2);
    assertThat(out.get(0).status()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(out.get(1).status()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(counter(AssemblyMetrics.EVENTS_MALFORMED, Attributes.of(AssemblyMetrics.REASON, "grpc_status")))
        .isEqualTo(1);
  }

  @Test
  void missingOrTruncatedPathGivesOtherMethod() {
    conn.path(null);
    feed(conn.clientStart(1, t0), conn.clientTrailersOnly(1, t0 + MS, 0, null));
    SpanData s = only(SpanKind.CLIENT);
    assertThat(s.getName()).isEqualTo("grpc");
    assertThat(attr(s, RpcAttributes.RPC_METHOD)).isEqualTo("_OTHER");

    out.clear();
    HeaderEvent truncated =
        Events.ev(conn.clientPid, t0, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.CLIENT, conn.clientConn, conn.clientSockets, 3,
            false, List.of(new HeaderField(":path", "/helloworld.Greeter/Say", true)));
    feed(truncated, conn.clientTrailersOnly(3, t0 + MS, 0, null));
    s = only(SpanKind.CLIENT);
    assertThat(s.getName()).isEqualTo("grpc");
    assertThat(attr(s, RpcAttributes.GOSPAN_HEADERS_TRUNCATED)).isTrue();
  }

  // ------------------------------------------------------------------ bounds

  @Test
  void inFlightIsBoundedAndOverflowCounted() {
    build(new SpanAssembler.Settings(Duration.ofSeconds(30), 2, Duration.ofSeconds(2), 100, RpcSemconv.Mode.STABLE, Set.of()));
    for (int i = 0; i < 10_000; i++) {
      feed(conn.clientStart(2 * i + 1, t0));
    }
    assertThat(assembler.inFlight()).isEqualTo(2);
    assertThat(counter(AssemblyMetrics.STREAMS_OVERFLOW)).isEqualTo(9_998);
  }

  @Test
  void heldServerSpansAreBounded() {
    build(new SpanAssembler.Settings(Duration.ofSeconds(30), 1000, Duration.ofSeconds(2), 3, RpcSemconv.Mode.STABLE, Set.of()));
    for (int i = 0; i < 10; i++) {
      feed(conn.serverStart(2 * i + 1, t0), conn.serverTrailersOnly(2 * i + 1, t0 + MS, 0, null));
    }
    assertThat(assembler.heldServerSpans()).isEqualTo(3);
    assertThat(out).hasSize(7);
    assertThat(counter(AssemblyMetrics.LINKS_OVERFLOW)).isEqualTo(7);
    time.advanceMillis(2_000);
    assembler.expire();
    assertThat(out).hasSize(10);
  }

  // ------------------------------------------------------------------ conventions and headers

  @Test
  void oldConventions() {
    build(settings(RpcSemconv.Mode.OLD));
    feed(conn.clientStart(1, t0), conn.clientTrailersOnly(1, t0 + MS, 14, "down"));
    SpanData s = only(SpanKind.CLIENT);
    assertThat(attr(s, RpcAttributes.RPC_SYSTEM)).isEqualTo("grpc");
    assertThat(attr(s, RpcAttributes.RPC_SERVICE)).isEqualTo("helloworld.Greeter");
    assertThat(attr(s, RpcAttributes.RPC_METHOD)).isEqualTo("SayHello");
    assertThat(attr(s, RpcAttributes.RPC_GRPC_STATUS_CODE)).isEqualTo(14L);
    assertThat(attr(s, RpcAttributes.RPC_SYSTEM_NAME)).isNull();
    assertThat(attr(s, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isNull();
    assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
  }

  @Test
  void dupConventionsEmitBothWithTheCurrentMethod() {
    build(settings(RpcSemconv.Mode.DUP));
    feed(conn.clientStart(1, t0), conn.clientTrailersOnly(1, t0 + MS, 0, null));
    SpanData s = only(SpanKind.CLIENT);
    assertThat(attr(s, RpcAttributes.RPC_SYSTEM)).isEqualTo("grpc");
    assertThat(attr(s, RpcAttributes.RPC_SYSTEM_NAME)).isEqualTo("grpc");
    assertThat(attr(s, RpcAttributes.RPC_SERVICE)).isEqualTo("helloworld.Greeter");
    assertThat(attr(s, RpcAttributes.RPC_METHOD)).isEqualTo("helloworld.Greeter/SayHello");
    assertThat(attr(s, RpcAttributes.RPC_GRPC_STATUS_CODE)).isEqualTo(0L);
    assertThat(attr(s, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isEqualTo("OK");
  }

  @Test
  void onlyAllowedHeadersAreCapturedAndNeverCredentials() {
    conn.withRequestHeader("x-request-id", "r-1").withRequestHeader("authorization", "Bearer secret")
        .withRequestHeader("x-other", "no");
    feed(conn.clientStart(1, t0), conn.clientTrailersOnly(1, t0 + MS, 0, null));
    SpanData s = only(SpanKind.CLIENT);
    assertThat(attr(s, AttributeKey.stringArrayKey("rpc.request.metadata.x-request-id"))).containsExactly("r-1");
    assertThat(s.getAttributes().asMap().keySet()).noneMatch(k -> k.getKey().contains("authorization"));
    assertThat(s.getAttributes().asMap().keySet()).noneMatch(k -> k.getKey().contains("x-other"));
    assertThat(s.getAttributes().asMap().values()).noneMatch(v -> String.valueOf(v).contains("secret"));
  }

  @Test
  void serveHttpPathEventsMakeServerSpansAndOtherHttpRequestsAreIgnored() {
    // gRPC through an HTTP/2 server's ServeHTTP: processHeaders starts, the trailers block ends
    feed(Events.ev(conn.serverPid, t0, ProbeKind.HTTP2_SERVER_PROCESS_HEADERS, Side.SERVER, conn.serverConn,
        conn.serverSockets, 1, false, List.of(HeaderField.of(":path", "/greeter.Greeter/SayHello"),
            HeaderField.of("content-type", "application/grpc"))));
    // a plain HTTP/2 request on the same server is not a span
    feed(Events.ev(conn.serverPid, t0, ProbeKind.HTTP2_SERVER_PROCESS_HEADERS, Side.SERVER, conn.serverConn,
        conn.serverSockets, 3, true, List.of(HeaderField.of(":path", "/healthz"))));
    feed(Events.ev(conn.serverPid, t0 + 2 * MS, ProbeKind.HTTP2_SERVER_WRITE_RES_HEADERS, Side.SERVER, conn.serverConn,
        conn.serverSockets, 1, true, List.of(HeaderField.of("grpc-status", "13"), HeaderField.of("grpc-message", "boom%21"))));
    time.advanceMillis(2_000);
    assembler.expire();
    SpanData s = only(SpanKind.SERVER);
    assertThat(s.getName()).isEqualTo("greeter.Greeter/SayHello");
    assertThat(attr(s, RpcAttributes.RPC_RESPONSE_STATUS_CODE)).isEqualTo("INTERNAL");
    assertThat(s.getStatus().getDescription()).isEqualTo("boom!");
    assertThat(s.getEndEpochNanos() - s.getStartEpochNanos()).isEqualTo(2 * MS);
    assertThat(assembler.inFlight()).isZero();
  }
}
