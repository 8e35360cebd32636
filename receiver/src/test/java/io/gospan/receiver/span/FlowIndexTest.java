package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.TraceId;
import org.junit.jupiter.api.Test;

class FlowIndexTest {
  static final long LINK_WAIT = 1_000;
  final Events conn = new Events(40000).path(Events.PATH);

  /** The flow the server end of {@code conn}'s stream {@code id} sees: the same as the client's. */
  FlowKey serverSees(int id) {
    return PartsFixture.stream(conn.serverStart(id, 0)).flow;
  }

  @Test
  void aServerFindsTheInFlightClientThatCoversItsStart() {
    FlowIndex index = new FlowIndex(LINK_WAIT, 10);
    TracedStream client = PartsFixture.stream(conn.clientStart(1, 100));
    index.started(client, client.startNs);
    assertThat(serverSees(1)).isEqualTo(client.flow);
    assertThat(index.covering(serverSees(1), 150).node()).isSameAs(client.node);
    assertThat(index.covering(serverSees(1), 99)).isNull(); // before the client started: another call
    assertThat(index.covering(serverSees(3), 150)).isNull(); // another stream
    assertThat(index.inFlight(client.flow).stream()).isSameAs(client);
  }

  @Test
  void anEndedClientIsKeptUntilItsEndThenByIdsOnceDecided() {
    FlowIndex index = new FlowIndex(LINK_WAIT, 10);
    TracedStream client = PartsFixture.stream(conn.clientStart(1, 100));
    index.started(client, client.startNs);
    client.node.traceId(TraceId.fromLongs(7, 9), null);
    index.ended(client, 200, 5_000);
    assertThat(index.inFlight(client.flow)).isNull();
    FlowIndex.ClientRecord found = index.covering(serverSees(1), 200);
    assertThat(found.node()).isNull(); // decided: its ids only
    assertThat(found.linkTarget().traceId).isEqualTo(client.node.traceId);
    assertThat(found.linkTarget().spanId).isEqualTo(client.node.spanId);
    assertThat(index.covering(serverSees(1), 201)).isNull(); // after its end
    assertThat(index.covering(serverSees(1), 201, 1)).isNotNull(); // within another gospan's tolerance

    index.expire(5_000 + LINK_WAIT - 1);
    assertThat(index.covering(serverSees(1), 150)).isNotNull();
    index.expire(5_000 + LINK_WAIT);
    assertThat(index.covering(serverSees(1), 150)).isNull();
  }

  @Test
  void anUndecidedEndedClientIsKeptAsItsNodeAndLongerWhenOtherGospansAsk() {
    FlowIndex index = new FlowIndex(LINK_WAIT, 10);
    index.remoteWait(3 * LINK_WAIT);
    TracedStream client = PartsFixture.stream(conn.clientStart(1, 100));
    index.started(client, client.startNs);
    index.ended(client, Long.MAX_VALUE, 5_000); // end unknown: covers anything later
    assertThat(index.covering(serverSees(1), 1_000_000).node()).isSameAs(client.node);
    index.expire(5_000 + LINK_WAIT);
    assertThat(index.covering(serverSees(1), 150)).isNotNull(); // kept the remote wait, not link_wait
    index.expire(5_000 + 3 * LINK_WAIT); // still undecided: kept another remote wait (its chain waits)
    assertThat(index.covering(serverSees(1), 150).stream()).isSameAs(client);
    client.node.traceId(TraceId.fromLongs(7, 9), null); // decided meanwhile: forgotten at the end of that wait
    index.expire(5_000 + 6 * LINK_WAIT - 1);
    assertThat(index.covering(serverSees(1), 150)).isNotNull();
    index.expire(5_000 + 6 * LINK_WAIT);
    assertThat(index.covering(serverSees(1), 150)).isNull();
  }

  @Test
  void keepsNothingEndedWhenLinkingIsOffOrUnbounded() {
    for (FlowIndex index : new FlowIndex[] {new FlowIndex(0, 10), new FlowIndex(LINK_WAIT, 0)}) {
      TracedStream client = PartsFixture.stream(conn.clientStart(1, 100));
      index.started(client, client.startNs);
      index.ended(client, 200, 5_000);
      assertThat(index.inFlight(client.flow)).isNull();
      assertThat(index.covering(serverSees(1), 150)).isNull();
    }
  }

  @Test
  void forgetsTheOldestEndedClientBeyondItsBound() {
    FlowIndex index = new FlowIndex(LINK_WAIT, 1);
    TracedStream a = PartsFixture.stream(conn.clientStart(1, 100));
    TracedStream b = PartsFixture.stream(conn.clientStart(3, 100));
    index.started(a, 100);
    index.started(b, 100);
    index.ended(a, 200, 5_000);
    index.ended(b, 200, 5_000);
    assertThat(index.covering(serverSees(1), 150)).isNull();
    assertThat(index.covering(serverSees(3), 150)).isNotNull();
    index.clearEnded();
    assertThat(index.covering(serverSees(3), 150)).isNull();
  }
}
