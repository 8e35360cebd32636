package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MonotonicClockTest {

  /** Each read advances time; the realtime read sits between two monotonic reads. */
  static final class SteppingSource implements MonotonicClock.Source {
    long mono = 5_000_000_000L;
    long offset = 1_700_000_000_000_000_000L;

    @Override
    public long monotonicNanos() {
      mono += 40;
      return mono;
    }

    @Override
    public long epochNanos() {
      mono += 40;
      return mono + offset;
    }
  }

  @Test
  void offsetIsMeasuredWithinTheBracket() {
    SteppingSource src = new SteppingSource();
    MonotonicClock c = MonotonicClock.of(src);
    assertThat(c.offsetNanos()).isEqualTo(src.offset);
    assertThat(c.uncertaintyNanos()).isEqualTo(40);
    assertThat(c.toEpochNanos(123)).isEqualTo(123 + src.offset);
  }

  @Test
  void recalibrationFollowsWallClockStepsButNotJitter() {
    SteppingSource src = new SteppingSource();
    MonotonicClock c = MonotonicClock.of(src);
    long before = c.offsetNanos();
    src.offset += 50_000; // within the adoption threshold: ignored, no jitter
    assertThat(c.recalibrate()).isFalse();
    assertThat(c.offsetNanos()).isEqualTo(before);
    src.offset += 2_000_000_000L; // the wall clock is stepped 2 s
    assertThat(c.recalibrate()).isTrue();
    assertThat(c.offsetNanos()).isEqualTo(src.offset);
  }

  @Test
  void systemClockAgreesWithTheJdkClock() {
    MonotonicClock c = MonotonicClock.system();
    long epochNow = System.currentTimeMillis() * 1_000_000L;
    long converted = c.toEpochNanos(System.nanoTime());
    assertThat(Math.abs(converted - epochNow)).isLessThan(50_000_000L);
    assertThat(c.uncertaintyNanos()).isLessThan(1_000_000L);
  }
}
