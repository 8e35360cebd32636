package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.StreamParent;
import io.opentelemetry.sdk.trace.IdGenerator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ParentLinksTest {
  static final long LINK_WAIT = 1_000;
  /** A relay: serves (server side of {@code front}) and calls (client side of {@code back}) in one process. */
  final Events front = new Events(Events.CLIENT_PID, Events.SERVER_PID, 0xc000_1000L, 0xc000_2000L, 40000).path(Events.PATH);
  final Events back = new Events(Events.SERVER_PID, 300, 0xc000_3000L, 0xc000_4000L, 40001).path(Events.PATH);
  final PartsFixture.Counters counters = new PartsFixture.Counters();
  final List<SpanIdentity> emitted = new ArrayList<>();
  final StreamTable streams = new StreamTable(100);
  final EndedServers endedServers = new EndedServers(LINK_WAIT, 10);
  final TraceDecisions decisions =
      new TraceDecisions(IdGenerator.random(), LINK_WAIT, new HeldSpans(10), (end, node) -> emitted.add(node));

  ParentLinks links(int maxPending) {
    return new ParentLinks(streams, endedServers, decisions, IdGenerator.random(), counters.counters, LINK_WAIT, maxPending);
  }

  long count(ParentLinks.Result r) {
    return counters.count(AssemblyMetrics.LINKS_IN_PROCESS, AssemblyMetrics.RESULT, r.name().toLowerCase(java.util.Locale.ROOT));
  }

  /** A started stream in the table. */
  TracedStream started(TracedStream s) {
    streams.add(s);
    return s;
  }

  StreamParent parentOf(int clientStream, long createdNs, int serverStream) {
    return back.streamParent(clientStream, createdNs, front, serverStream);
  }

  @Test
  void linksAnOpenClientToItsServerInFlight() {
    ParentLinks links = links(10);
    TracedStream server = started(PartsFixture.stream(front.serverStart(1, 100)));
    decisions.root(server.node);
    TracedStream client = started(PartsFixture.stream(back.clientStart(1, 150)));
    decisions.open(client.node, 5_000);
    links.accept(parentOf(1, 140, 1), 5_000);
    assertThat(client.node.traceId).isEqualTo(server.node.traceId);
    assertThat(client.node.parentContext.getSpanId()).isEqualTo(server.node.spanId);
    assertThat(client.node.parentContext.isRemote()).isFalse();
    assertThat(count(ParentLinks.Result.LINKED)).isEqualTo(1);
    assertThat(links.isServing(Events.SERVER_PID)).isTrue();
  }

  @Test
  void aServerThatStartedAfterTheClientWasCreatedIsStale() {
    ParentLinks links = links(10);
    started(PartsFixture.stream(front.serverStart(1, 200)));
    TracedStream client = started(PartsFixture.stream(back.clientStart(1, 150)));
    decisions.open(client.node, 5_000);
    links.accept(parentOf(1, 140, 1), 5_000);
    assertThat(client.node.traceId).isNotNull();
    assertThat(client.node.parentContext.isValid()).isFalse(); // a root
    assertThat(count(ParentLinks.Result.STALE)).isEqualTo(1);
  }

  @Test
  void linksToAnEndedServerThatCoversTheCreation() {
    ParentLinks links = links(10);
    TracedStream server = PartsFixture.stream(front.serverStart(1, 100));
    decisions.root(server.node);
    endedServers.ended(server, 300, 5_000);
    TracedStream client = PartsFixture.stream(back.clientStart(1, 150));
    decisions.open(client.node, 5_000);
    links.link(client.node, parentOf(1, 140, 1), 5_000);
    assertThat(client.node.traceId).isEqualTo(server.node.traceId);
    assertThat(count(ParentLinks.Result.LINKED)).isEqualTo(1);
  }

  @Test
  void aParentBeforeItsClientsStartWaitsForIt() {
    ParentLinks links = links(10);
    StreamParent p = parentOf(1, 140, 1);
    links.accept(p, 5_000);
    StreamKey clientKey = PartsFixture.stream(back.clientStart(1, 150)).key;
    assertThat(links.takePending(clientKey)).isSameAs(p);
    assertThat(links.takePending(clientKey)).isNull();

    links.accept(p, 5_000);
    links.expirePending(5_000 + LINK_WAIT - 1);
    assertThat(count(ParentLinks.Result.NO_CLIENT)).isZero();
    links.expirePending(5_000 + LINK_WAIT);
    assertThat(count(ParentLinks.Result.NO_CLIENT)).isEqualTo(1);
    assertThat(links.takePending(clientKey)).isNull();
  }

  @Test
  void aServerNotStartedYetIsAStubItsStreamAdopts() {
    ParentLinks links = links(10);
    TracedStream client = PartsFixture.stream(back.clientStart(1, 150));
    decisions.open(client.node, 5_000);
    links.link(client.node, parentOf(1, 140, 1), 5_000);
    SpanIdentity stub = client.node.parent;
    assertThat(stub.stub).isTrue();
    StreamKey serverKey = PartsFixture.stream(front.serverStart(1, 100)).key;
    SpanIdentity adopted = links.adoptStub(serverKey, 100);
    assertThat(adopted).isSameAs(stub);
    assertThat(adopted.stub).isFalse();
    assertThat(adopted.startNs).isEqualTo(100);
    links.stubAdopted(adopted);
    assertThat(count(ParentLinks.Result.LINKED)).isEqualTo(1);
    decisions.root(adopted);
    assertThat(client.node.traceId).isEqualTo(adopted.traceId);
    assertThat(links.adoptStub(serverKey, 100)).isNull();
  }

  @Test
  void aStubAdoptedByAStreamThatStartedAfterTheClientWasCreatedDropsIt() {
    ParentLinks links = links(10);
    TracedStream client = PartsFixture.stream(back.clientStart(1, 150));
    decisions.open(client.node, 5_000);
    links.link(client.node, parentOf(1, 140, 1), 5_000);
    SpanIdentity adopted = links.adoptStub(PartsFixture.stream(front.serverStart(1, 200)).key, 200);
    links.stubAdopted(adopted);
    assertThat(count(ParentLinks.Result.STALE)).isEqualTo(1);
    assertThat(client.node.traceId).isNotNull();
    assertThat(client.node.parentContext.isValid()).isFalse();
  }

  @Test
  void aStubWhoseServerNeverStartsLeavesItsChildrenRoots() {
    ParentLinks links = links(10);
    TracedStream client = PartsFixture.stream(back.clientStart(1, 150));
    decisions.open(client.node, 5_000);
    links.link(client.node, parentOf(1, 140, 1), 5_000);
    links.expireStubs(5_000 + LINK_WAIT - 1);
    assertThat(client.node.undecided()).isTrue();
    links.expireStubs(5_000 + LINK_WAIT);
    assertThat(client.node.traceId).isNotNull();
    assertThat(count(ParentLinks.Result.NOT_FOUND)).isEqualTo(1);
  }

  @Test
  void beyondItsBoundAParentIsDroppedAndCounted() {
    ParentLinks links = links(1);
    links.accept(parentOf(1, 140, 1), 5_000);
    links.accept(parentOf(3, 140, 1), 5_000);
    assertThat(count(ParentLinks.Result.OVERFLOW)).isEqualTo(1);
    assertThat(counters.count(AssemblyMetrics.LINKS_OVERFLOW, null, null)).isEqualTo(1);
    links.flushPending();
    assertThat(count(ParentLinks.Result.NO_CLIENT)).isEqualTo(1);
  }

  @Test
  void remembersServingProcessesLeastRecentlySeenForgottenFirst() {
    ParentLinks links = links(2);
    links.serving(1);
    links.serving(2);
    links.serving(1);
    links.serving(3); // forgets 2
    assertThat(links.isServing(1)).isTrue();
    assertThat(links.isServing(2)).isFalse();
    assertThat(links.isServing(3)).isTrue();
    links.processExited(3);
    assertThat(links.isServing(3)).isFalse();
  }

  @Test
  void aProcessSeenServingAgainAndAgainStaysTheMostRecentAndComesBackAfterItsExit() {
    ParentLinks links = links(2);
    links.serving(1);
    links.serving(2);
    links.serving(2); // the most recent already
    links.serving(2);
    links.serving(3); // forgets 1, not 2
    assertThat(links.isServing(1)).isFalse();
    assertThat(links.isServing(2)).isTrue();
    links.serving(3);
    links.processExited(3);
    assertThat(links.isServing(3)).isFalse();
    links.serving(3); // seen again after its exit: remembered again
    assertThat(links.isServing(3)).isTrue();
    links.serving(4); // forgets 2
    assertThat(links.isServing(2)).isFalse();
    assertThat(links.isServing(3)).isTrue();
    assertThat(links.isServing(4)).isTrue();
  }
}
