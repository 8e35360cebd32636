package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

class HeldSpansTest {
  final Events conn = new Events(40000).path(Events.PATH);

  static EndedSpan end(TracedStream s) {
    return new EndedSpan(s, s.startNs + 10, Status.Code.OK, null, null);
  }

  @Test
  void countsServerAndClientSpansHeldAndReleased() {
    HeldSpans held = new HeldSpans(10);
    TracedStream client = PartsFixture.stream(conn.clientStart(1, 10));
    TracedStream server = PartsFixture.stream(conn.serverStart(1, 11));
    EndedSpan clientEnd = end(client);
    assertThat(held.hold(client.node, clientEnd)).isTrue();
    assertThat(held.hold(server.node, end(server))).isTrue();
    assertThat(held.servers()).isEqualTo(1);
    assertThat(held.clients()).isEqualTo(1);
    assertThat(held.nodes()).containsExactly(client.node, server.node);

    assertThat(held.release(client.node)).isSameAs(clientEnd);
    assertThat(client.node.heldEnd).isNull();
    assertThat(held.contains(client.node)).isFalse();
    assertThat(held.release(client.node)).isNull();
    held.release(server.node);
    assertThat(held.servers()).isZero();
    assertThat(held.clients()).isZero();
  }

  @Test
  void beyondItsBoundAttachesTheEndWithoutHoldingIt() {
    HeldSpans held = new HeldSpans(1);
    TracedStream a = PartsFixture.stream(conn.serverStart(1, 10));
    TracedStream b = PartsFixture.stream(conn.serverStart(3, 11));
    assertThat(held.hold(a.node, end(a))).isTrue();
    EndedSpan bEnd = end(b);
    assertThat(held.hold(b.node, bEnd)).isFalse();
    assertThat(held.contains(b.node)).isFalse();
    assertThat(held.servers()).isEqualTo(1);
    assertThat(held.release(b.node)).isSameAs(bEnd); // the caller decides it now, which releases it
    assertThat(held.servers()).isEqualTo(1);
  }
}
