package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.trace.IdGenerator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TraceDecisionsTest {
  static final long LINK_WAIT = 1_000;
  final Events conn = new Events(40000).path(Events.PATH);
  final List<SpanIdentity> emitted = new ArrayList<>();
  HeldSpans held = new HeldSpans(10);
  TraceDecisions decisions = new TraceDecisions(IdGenerator.random(), LINK_WAIT, held, (end, node) -> emitted.add(node));

  TracedStream client(int id) {
    return PartsFixture.stream(conn.clientStart(id, 100));
  }

  TracedStream server(int id) {
    return PartsFixture.stream(conn.serverStart(id, 110));
  }

  static EndedSpan end(TracedStream s) {
    return new EndedSpan(s, s.startNs + 10, Status.Code.OK, null, null);
  }

  @Test
  void anOpenNodeBecomesARootWhenItsWaitIsOver() {
    TracedStream c = client(1);
    decisions.open(c.node, 5_000);
    assertThat(decisions.openClient(c.key)).isSameAs(c.node);
    decisions.expire(5_000 + LINK_WAIT - 1);
    assertThat(c.node.undecided()).isTrue();
    decisions.expire(5_000 + LINK_WAIT);
    assertThat(c.node.traceId).isNotNull();
    assertThat(c.node.parentContext.isValid()).isFalse();
    assertThat(decisions.openClient(c.key)).isNull();
  }

  @Test
  void openNodesBecomeRootsInTheOrderTheyWereOpenedWhateverLeftTheirWaitBetween() {
    List<TracedStream> clients = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      TracedStream c = client(2 * i + 1);
      clients.add(c);
      decisions.open(c.node, 5_000 + i);
    }
    TracedStream parent = server(1);
    decisions.root(parent.node);
    decisions.link(clients.get(2).node, parent.node, true, 120); // the middle one leaves the wait
    decisions.link(clients.get(0).node, parent.node, true, 120); // the oldest
    decisions.link(clients.get(5).node, parent.node, true, 120); // the newest
    decisions.expire(5_000 + 3 + LINK_WAIT);
    assertThat(clients.get(1).node.traceId).isNotNull().isNotEqualTo(parent.node.traceId); // a root
    assertThat(clients.get(3).node.traceId).isNotNull().isNotEqualTo(parent.node.traceId);
    assertThat(clients.get(4).node.undecided()).isTrue();
    assertThat(decisions.openClient(clients.get(4).key)).isSameAs(clients.get(4).node);
    TracedStream late = client(21);
    decisions.open(late.node, 6_000); // opened after the list emptied to one node
    decisions.decideAll();
    assertThat(clients.get(4).node.undecided()).isFalse();
    assertThat(late.node.undecided()).isFalse();
    assertThat(decisions.openClient(late.key)).isNull();
    decisions.expire(Long.MAX_VALUE); // nothing left open
  }

  @Test
  void aLinkedSpanWaitsHeldForItsParentsTraceIdThenIsEmitted() {
    TracedStream c = client(1);
    TracedStream s = server(1);
    decisions.open(c.node, 5_000);
    decisions.openServer(s.node, s.flow, 5_000);
    assertThat(decisions.openServer(s.flow)).isSameAs(s.node);
    assertThat(decisions.link(s.node, c.node, false, 0)).isTrue();
    assertThat(decisions.openServer(s.flow)).isNull(); // linked: no longer open
    assertThat(decisions.ended(s.node, end(s))).isTrue();
    assertThat(held.servers()).isEqualTo(1);
    assertThat(emitted).isEmpty();

    decisions.root(c.node);
    assertThat(s.node.traceId).isEqualTo(c.node.traceId);
    assertThat(s.node.parentContext.getSpanId()).isEqualTo(c.node.spanId);
    assertThat(s.node.parentContext.isRemote()).isTrue(); // another process's span
    assertThat(emitted).containsExactly(s.node);
    assertThat(held.servers()).isZero();

    assertThat(decisions.ended(c.node, end(c))).isTrue(); // decided: emitted at once
    assertThat(emitted).containsExactly(s.node, c.node);
  }

  @Test
  void anInProcessChildCarriesALocalParentAndTakesADecidedParentsTraceIdAtOnce() {
    TracedStream parent = server(1);
    TracedStream child = client(3);
    decisions.root(parent.node);
    decisions.open(child.node, 5_000);
    assertThat(decisions.link(child.node, parent.node, true, 120)).isTrue();
    assertThat(child.node.traceId).isEqualTo(parent.node.traceId);
    assertThat(child.node.parentContext.isRemote()).isFalse();
    assertThat(child.node.linkNs).isEqualTo(120);
  }

  @Test
  void aChainIsDecidedWholeFromItsFirstNode() {
    TracedStream a = client(1);
    TracedStream b = server(1);
    TracedStream c = client(3);
    decisions.open(a.node, 5_000);
    decisions.open(b.node, 5_000);
    decisions.open(c.node, 5_000);
    decisions.link(b.node, a.node, false, 0);
    decisions.link(c.node, b.node, true, 0);
    decisions.ended(c.node, end(c));
    decisions.ended(b.node, end(b));
    decisions.expire(5_000 + LINK_WAIT); // a is a root, b and c follow, whatever their own waits
    assertThat(b.node.traceId).isEqualTo(a.node.traceId);
    assertThat(c.node.traceId).isEqualTo(a.node.traceId);
    assertThat(emitted).containsExactly(b.node, c.node);
  }

  @Test
  void refusesALinkThatClosesACycle() {
    TracedStream a = client(1);
    TracedStream b = server(1);
    decisions.open(a.node, 5_000);
    decisions.open(b.node, 5_000);
    assertThat(decisions.link(b.node, a.node, false, 0)).isTrue();
    assertThat(decisions.link(a.node, b.node, true, 0)).isFalse();
    assertThat(a.node.open()).isTrue();
    assertThat(a.node.parent).isNull();
  }

  @Test
  void detachAndReplaceParentCutALinkedNodeFromItsParent() {
    TracedStream a = client(1);
    TracedStream b = server(1);
    TracedStream c = server(3);
    decisions.open(a.node, 5_000);
    decisions.link(b.node, a.node, false, 0);
    decisions.link(c.node, a.node, false, 0);
    decisions.detach(b.node);
    assertThat(b.node.traceId).isNotNull();
    assertThat(b.node.parentContext.isValid()).isFalse();
    assertThat(a.node.children).doesNotContain(b.node);

    SpanContext app = SpanContext.createFromRemoteParent(
        "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", TraceFlags.getSampled(), TraceState.getDefault());
    decisions.replaceParent(c.node, app);
    assertThat(c.node.traceId).isEqualTo(app.getTraceId());
    assertThat(c.node.parentContext).isEqualTo(app);
    assertThat(a.node.undecided()).isTrue(); // its parent is not decided by it
  }

  @Test
  void anEndedSpanBeyondTheHeldBoundIsEmittedAtOnceAsARoot() {
    held = new HeldSpans(0);
    decisions = new TraceDecisions(IdGenerator.random(), LINK_WAIT, held, (end, node) -> emitted.add(node));
    TracedStream c = client(1);
    decisions.open(c.node, 5_000);
    assertThat(decisions.ended(c.node, end(c))).isFalse();
    assertThat(emitted).containsExactly(c.node);
    assertThat(c.node.parentContext.isValid()).isFalse();
  }

  @Test
  void aServerThatAskedAnotherGospanWaitsItsRemoteWaitAsExtended() {
    TracedStream s = server(1);
    decisions.openServer(s.node, s.flow, 5_000);
    decisions.waitRemote(s.node, 5_000 + 3 * LINK_WAIT);
    decisions.expire(5_000 + LINK_WAIT); // past link_wait: still waiting for the answer
    assertThat(s.node.open()).isTrue();
    assertThat(decisions.extendRemoteWait(s.node, 5_000 + 2 * LINK_WAIT)).isFalse(); // not an extension
    assertThat(decisions.extendRemoteWait(s.node, 5_000 + 4 * LINK_WAIT)).isTrue();
    decisions.expire(5_000 + 3 * LINK_WAIT);
    assertThat(s.node.open()).isTrue();
    decisions.expire(5_000 + 4 * LINK_WAIT);
    assertThat(s.node.traceId).isNotNull();
    assertThat(decisions.openServer(s.flow)).isNull();
  }

  @Test
  void decideAllMakesRootsOfEveryOpenAndRemoteNode() {
    TracedStream c = client(1);
    TracedStream s = server(1);
    TracedStream waiting = server(3);
    decisions.open(c.node, 5_000);
    decisions.openServer(s.node, s.flow, 5_000);
    decisions.waitRemote(s.node, 9_000);
    decisions.open(waiting.node, 5_000);
    decisions.link(waiting.node, c.node, false, 0);
    decisions.ended(waiting.node, end(waiting));
    decisions.decideAll();
    assertThat(c.node.traceId).isNotNull();
    assertThat(s.node.traceId).isNotNull();
    assertThat(waiting.node.traceId).isEqualTo(c.node.traceId);
    assertThat(emitted).containsExactly(waiting.node);
    assertThat(held.nodes()).isEmpty();
  }
}
