package io.gospan.receiver.link;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.SocketPair;
import io.gospan.receiver.link.proto.Answer;
import io.gospan.receiver.link.proto.Flow;
import io.gospan.receiver.link.proto.LinkGrpc;
import io.gospan.receiver.link.proto.LookupRequest;
import io.gospan.receiver.link.proto.LookupResponse;
import io.gospan.receiver.link.proto.Query;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.gospan.receiver.span.FinishedSpan;
import io.gospan.receiver.span.MonotonicClock;
import io.gospan.receiver.span.RpcSemconv;
import io.gospan.receiver.span.SpanAssembler;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The link service between gospans over real gRPC (grpc-java on 127.0.0.1): each "gospan" is a
 * span assembler with its own link service, fed the events its pod's processes would give; the
 * pods' addresses (10.0.0.x) are made up, each mapped to the link service serving it on the
 * loopback. Peers that are absent, slow or malformed are grpc-java servers too.
 */
class LinkServiceTest {
  /** Long enough for a cold JVM's first gRPC connection on a busy machine. */
  static final Duration LINK_WAIT = Duration.ofMillis(1500);
  static final Duration EXTRA_WAIT = Duration.ofMillis(300);

  final List<AutoCloseable> closing = new ArrayList<>();
  /** Pod address -> where its gospan's link service listens. */
  final Map<InetAddress, InetSocketAddress> pods = new ConcurrentHashMap<>();
  final MonotonicClock clock = MonotonicClock.system();

  @TempDir Path tmp;

  @AfterEach
  void close() throws Exception {
    Collections.reverse(closing);
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  /** One gospan in the pod at {@code ip}. */
  final class Gospan {
    final InetAddress ip;
    final List<FinishedSpan> out = Collections.synchronizedList(new ArrayList<>());
    final InMemoryMetricReader metrics = InMemoryMetricReader.create();
    final SpanAssembler assembler;
    final LinkService link;

    Gospan(String ip, LinkSettings.Tls tls) throws Exception {
      this.ip = InetAddress.getByName(ip);
      var meter = SdkMeterProvider.builder().registerMetricReader(metrics).build().get("test");
      assembler = new SpanAssembler(
          new SpanAssembler.Settings(Duration.ofSeconds(30), 1000, LINK_WAIT, 1000, RpcSemconv.Mode.STABLE, Set.of()),
          clock, new FakeMetadata(), meter, out::add, IdGenerator.random());
      LinkSettings s = new LinkSettings(new InetSocketAddress("127.0.0.1", 0), 9465, tls, LINK_WAIT,
          EXTRA_WAIT, Duration.ofMillis(25), Duration.ofMillis(50), 16, 1000);
      link = LinkService.start(s, assembler, meter, OwnAddresses.of(Set.of(this.ip)), pods::get);
      closing.add(link);
      pods.put(this.ip, link.address());
      Thread expiry = new Thread(() -> {
        while (!Thread.currentThread().isInterrupted()) {
          assembler.expire();
          try {
            Thread.sleep(20);
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      expiry.setDaemon(true);
      expiry.start();
      closing.add(expiry::interrupt);
    }

    Gospan(String ip) throws Exception {
      this(ip, null);
    }

    void feed(ProbeEvent... events) {
      for (ProbeEvent e : events) {
        assembler.accept(e);
      }
    }

    List<SpanData> spans(SpanKind kind) {
      synchronized (out) {
        return out.stream().map(FinishedSpan::span).filter(s -> s.getKind() == kind).toList();
      }
    }

    long counter(LinkMetrics m) {
      return counter(m, null);
    }

    long counter(LinkMetrics m, Attributes attributes) {
      long sum = 0;
      for (MetricData d : metrics.collectAllMetrics()) {
        if (d.getName().equals(m.metricName())) {
          for (var p : d.getData().getPoints()) {
            if (attributes == null || p.getAttributes().equals(attributes)) {
              sum += ((LongPointData) p).getValue();
            }
          }
        }
      }
      return sum;
    }
  }

  static Events call(String clientIp, int clientPort, String serverIp, int clientPid, int serverPid) {
    InetSocketAddress c = Events.addr(clientIp, clientPort);
    InetSocketAddress s = Events.addr(serverIp, 50051);
    return new Events(clientPid, serverPid, 0xc000_0000L + clientPort, 0xd000_0000L + clientPort,
        new SocketPair(c, s), new SocketPair(s, c));
  }

  long now() {
    return clock.monotonicNow();
  }

  /** {@link #await(BooleanSupplier, String)}, the failure naming {@code g}'s link counters. */
  static void await(BooleanSupplier ok, String what, Gospan g) throws InterruptedException {
    try {
      await(ok, what);
    } catch (AssertionError e) {
      StringBuilder b = new StringBuilder(e.getMessage()).append("; counters:");
      for (LinkMetrics m : LinkMetrics.values()) {
        b.append(' ').append(m.metricName()).append('=').append(g.counter(m));
      }
      throw new AssertionError(b.toString(), e);
    }
  }

  static void await(BooleanSupplier ok, String what) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!ok.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(10);
    }
  }

  @Test
  void aServerSpanBecomesTheChildOfTheClientSpanAnotherGospanTraced() throws Exception {
    Gospan client = new Gospan("10.0.0.1");
    Gospan server = new Gospan("10.0.0.2");
    Events e = call("10.0.0.1", 40000, "10.0.0.2", 100, 200);
    long t = now();
    client.feed(e.clientStart(1, t));
    server.feed(e.serverStart(1, t + 1000), e.serverTrailersOnly(1, t + 2000, 0, null));
    client.feed(e.clientTrailersOnly(1, t + 3000, 0, null));
    await(() -> server.spans(SpanKind.SERVER).size() == 1, "the server span");
    long took = (now() - t) / 1_000_000;
    SpanData c = client.spans(SpanKind.CLIENT).get(0);
    SpanData s = server.spans(SpanKind.SERVER).get(0);
    assertThat(s.getTraceId()).isEqualTo(c.getTraceId());
    assertThat(s.getParentSpanId()).isEqualTo(c.getSpanId());
    assertThat(took).as("linked within a batch or two, ms").isLessThan(LINK_WAIT.toMillis());
    // the answer's thread counts the link after span assembly took it (and exported the span)
    await(() -> server.counter(LinkMetrics.SPANS_LINKED) == 1, "the link counted");
    assertThat(server.counter(LinkMetrics.LOOKUPS_SENT)).isEqualTo(1);
    assertThat(server.counter(LinkMetrics.LOOKUPS_ANSWERED)).isEqualTo(1);
    assertThat(client.counter(LinkMetrics.QUERIES_SERVED, Attributes.of(LinkMetrics.RESULT, "found"))).isEqualTo(1);
    assertThat(client.counter(LinkMetrics.LOOKUPS_SENT)).as("the client's gospan asks no one").isZero();
  }

  /**
   * The answer carries the client span's sampling decision ({@code Answer.unsampled}): under
   * parentbased_always_on, a client span not sampled (its application's traceparent says so) makes
   * its server span in the other gospan not sampled either; a sampled one, sampled.
   */
  @Test
  void theAnswerCarriesTheClientSpansSamplingDecision() throws Exception {
    Gospan client = new Gospan("10.0.0.1");
    Gospan server = new Gospan("10.0.0.2");
    client.assembler.sampler(Sampler.parentBased(Sampler.alwaysOn()));
    server.assembler.sampler(Sampler.parentBased(Sampler.alwaysOn()));
    // sampled first: its question also opens the connection (a cold JVM's first may outlast the wait: then a root, sampled too)
    for (String flag : List.of("01", "00")) {
      Events app = call("10.0.0.1", 40000, "10.0.0.2", 100, 200)
          .withRequestHeader("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-" + flag);
      Events seen = call("10.0.0.1", 40000, "10.0.0.2", 100, 200); // the server's end: no traceparent (a proxy dropped it)
      int stream = flag.equals("01") ? 1 : 3;
      long linked = server.counter(LinkMetrics.SPANS_LINKED);
      long t = now();
      client.feed(app.clientStart(stream, t));
      server.feed(seen.serverStart(stream, t + 1000), seen.serverTrailersOnly(stream, t + 2000, 0, null));
      client.feed(app.clientTrailersOnly(stream, t + 3000, 0, null));
      int n = stream == 1 ? 1 : 2;
      await(() -> server.out.size() == n && client.out.size() == n, "the two spans, traceparent flags " + flag);
      assertThat(client.out.get(n - 1).sampled()).isEqualTo(flag.equals("01"));
      assertThat(server.out.get(n - 1).sampled()).as("the server span, parent's flags %s", flag).isEqualTo(flag.equals("01"));
      if (flag.equals("00")) {
        assertThat(server.counter(LinkMetrics.SPANS_LINKED)).as("the unsampled client span's server span linked").isEqualTo(linked + 1);
      }
    }
  }

  @Test
  void aChainOfThreeGospansIsOneTraceAndTheMiddleAnswersOnceItsOwnParentIsKnown() throws Exception {
    Gospan a = new Gospan("10.0.0.1");
    Gospan b = new Gospan("10.0.0.2");
    Gospan c = new Gospan("10.0.0.3");
    Events hop1 = call("10.0.0.1", 41000, "10.0.0.2", 100, 300);
    Events hop2 = call("10.0.0.2", 42000, "10.0.0.3", 300, 200);
    long t = now();
    a.feed(hop1.clientStart(1, t));
    b.feed(hop1.serverStart(1, t + 1000), hop2.streamParent(1, t + 2000, hop1, 1), hop2.clientStart(1, t + 3000));
    c.feed(hop2.serverStart(1, t + 4000), hop2.serverTrailersOnly(1, t + 5000, 0, null));
    b.feed(hop2.clientTrailersOnly(1, t + 6000, 0, null), hop1.serverTrailersOnly(1, t + 7000, 0, null));
    a.feed(hop1.clientTrailersOnly(1, t + 8000, 0, null));
    await(() -> c.spans(SpanKind.SERVER).size() == 1 && b.spans(SpanKind.CLIENT).size() == 1, "the spans");
    SpanData front = a.spans(SpanKind.CLIENT).get(0);
    SpanData relayServer = b.spans(SpanKind.SERVER).get(0);
    SpanData relayClient = b.spans(SpanKind.CLIENT).get(0);
    SpanData back = c.spans(SpanKind.SERVER).get(0);
    assertThat(List.of(relayServer, relayClient, back)).allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(front.getTraceId()));
    assertThat(relayServer.getParentSpanId()).isEqualTo(front.getSpanId());
    assertThat(relayClient.getParentSpanId()).isEqualTo(relayServer.getSpanId());
    assertThat(back.getParentSpanId()).isEqualTo(relayClient.getSpanId());
  }

  @Test
  void aClientNoGospanTracedIsAnsweredNotFoundAndTheServerSpanIsARootBeforeLinkWait() throws Exception {
    Gospan peer = new Gospan("10.0.0.1"); // traces other calls, not this one
    Gospan server = new Gospan("10.0.0.2");
    Events e = call("10.0.0.1", 40000, "10.0.0.2", 100, 200);
    long t = now();
    server.feed(e.serverStart(1, t), e.serverTrailersOnly(1, t + 1000, 0, null));
    // the peer reads an event from after that start (+ its clock skew): it would have seen the client start by then
    peer.feed(call("10.0.0.1", 40001, "10.0.0.9", 100, 209).clientStart(1, t + 60_000_000L));
    await(() -> server.spans(SpanKind.SERVER).size() == 1, "the server span");
    long took = (now() - t) / 1_000_000;
    assertThat(server.spans(SpanKind.SERVER).get(0).getParentSpanContext().isValid()).isFalse();
    assertThat(took).as("ms: not found after the peer's grace (skew 50 + 250 ms), before link_wait").isLessThan(LINK_WAIT.toMillis());
    assertThat(server.counter(LinkMetrics.LOOKUPS_UNANSWERED, Attributes.of(LinkMetrics.REASON, "not_found"))).isEqualTo(1);
  }

  @Test
  void aPeerThatReadNothingSinceTheServersStartIsWaitedForTillTheEnd() throws Exception {
    new Gospan("10.0.0.1"); // reads nothing: idle, or its reader lags
    Gospan server = new Gospan("10.0.0.2");
    Events e = call("10.0.0.1", 40000, "10.0.0.2", 100, 200);
    long t = now();
    server.feed(e.serverStart(1, t), e.serverTrailersOnly(1, t + 1000, 0, null));
    await(() -> server.spans(SpanKind.SERVER).size() == 1, "the server span");
    long took = (now() - t) / 1_000_000;
    assertThat(took).as("ms: the whole wait, link_wait + the extra wait").isGreaterThanOrEqualTo(LINK_WAIT.toMillis());
    assertThat(server.spans(SpanKind.SERVER).get(0).getParentSpanContext().isValid()).isFalse();
  }

  @Test
  void anAbsentPeerIsCountedAndBackedOffAndItsServerSpansAreRootsAfterTheirWait() throws Exception {
    Gospan server = new Gospan("10.0.0.2");
    // a port bound but not listening: connections are refused, and no other process can take it meanwhile
    java.net.Socket reserved = new java.net.Socket();
    reserved.bind(new InetSocketAddress("127.0.0.1", 0));
    closing.add(reserved);
    pods.put(InetAddress.getByName("10.0.0.1"), new InetSocketAddress("127.0.0.1", reserved.getLocalPort()));
    Events e = call("10.0.0.1", 40000, "10.0.0.2", 100, 200);
    long t = now();
    server.feed(e.serverStart(1, t), e.serverTrailersOnly(1, t + 1000, 0, null));
    await(() -> server.counter(LinkMetrics.PEERS_UNREACHABLE) == 1, "the peer counted unreachable", server);
    server.feed(e.serverStart(3, now()), e.serverTrailersOnly(3, now(), 0, null));
    // The first question is sent and lost with the stream (unanswered peer_failed), or, when the
    // refusal is reported while the stream opens (seen once on a loaded machine), dropped with it
    // before it was sent (skipped peer_backed_off, not counted sent): either way counted once. The
    // second is skipped: the peer is backed off.
    long firstSkipped = server.counter(LinkMetrics.LOOKUPS_SKIPPED, Attributes.of(LinkMetrics.REASON, "peer_backed_off")) - 1;
    assertThat(firstSkipped).isBetween(0L, 1L);
    await(() -> server.spans(SpanKind.SERVER).size() == 2, "both server spans");
    long took = (now() - t) / 1_000_000;
    assertThat(server.spans(SpanKind.SERVER)).allSatisfy(s -> assertThat(s.getParentSpanContext().isValid()).isFalse());
    assertThat(took).as("ms: released by link_wait (+ the extra wait for the asked one)")
        .isBetween(LINK_WAIT.toMillis(), LINK_WAIT.plus(EXTRA_WAIT).toMillis() + 500);
    assertThat(server.counter(LinkMetrics.LOOKUPS_UNANSWERED)).isEqualTo(1 - firstSkipped);
    assertThat(server.counter(LinkMetrics.LOOKUPS_SENT)).isEqualTo(1 - firstSkipped);
    assertThat(server.link.client().pending()).isZero();
  }

  /** A gRPC server at a peer's address that does what {@code behaviour} does with each request. */
  void fakePeer(String ip, Function<LookupRequest, LookupResponse> behaviour, long delayMillis) throws IOException {
    Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(new LinkGrpc.LinkImplBase() {
      @Override
      public StreamObserver<LookupRequest> lookup(StreamObserver<LookupResponse> out) {
        return new StreamObserver<>() {
          @Override
          public void onNext(LookupRequest req) {
            LookupResponse r = behaviour.apply(req);
            if (r == null) {
              return;
            }
            new Thread(() -> {
              try {
                Thread.sleep(delayMillis);
                synchronized (out) {
                  out.onNext(r);
                }
              } catch (Exception ignored) {
                // stream gone
              }
            }).start();
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        };
      }
    }).build().start();
    closing.add(s::shutdownNow);
    pods.put(InetAddress.getByName(ip), new InetSocketAddress("127.0.0.1", s.getPort()));
  }

  static final ByteString TRACE = ByteString.copyFrom(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  static final ByteString SPAN = ByteString.copyFrom(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});

  static LookupResponse answerAll(LookupRequest req, Function<Query, Answer> f) {
    LookupResponse.Builder b = LookupResponse.newBuilder();
    req.getQueriesList().forEach(q -> b.addAnswers(f.apply(q)));
    return b.build();
  }

  @Test
  void aSlowPeerIsWaitedForBoundedAndItsLateAnswerChangesNothing() throws Exception {
    fakePeer("10.0.0.1", req -> answerAll(req, q -> Answer.newBuilder().setFlow(q.getFlow())
        .setServerStartUnixNano(q.getServerStartUnixNano()).setFound(true).setTraceId(TRACE).setSpanId(SPAN).build()), 4_000);
    Gospan server = new Gospan("10.0.0.2");
    Events e = call("10.0.0.1", 40000, "10.0.0.2", 100, 200);
    long t = now();
    server.feed(e.serverStart(1, t), e.serverTrailersOnly(1, t + 1000, 0, null));
    await(() -> server.spans(SpanKind.SERVER).size() == 1, "the server span");
    long took = (now() - t) / 1_000_000;
    assertThat(server.spans(SpanKind.SERVER).get(0).getParentSpanContext().isValid()).isFalse();
    assertThat(took).as("ms: link_wait + the extra wait, not the peer's 4 s")
        .isBetween(LINK_WAIT.plus(EXTRA_WAIT).toMillis() - 50, LINK_WAIT.plus(EXTRA_WAIT).toMillis() + 500);
    await(() -> server.counter(LinkMetrics.LOOKUPS_UNANSWERED, Attributes.of(LinkMetrics.REASON, "timeout")) == 1,
        "the question given up");
    // the answer arrives after the question was given up: ignored as unasked, nothing re-parented
    await(() -> server.counter(LinkMetrics.ANSWERS_MALFORMED) == 1, "the late answer");
    assertThat(server.counter(LinkMetrics.ANSWERS_MALFORMED, Attributes.of(LinkMetrics.REASON, "unasked"))).isEqualTo(1);
    assertThat(server.spans(SpanKind.SERVER)).hasSize(1);
    assertThat(server.counter(LinkMetrics.SPANS_LINKED)).isZero();
  }

  @Test
  void malformedAnswersAreIgnoredAndCountedAndTheSpanWaitsOnThenIsARoot() throws Exception {
    fakePeer("10.0.0.1", req -> {
      LookupResponse.Builder b = LookupResponse.newBuilder();
      for (Query q : req.getQueriesList()) {
        // ids of the wrong length, all-zero ids, a flow not asked, a flow with a 3-byte address
        b.addAnswers(Answer.newBuilder().setFlow(q.getFlow()).setServerStartUnixNano(q.getServerStartUnixNano())
            .setFound(true).setTraceId(ByteString.copyFrom(new byte[3])).setSpanId(SPAN));
        b.addAnswers(Answer.newBuilder().setFlow(q.getFlow()).setServerStartUnixNano(q.getServerStartUnixNano())
            .setFound(true).setTraceId(ByteString.copyFrom(new byte[16])).setSpanId(ByteString.copyFrom(new byte[8])));
        b.addAnswers(Answer.newBuilder().setFlow(q.getFlow().toBuilder().setStreamId(q.getFlow().getStreamId() + 2))
            .setServerStartUnixNano(q.getServerStartUnixNano()).setFound(true).setTraceId(TRACE).setSpanId(SPAN));
        b.addAnswers(Answer.newBuilder().setFlow(Flow.newBuilder().setClientIp(ByteString.copyFrom(new byte[3]))
            .setClientPort(1).setStreamId(1)).setFound(true).setTraceId(TRACE).setSpanId(SPAN));
      }
      return b.build();
    }, 0);
    Gospan server = new Gospan("10.0.0.2");
    Events e = call("10.0.0.1", 40000, "10.0.0.2", 100, 200);
    long t = now();
    server.feed(e.serverStart(1, t), e.serverTrailersOnly(1, t + 1000, 0, null));
    await(() -> server.spans(SpanKind.SERVER).size() == 1, "the server span");
    assertThat(server.spans(SpanKind.SERVER).get(0).getParentSpanContext().isValid()).isFalse();
    assertThat(server.counter(LinkMetrics.ANSWERS_MALFORMED, Attributes.of(LinkMetrics.REASON, "bad_ids"))).isEqualTo(2);
    assertThat(server.counter(LinkMetrics.ANSWERS_MALFORMED, Attributes.of(LinkMetrics.REASON, "unasked"))).isEqualTo(1);
    assertThat(server.counter(LinkMetrics.ANSWERS_MALFORMED, Attributes.of(LinkMetrics.REASON, "bad_flow"))).isEqualTo(1);
    assertThat(server.counter(LinkMetrics.SPANS_LINKED)).isZero();
    await(() -> server.counter(LinkMetrics.LOOKUPS_UNANSWERED, Attributes.of(LinkMetrics.REASON, "timeout")) == 1,
        "the question given up");
  }

  @Test
  void mutualTlsLinksAndAPeerWithoutTheCertificateIsRefused() throws Exception {
    TestCerts certs = TestCerts.create(tmp, "gospan-link");
    LinkSettings.Tls tls = new LinkSettings.Tls(certs.cert, certs.cert, certs.key, "gospan-link");
    Gospan client = new Gospan("10.0.0.1", tls);
    Gospan server = new Gospan("10.0.0.2", tls);
    Gospan plaintext = new Gospan("10.0.0.3");
    Events e = call("10.0.0.1", 40000, "10.0.0.2", 100, 200);
    long t = now();
    client.feed(e.clientStart(1, t));
    server.feed(e.serverStart(1, t + 1000), e.serverTrailersOnly(1, t + 2000, 0, null));
    await(() -> server.spans(SpanKind.SERVER).size() == 1, "the server span");
    assertThat(server.spans(SpanKind.SERVER).get(0).getParentSpanContext().isValid()).isTrue();
    assertThat(server.counter(LinkMetrics.SPANS_LINKED)).isEqualTo(1);

    // a plaintext gospan asking the TLS one gets nothing
    Events other = call("10.0.0.1", 40001, "10.0.0.3", 100, 201);
    client.feed(other.clientStart(1, now()));
    plaintext.feed(other.serverStart(1, now()), other.serverTrailersOnly(1, now(), 0, null));
    await(() -> plaintext.spans(SpanKind.SERVER).size() == 1, "the plaintext gospan's server span");
    assertThat(plaintext.spans(SpanKind.SERVER).get(0).getParentSpanContext().isValid()).isFalse();
    assertThat(plaintext.counter(LinkMetrics.PEERS_UNREACHABLE)).isEqualTo(1);
  }

  @Test
  void anAddressInUseIsNotFatalTheGospanStillAsks() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      var meter = SdkMeterProvider.builder().build().get("test");
      SpanAssembler a = new SpanAssembler(
          new SpanAssembler.Settings(Duration.ofSeconds(30), 1000, LINK_WAIT, 1000, RpcSemconv.Mode.STABLE, Set.of()),
          clock, new FakeMetadata(), meter, s -> {}, IdGenerator.random());
      LinkService l = LinkService.start(LinkSettings.of(new InetSocketAddress("127.0.0.1", taken.getLocalPort()),
          taken.getLocalPort(), null, LINK_WAIT), a, meter);
      closing.add(l);
      assertThat(l.serving()).isFalse();
      assertThat(l.address()).isNull();
      assertThat(l.client()).isNotNull();
    }
  }

  static final class TestCerts {
    final Path cert;
    final Path key;

    TestCerts(Path cert, Path key) {
      this.cert = cert;
      this.key = key;
    }

    /** A self-signed certificate naming {@code name} (DNS) and its PKCS#8 key, made with the JDK's keytool. */
    static TestCerts create(Path dir, String name) throws Exception {
      Path store = dir.resolve(name + ".p12");
      Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
      Process p = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "RSA",
          "-keysize", "2048", "-dname", "CN=" + name, "-ext", "SAN=dns:" + name, "-validity", "2",
          "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit", "-keypass", "changeit"))
          .redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes());
      assertThat(p.waitFor()).as(output).isZero();
      java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
      try (var in = Files.newInputStream(store)) {
        ks.load(in, "changeit".toCharArray());
      }
      Path cert = Files.writeString(dir.resolve(name + ".pem"), pem("CERTIFICATE", ks.getCertificate(name).getEncoded()));
      Path key = Files.writeString(dir.resolve(name + "-key.pem"), pem("PRIVATE KEY", ks.getKey(name, "changeit".toCharArray()).getEncoded()));
      return new TestCerts(cert, key);
    }

    static String pem(String type, byte[] der) {
      return "-----BEGIN " + type + "-----\n" + java.util.Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
          + "\n-----END " + type + "-----\n";
    }
  }
}
