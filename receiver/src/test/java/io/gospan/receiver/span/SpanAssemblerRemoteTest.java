package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.ProbeEvent;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Linking across gospans, span assembly's side: one assembler per gospan (front client, relay,
 * back server, each its own "pod"), the questions one asks ({@link RemoteLinks#lookup}) answered
 * by the test from what the other one says ({@link SpanAssembler#clientSpan}), as the link service
 * does over gRPC.
 */
class SpanAssemblerRemoteTest {
  static final long MS = 1_000_000L;
  static final long EXTRA_WAIT = 500 * MS;

  /** One gospan: its assembler, its spans, the questions it asked. */
  static final class Gospan implements RemoteLinks {
    final SpanAssembler assembler;
    final List<FinishedSpan> out = new ArrayList<>();
    final List<Object[]> asked = new ArrayList<>(); // {ClientFlow, Long serverStartEpochNanos}
    final Set<String> own;
    boolean accept = true;

    Gospan(TestClock time, Set<String> ownAddresses) {
      this.own = ownAddresses;
      assembler = new SpanAssembler(
          new SpanAssembler.Settings(Duration.ofSeconds(30), 1000, Duration.ofSeconds(2), 100, RpcSemconv.Mode.STABLE, Set.of()),
          MonotonicClock.of(time), new FakeMetadata(), SdkMeterProvider.builder().build().get("test"), out::add,
          IdGenerator.random());
      assembler.remoteLinks(this);
    }

    @Override
    public boolean isLocal(InetAddress address) {
      return address.isLoopbackAddress() || own.contains(address.getHostAddress());
    }

    @Override
    public boolean lookup(ClientFlow flow, long serverStartEpochNanos) {
      if (!accept) {
        return false;
      }
      asked.add(new Object[] {flow, serverStartEpochNanos});
      return true;
    }

    @Override
    public long extraWaitNanos() {
      return EXTRA_WAIT;
    }

    void feed(ProbeEvent... events) {
      for (ProbeEvent e : events) {
        assembler.accept(e);
      }
    }

    List<SpanData> spans(SpanKind kind) {
      return out.stream().map(FinishedSpan::span).filter(s -> s.getKind() == kind).toList();
    }

    SpanData only(SpanKind kind) {
      List<SpanData> l = spans(kind);
      assertThat(l).hasSize(1);
      return l.get(0);
    }

    /** Answers every question asked so far from {@code peer}'s assembler, as the link service would; returns how many were found. */
    int answerFrom(Gospan peer) {
      int found = 0;
      for (Object[] q : List.copyOf(asked)) {
        ClientSpanAnswer a = peer.assembler.clientSpan((ClientFlow) q[0], (Long) q[1], 0);
        if (a.state() == ClientSpanAnswer.State.FOUND) {
          asked.remove(q);
          assertThat(assembler.remoteParent((ClientFlow) q[0], (Long) q[1], a.span())).isTrue();
          found++;
        }
      }
      return found;
    }
  }

  TestClock time;
  long t0;
  Events front; // front client 10.0.0.1 (pid 100) -> server 10.0.0.2 (pid 200)

  @BeforeEach
  void setUp() {
    time = new TestClock();
    t0 = time.now;
    front = new Events(40000);
  }

  @Test
  void aServerSpanWhoseClientAnotherGospanTracedIsItsChildInItsTrace() {
    Gospan client = new Gospan(time, Set.of("10.0.0.1"));
    Gospan server = new Gospan(time, Set.of("10.0.0.2"));
    client.feed(front.clientStart(1, t0));
    server.feed(front.serverStart(1, t0 + MS), front.serverTrailersOnly(1, t0 + 2 * MS, 0, null));
    client.feed(front.clientTrailersOnly(1, t0 + 3 * MS, 0, null));

    assertThat(client.asked).isEmpty();
    assertThat(server.asked).hasSize(1);
    ClientFlow asked = (ClientFlow) server.asked.get(0)[0];
    assertThat(asked).isEqualTo(new ClientFlow(Events.addr("10.0.0.1", 40000), 1));
    assertThat(server.asked.get(0)[1]).isEqualTo(t0 + MS + TestClock.OFFSET);
    assertThat(server.out).as("held until the answer").isEmpty();

    assertThat(server.answerFrom(client)).isEqualTo(1);
    SpanData c = client.only(SpanKind.CLIENT);
    SpanData s = server.only(SpanKind.SERVER);
    assertThat(s.getTraceId()).isEqualTo(c.getTraceId());
    assertThat(s.getParentSpanId()).isEqualTo(c.getSpanId());
    assertThat(s.getParentSpanContext().isRemote()).isTrue();
  }

  @Test
  void aClientAtOneOfTheGospansOwnAddressesIsNotAskedAbout() {
    Gospan server = new Gospan(time, Set.of("10.0.0.2", "10.0.0.1"));
    server.feed(front.serverStart(1, t0), front.serverTrailersOnly(1, t0 + MS, 0, null));
    Events loopback = new Events(100, 200, 1, 2,
        new io.gospan.receiver.event.SocketPair(Events.addr("127.0.0.1", 40001), Events.addr("127.0.0.1", 50051)),
        new io.gospan.receiver.event.SocketPair(Events.addr("127.0.0.1", 50051), Events.addr("127.0.0.1", 40001)));
    server.feed(loopback.serverStart(1, t0), loopback.serverTrailersOnly(1, t0 + MS, 0, null));
    assertThat(server.asked).isEmpty();
    time.advanceMillis(2_000);
    server.assembler.expire();
    assertThat(server.spans(SpanKind.SERVER)).hasSize(2).allSatisfy(sp -> assertThat(sp.getParentSpanContext().isValid()).isFalse());
  }

  @Test
  void aUnixDomainSocketCallIsLinkedLocallyAndNeverAskedAbout() {
    Gospan g = new Gospan(time, Set.of("10.0.0.2"));
    Events unix = Events.unix(31_337, 31_338, "/run/containerd/containerd.sock");
    g.feed(unix.clientStart(1, t0), unix.serverStart(1, t0 + MS), unix.serverTrailersOnly(1, t0 + 2 * MS, 0, null),
        unix.clientTrailersOnly(1, t0 + 3 * MS, 0, null));
    assertThat(g.asked).as("a unix socket's client end is on this host").isEmpty();
    SpanData c = g.only(SpanKind.CLIENT);
    SpanData sv = g.only(SpanKind.SERVER);
    assertThat(sv.getTraceId()).isEqualTo(c.getTraceId());
    assertThat(sv.getParentSpanId()).isEqualTo(c.getSpanId());

    // A unix socket server span whose client this gospan did not trace: not asked, a root after link_wait.
    Events other = Events.unix(41_337, 41_338, "/run/other.sock");
    g.feed(other.serverStart(1, t0 + 4 * MS), other.serverTrailersOnly(1, t0 + 5 * MS, 0, null));
    assertThat(g.asked).isEmpty();
    time.advanceMillis(2_000);
    g.assembler.expire();
    assertThat(g.spans(SpanKind.SERVER)).hasSize(2)
        .filteredOn(sp -> !sp.getSpanId().equals(sv.getSpanId()))
        .singleElement().satisfies(sp -> assertThat(sp.getParentSpanContext().isValid()).isFalse());
  }

  @Test
  void aServerSpanThatAskedWaitsLinkWaitPlusTheExtraWaitThenIsARoot() {
    Gospan server = new Gospan(time, Set.of("10.0.0.2"));
    server.feed(front.serverStart(1, t0), front.serverTrailersOnly(1, t0 + MS, 0, null));
    assertThat(server.asked).hasSize(1);
    time.advanceMillis(2_000);
    server.assembler.expire();
    assertThat(server.out).as("link_wait is over, the extra wait is not").isEmpty();
    time.advanceMillis(EXTRA_WAIT / MS - 1);
    server.assembler.expire();
    assertThat(server.out).isEmpty();
    time.advanceMillis(1);
    server.assembler.expire();
    assertThat(server.only(SpanKind.SERVER).getParentSpanContext().isValid()).isFalse();
    // A late answer changes nothing.
    SpanContext late = SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331",
        io.opentelemetry.api.trace.TraceFlags.getSampled(), io.opentelemetry.api.trace.TraceState.getDefault());
    assertThat(server.assembler.remoteParent((ClientFlow) server.asked.get(0)[0], (Long) server.asked.get(0)[1], late)).isFalse();
  }

  @Test
  void aDefiniteNotFoundReleasesTheServerSpanAsARootAtOnce() {
    Gospan server = new Gospan(time, Set.of("10.0.0.2"));
    server.feed(front.serverStart(1, t0), front.serverTrailersOnly(1, t0 + MS, 0, null));
    ClientFlow flow = (ClientFlow) server.asked.get(0)[0];
    long start = (Long) server.asked.get(0)[1];
    assertThat(server.assembler.remoteNotFound(flow, start + 5 * MS)).as("another server span's question").isFalse();
    assertThat(server.out).isEmpty();
    assertThat(server.assembler.remoteNotFound(flow, start)).isTrue();
    assertThat(server.only(SpanKind.SERVER).getParentSpanContext().isValid()).isFalse();
    assertThat(server.assembler.remoteNotFound(flow, start)).isFalse();
  }

  @Test
  void aQuestionNotQueuedWaitsLinkWaitOnly() {
    Gospan server = new Gospan(time, Set.of("10.0.0.2"));
    server.accept = false; // e.g. the peer is backed off
    server.feed(front.serverStart(1, t0), front.serverTrailersOnly(1, t0 + MS, 0, null));
    time.advanceMillis(2_000);
    server.assembler.expire();
    assertThat(server.only(SpanKind.SERVER).getParentSpanContext().isValid()).isFalse();
  }

  @Test
  void anAnswerForAnotherStartOrAnotherFlowIsNotTaken() {
    Gospan server = new Gospan(time, Set.of("10.0.0.2"));
    server.feed(front.serverStart(1, t0));
    ClientFlow flow = (ClientFlow) server.asked.get(0)[0];
    long start = (Long) server.asked.get(0)[1];
    SpanContext parent = SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331",
        io.opentelemetry.api.trace.TraceFlags.getSampled(), io.opentelemetry.api.trace.TraceState.getDefault());
    assertThat(server.assembler.remoteParent(flow, start + 5 * MS, parent)).isFalse();
    assertThat(server.assembler.remoteParent(new ClientFlow(flow.client(), 3), start, parent)).isFalse();
    assertThat(server.assembler.remoteParent(flow, start, parent)).isTrue();
    assertThat(server.assembler.remoteParent(flow, start, parent)).as("once").isFalse();
  }

  @Test
  void theWholeChainIsOneTraceAcrossThreeGospans() {
    // front (10.0.0.1) -> relay (10.0.0.2, pid 300) -> back (10.0.0.3), each its own gospan
    Events hop1 = new Events(100, 300, 0xa1, 0xb1,
        new io.gospan.receiver.event.SocketPair(Events.addr("10.0.0.1", 41000), Events.addr("10.0.0.2", 50051)),
        new io.gospan.receiver.event.SocketPair(Events.addr("10.0.0.2", 50051), Events.addr("10.0.0.1", 41000)));
    Events hop2 = new Events(300, 200, 0xa2, 0xb2,
        new io.gospan.receiver.event.SocketPair(Events.addr("10.0.0.2", 42000), Events.addr("10.96.0.10", 80)), // a ClusterIP
        new io.gospan.receiver.event.SocketPair(Events.addr("10.0.0.3", 50051), Events.addr("10.0.0.2", 42000)));
    Gospan a = new Gospan(time, Set.of("10.0.0.1"));
    Gospan b = new Gospan(time, Set.of("10.0.0.2"));
    Gospan c = new Gospan(time, Set.of("10.0.0.3"));
    a.feed(hop1.clientStart(1, t0));
    b.feed(hop1.serverStart(1, t0 + MS), hop2.streamParent(1, t0 + 2 * MS, hop1, 1), hop2.clientStart(1, t0 + 3 * MS));
    c.feed(hop2.serverStart(1, t0 + 4 * MS), hop2.serverTrailersOnly(1, t0 + 5 * MS, 0, null));
    b.feed(hop2.clientTrailersOnly(1, t0 + 6 * MS, 0, null), hop1.serverTrailersOnly(1, t0 + 7 * MS, 0, null));
    a.feed(hop1.clientTrailersOnly(1, t0 + 8 * MS, 0, null));

    // c asks b first: b's client span waits for b's server span, which waits for a.
    assertThat(c.asked).hasSize(1);
    ClientSpanAnswer pending = b.assembler.clientSpan((ClientFlow) c.asked.get(0)[0], (Long) c.asked.get(0)[1], 0);
    assertThat(pending.state()).isEqualTo(ClientSpanAnswer.State.PENDING);
    assertThat(c.answerFrom(b)).isZero();
    assertThat(b.answerFrom(a)).isEqualTo(1);
    assertThat(c.answerFrom(b)).isEqualTo(1);

    SpanData frontClient = a.only(SpanKind.CLIENT);
    SpanData relayServer = b.only(SpanKind.SERVER);
    SpanData relayClient = b.only(SpanKind.CLIENT);
    SpanData backServer = c.only(SpanKind.SERVER);
    assertThat(List.of(relayServer, relayClient, backServer)).allSatisfy(sp -> assertThat(sp.getTraceId()).isEqualTo(frontClient.getTraceId()));
    assertThat(relayServer.getParentSpanId()).isEqualTo(frontClient.getSpanId());
    assertThat(relayClient.getParentSpanId()).isEqualTo(relayServer.getSpanId());
    assertThat(backServer.getParentSpanId()).isEqualTo(relayClient.getSpanId());
  }

  @Test
  void aChainWhoseFirstLinkWaitsKeepsItsLaterLinksByTheInterimAnswer() {
    // As the chain above, but nobody answers b's question: b's relay server span is a root at the
    // end of its wait, and c's server span (which asked later) must still become b's client span's child.
    Events hop1 = new Events(100, 300, 0xa1, 0xb1,
        new io.gospan.receiver.event.SocketPair(Events.addr("10.0.0.1", 41000), Events.addr("10.0.0.2", 50051)),
        new io.gospan.receiver.event.SocketPair(Events.addr("10.0.0.2", 50051), Events.addr("10.0.0.1", 41000)));
    Events hop2 = new Events(300, 200, 0xa2, 0xb2,
        new io.gospan.receiver.event.SocketPair(Events.addr("10.0.0.2", 42000), Events.addr("10.0.0.3", 50051)),
        new io.gospan.receiver.event.SocketPair(Events.addr("10.0.0.3", 50051), Events.addr("10.0.0.2", 42000)));
    Gospan b = new Gospan(time, Set.of("10.0.0.2"));
    Gospan c = new Gospan(time, Set.of("10.0.0.3"));
    b.feed(hop1.serverStart(1, t0), hop2.streamParent(1, t0 + MS, hop1, 1), hop2.clientStart(1, t0 + 2 * MS));
    time.advanceMillis(100);
    c.feed(hop2.serverStart(1, t0 + 3 * MS), hop2.serverTrailersOnly(1, t0 + 4 * MS, 0, null));
    b.feed(hop2.clientTrailersOnly(1, t0 + 5 * MS, 0, null), hop1.serverTrailersOnly(1, t0 + 6 * MS, 0, null));
    ClientFlow flow = (ClientFlow) c.asked.get(0)[0];
    long start = (Long) c.asked.get(0)[1];
    ClientSpanAnswer interim = b.assembler.clientSpan(flow, start, 0);
    assertThat(interim.state()).isEqualTo(ClientSpanAnswer.State.PENDING);
    long bDecides = t0 + 2_000 * MS + EXTRA_WAIT + TestClock.OFFSET; // b asked at t0: link_wait + extra
    assertThat(interim.finalByEpochNanos()).isEqualTo(bDecides);
    assertThat(c.assembler.remoteWaitUntil(flow, start, interim.finalByEpochNanos() + EXTRA_WAIT)).isTrue();
    time.advanceMillis(2_000 + EXTRA_WAIT / MS);
    b.assembler.expire();
    c.assembler.expire();
    assertThat(b.only(SpanKind.SERVER).getParentSpanContext().isValid()).as("b's question was never answered").isFalse();
    assertThat(c.out).as("c waits beyond its own link_wait + extra").isEmpty();
    assertThat(c.answerFrom(b)).isEqualTo(1);
    assertThat(c.only(SpanKind.SERVER).getParentSpanId()).isEqualTo(b.only(SpanKind.CLIENT).getSpanId());
    assertThat(c.only(SpanKind.SERVER).getTraceId()).isEqualTo(b.only(SpanKind.SERVER).getTraceId());
  }

  @Test
  void clientSpanIsFoundWhileInFlightAndForLinkWaitAfterItsEndCoveringTheServersStart() {
    Gospan client = new Gospan(time, Set.of("10.0.0.1"));
    ClientFlow flow = new ClientFlow(Events.addr("10.0.0.1", 40000), 1);
    long epoch = t0 + TestClock.OFFSET;
    assertThat(client.assembler.clientSpan(flow, epoch + MS, 0)).isEqualTo(ClientSpanAnswer.unknown(0));
    client.feed(front.clientStart(1, t0));
    // not this flow: unknown, and span assembly says how far it has read (the client start at t0)
    assertThat(client.assembler.clientSpan(new ClientFlow(Events.addr("10.0.0.1", 40009), 1), epoch + MS, 0))
        .isEqualTo(ClientSpanAnswer.unknown(epoch));
    ClientSpanAnswer inFlight = client.assembler.clientSpan(flow, epoch + MS, 0);
    assertThat(inFlight.state()).isEqualTo(ClientSpanAnswer.State.FOUND);
    client.feed(front.clientTrailersOnly(1, t0 + 10 * MS, 0, null));
    SpanData c = client.only(SpanKind.CLIENT);
    assertThat(inFlight.span().getTraceId()).isEqualTo(c.getTraceId());
    assertThat(inFlight.span().getSpanId()).isEqualTo(c.getSpanId());
    assertThat(client.assembler.clientSpan(flow, epoch + 5 * MS, 0).span()).isEqualTo(inFlight.span());
    // outside the client span: not this call (a reused port), unless within the tolerance
    assertThat(client.assembler.clientSpan(flow, epoch + 11 * MS, 0).state()).isEqualTo(ClientSpanAnswer.State.UNKNOWN);
    assertThat(client.assembler.clientSpan(flow, epoch - MS, 0).state()).isEqualTo(ClientSpanAnswer.State.UNKNOWN);
    assertThat(client.assembler.clientSpan(flow, epoch + 11 * MS, 2 * MS).state()).isEqualTo(ClientSpanAnswer.State.FOUND);
    assertThat(client.assembler.clientSpan(flow, epoch - MS, 2 * MS).state()).isEqualTo(ClientSpanAnswer.State.FOUND);
    // another port, another stream id
    assertThat(client.assembler.clientSpan(new ClientFlow(Events.addr("10.0.0.1", 40001), 1), epoch + MS, 0).state())
        .isEqualTo(ClientSpanAnswer.State.UNKNOWN);
    assertThat(client.assembler.clientSpan(new ClientFlow(Events.addr("10.0.0.1", 40000), 3), epoch + MS, 0).state())
        .isEqualTo(ClientSpanAnswer.State.UNKNOWN);
    // forgotten link_wait + the remote extra wait after its end
    time.advanceMillis(2_000 + EXTRA_WAIT / MS - 1);
    client.assembler.expire();
    assertThat(client.assembler.clientSpan(flow, epoch + MS, 0).state()).isEqualTo(ClientSpanAnswer.State.FOUND);
    time.advanceMillis(11);
    client.assembler.expire();
    assertThat(client.assembler.clientSpan(flow, epoch + MS, 0).state()).isEqualTo(ClientSpanAnswer.State.UNKNOWN);
  }

  @Test
  void aClientSpanWaitingForItsInProcessParentIsPendingThenFoundAsARoot() {
    // The relay (pid 300) serves a call, so its client spans wait for a StreamParent: a background call gets none.
    Events served = new Events(100, 300, 0xa1, 0xb1, 41000);
    Events background = new Events(300, 200, 0xa2, 0xb2, 42000);
    Gospan relay = new Gospan(time, Set.of("10.0.0.1"));
    relay.feed(served.serverStart(1, t0), served.serverTrailersOnly(1, t0 + MS, 0, null));
    relay.feed(background.clientStart(1, t0 + 2 * MS));
    ClientFlow flow = new ClientFlow(Events.addr("10.0.0.1", 42000), 1);
    assertThat(relay.assembler.clientSpan(flow, t0 + 3 * MS + TestClock.OFFSET, 0).state()).isEqualTo(ClientSpanAnswer.State.PENDING);
    time.advanceMillis(2_002);
    relay.assembler.expire();
    ClientSpanAnswer root = relay.assembler.clientSpan(flow, t0 + 3 * MS + TestClock.OFFSET, 0);
    assertThat(root.state()).isEqualTo(ClientSpanAnswer.State.FOUND);
    assertThat(root.span().isValid()).isTrue();
  }
}
