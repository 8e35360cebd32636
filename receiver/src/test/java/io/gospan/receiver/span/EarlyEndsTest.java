package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.HeaderEvent;
import org.junit.jupiter.api.Test;

class EarlyEndsTest {
  final Events conn = new Events(40000).path(Events.PATH);

  @Test
  void keepsAnEndUntilItsStartTakesIt() {
    EarlyEnds ends = new EarlyEnds(10, 100);
    HeaderEvent end = conn.serverTrailers(1, 50, 0, null);
    StreamKey key = StreamKey.of(end);
    assertThat(ends.hold(key, end, 1000)).isFalse();
    assertThat(ends.take(key)).isSameAs(end);
    assertThat(ends.take(key)).isNull();
  }

  @Test
  void aSecondEndOfOneStreamReplacesTheFirstAndIsReportedDropped() {
    EarlyEnds ends = new EarlyEnds(10, 100);
    HeaderEvent first = conn.serverTrailers(1, 50, 0, null);
    HeaderEvent second = conn.serverTrailers(1, 60, 0, null);
    StreamKey key = StreamKey.of(first);
    ends.hold(key, first, 1000);
    assertThat(ends.hold(key, second, 1010)).isTrue();
    assertThat(ends.take(key)).isSameAs(second);
  }

  @Test
  void dropsBeyondItsBoundAndAfterTheWait() {
    EarlyEnds ends = new EarlyEnds(2, 100);
    HeaderEvent a = conn.serverTrailers(1, 50, 0, null);
    HeaderEvent b = conn.serverTrailers(3, 50, 0, null);
    HeaderEvent c = conn.serverTrailers(5, 50, 0, null);
    assertThat(ends.hold(StreamKey.of(a), a, 1000)).isFalse();
    assertThat(ends.hold(StreamKey.of(b), b, 1050)).isFalse();
    assertThat(ends.hold(StreamKey.of(c), c, 1060)).isTrue(); // bound reached: c is dropped
    assertThat(ends.take(StreamKey.of(c))).isNull();
    assertThat(ends.expire(1099)).isZero();
    assertThat(ends.expire(1100)).isEqualTo(1); // a's wait is over
    assertThat(ends.take(StreamKey.of(a))).isNull();
    assertThat(ends.clear()).isEqualTo(1);
    assertThat(ends.take(StreamKey.of(b))).isNull();
  }

  @Test
  void aBoundOfZeroStillKeepsOne() {
    EarlyEnds ends = new EarlyEnds(0, 100);
    HeaderEvent a = conn.serverTrailers(1, 50, 0, null);
    assertThat(ends.hold(StreamKey.of(a), a, 1000)).isFalse();
    assertThat(ends.take(StreamKey.of(a))).isSameAs(a);
  }
}
