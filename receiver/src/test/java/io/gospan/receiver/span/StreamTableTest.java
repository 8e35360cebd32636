package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.Side;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Random;
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

  /** A stream of process {@code pid} on connection {@code conn}, stream id {@code id}, on {@code side}. */
  static TracedStream stream(int pid, long conn, int id, Side side, long deadline) {
    Events c = new Events(pid, pid, conn, conn, 40000);
    return PartsFixture.stream(side == Side.CLIENT ? c.clientStart(id, 1) : c.serverStart(id, 1), deadline);
  }

  @Test
  void keysDifferingInOnePartAreDifferentStreams() {
    StreamTable table = new StreamTable(100);
    TracedStream base = stream(7, 0xc000_1000L, 5, Side.CLIENT, 1);
    List<TracedStream> others = List.of(
        stream(8, 0xc000_1000L, 5, Side.CLIENT, 2), // pid
        stream(7, 0xc000_1008L, 5, Side.CLIENT, 3), // connection
        stream(7, 0xc000_1000L, 7, Side.CLIENT, 4), // stream id
        stream(7, 0xc000_1000L, 5, Side.SERVER, 5), // side
        stream(7, 0xc000_1000L, 0x7FFF_FFFF, Side.CLIENT, 6)); // the largest HTTP/2 stream id
    table.add(base);
    others.forEach(table::add);
    assertThat(table.size()).isEqualTo(6);
    assertThat(table.get(7, 0xc000_1000L, 5, Side.CLIENT)).isSameAs(base);
    for (TracedStream o : others) {
      assertThat(table.get(o.key)).isSameAs(o);
      assertThat(table.get(o.key.pid(), o.key.connection(), o.key.streamId(), o.key.side())).isSameAs(o);
    }
    assertThat(table.get(7, 0xc000_1000L, 9, Side.CLIENT)).isNull();
  }

  @Test
  void growsPastItsFirstSlotsAndStopsAtMaxInFlight() {
    int max = 5_000;
    StreamTable table = new StreamTable(max);
    List<TracedStream> added = new ArrayList<>();
    for (int i = 0; !table.full(); i++) {
      // one connection's consecutive odd stream ids, as a client makes them
      TracedStream s = stream(100, 0xc000_1000L, 2 * i + 1, Side.CLIENT, i);
      table.add(s);
      added.add(s);
    }
    assertThat(added).hasSize(max);
    assertThat(table.size()).isEqualTo(max);
    assertThat(table.capacity()).isGreaterThan(StreamTable.INITIAL_SLOTS).isGreaterThanOrEqualTo(2 * max);
    for (TracedStream s : added) {
      assertThat(table.get(s.key)).isSameAs(s);
    }
    assertThat(table.matching(x -> true)).containsExactlyElementsOf(added);
    table.remove(added.get(max / 2).key);
    assertThat(table.full()).isFalse();
    assertThat(table.removeTimedOut(0)).isSameAs(added.get(0));
  }

  @Test
  void removalKeepsTheOthersFindableAndInStartOrder() {
    StreamTable table = new StreamTable(100);
    List<TracedStream> added = new ArrayList<>();
    for (int i = 0; i < 100; i++) { // 100 of 256 slots: probe sequences collide
      TracedStream s = stream(100 + i % 3, 0xc000_1000L + 8 * (i % 5), 2 * i + 1, i % 2 == 0 ? Side.CLIENT : Side.SERVER, i);
      table.add(s);
      added.add(s);
    }
    assertThat(table.displaced()).as("entries moved off their home slot by collisions").isPositive();
    // the newest, the oldest, one in the middle, then every third
    for (int i : new int[] {99, 0, 50}) {
      table.remove(added.get(i).key);
    }
    List<TracedStream> left = new ArrayList<>(added);
    left.removeAll(List.of(added.get(99), added.get(0), added.get(50)));
    for (int i = 1; i < 99; i += 3) {
      table.remove(added.get(i).key);
      left.remove(added.get(i));
    }
    table.remove(added.get(1).key); // removed already: nothing
    assertThat(table.size()).isEqualTo(left.size());
    for (TracedStream s : added) {
      assertThat(table.get(s.key)).isSameAs(left.contains(s) ? s : null);
    }
    assertThat(table.matching(x -> true)).containsExactlyElementsOf(left);
    List<TracedStream> timedOut = new ArrayList<>();
    for (TracedStream s; (s = table.removeTimedOut(Long.MAX_VALUE)) != null; ) {
      timedOut.add(s);
    }
    assertThat(timedOut).containsExactlyElementsOf(left);
    assertThat(table.size()).isZero();
  }

  @Test
  void aStreamAddedUnderAKeyInFlightTakesItsPlace() {
    StreamTable table = new StreamTable(10);
    TracedStream a = stream(100, 1, 1, Side.CLIENT, 10);
    TracedStream b = stream(100, 1, 3, Side.CLIENT, 20);
    TracedStream c = stream(100, 1, 5, Side.CLIENT, 30);
    TracedStream b2 = stream(100, 1, 3, Side.CLIENT, 40);
    table.add(a);
    table.add(b);
    table.add(c);
    table.add(b2); // as LinkedHashMap.put does: the value replaced, the order kept
    assertThat(table.size()).isEqualTo(3);
    assertThat(table.get(b.key)).isSameAs(b2);
    assertThat(table.matching(x -> true)).containsExactly(a, b2, c);
  }

  @Test
  void behavesAsTheInsertionOrderedMapItReplaced() {
    Random random = new Random(37);
    StreamTable table = new StreamTable(300);
    LinkedHashMap<StreamKey, TracedStream> model = new LinkedHashMap<>();
    List<StreamKey> keys = new ArrayList<>();
    long deadline = 0;
    for (int op = 0; op < 50_000; op++) {
      int r = random.nextInt(100);
      if (r < 45 && model.size() < 300) {
        // few processes, connections and stream ids: keys repeat, collide and come back after removal
        TracedStream s = stream(1 + random.nextInt(3), 0xc000_0000L + 8 * random.nextInt(8), 1 + random.nextInt(200),
            random.nextBoolean() ? Side.CLIENT : Side.SERVER, deadline++);
        if (model.containsKey(s.key)) {
          continue; // the caller never adds a key in flight
        }
        table.add(s);
        model.put(s.key, s);
        keys.add(s.key);
      } else if (r < 85 && !keys.isEmpty()) {
        StreamKey k = keys.get(random.nextInt(keys.size()));
        table.remove(k);
        model.remove(k);
      } else if (r < 90) {
        long now = deadline - 250;
        TracedStream s = table.removeTimedOut(now);
        TracedStream expected = model.isEmpty() ? null : model.values().iterator().next();
        if (expected != null && expected.deadline > now) {
          expected = null;
        }
        assertThat(s).isSameAs(expected);
        if (expected != null) {
          model.remove(expected.key);
        }
      } else {
        StreamKey k = keys.isEmpty() ? null : keys.get(random.nextInt(keys.size()));
        if (k != null) {
          assertThat(table.get(k)).isSameAs(model.get(k));
        }
      }
      assertThat(table.size()).isEqualTo(model.size());
      assertThat(table.full()).isEqualTo(model.size() >= 300);
    }
    assertThat(table.matching(x -> true)).containsExactlyElementsOf(model.values());
    for (StreamKey k : keys) {
      assertThat(table.get(k)).isSameAs(model.get(k));
    }
  }
}
