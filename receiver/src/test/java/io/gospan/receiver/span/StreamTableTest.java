package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StreamTableTest {
  final Events conn = new Events(40000).path(Events.PATH);

  @Test
  void findsStreamsByKeyAndStopsAtItsBound() {
    StreamTable table = new StreamTable(2);
    TracedStream a = PartsFixture.stream(conn.clientStart(1, 10));
    TracedStream b = PartsFixture.stream(conn.serverStart(1, 11));
    table.add(a);
    assertThat(table.full()).isFalse();
    table.add(b);
    assertThat(table.full()).isTrue();
    assertThat(table.size()).isEqualTo(2);
    assertThat(table.get(a.key)).isSameAs(a);
    assertThat(table.get(b.key)).isSameAs(b); // same stream id and connection value, other side and process
    table.remove(a.key);
    assertThat(table.get(a.key)).isNull();
    assertThat(table.full()).isFalse();
  }

  @Test
  void timesOutOldestFirstAndOnlyPastTheirDeadline() {
    StreamTable table = new StreamTable(10);
    TracedStream first = PartsFixture.stream(conn.clientStart(1, 10), 100);
    TracedStream second = PartsFixture.stream(conn.clientStart(3, 20), 200);
    table.add(first);
    table.add(second);
    assertThat(table.removeTimedOut(99)).isNull();
    assertThat(table.removeTimedOut(150)).isSameAs(first);
    assertThat(table.removeTimedOut(150)).isNull();
    assertThat(table.removeTimedOut(200)).isSameAs(second);
    assertThat(table.size()).isZero();
    assertThat(table.removeTimedOut(Long.MAX_VALUE)).isNull();
  }

  @Test
  void listsMatchingStreamsWithoutRemovingThem() {
    StreamTable table = new StreamTable(10);
    TracedStream c = PartsFixture.stream(conn.clientStart(1, 10));
    TracedStream s = PartsFixture.stream(conn.serverStart(1, 11));
    table.add(c);
    table.add(s);
    assertThat(table.matching(x -> x.pid == Events.SERVER_PID)).containsExactly(s);
    assertThat(table.matching(x -> true)).containsExactly(c, s);
    assertThat(table.size()).isEqualTo(2);
  }
}
