package io.gospan.receiver.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LogLimiterTest {
  @Test
  void firstLineAlwaysThenOnePerIntervalWithTheCountLeftOut() {
    LogLimiter l = LogLimiter.everyNanos(1_000);
    assertThat(l.admit(Long.MIN_VALUE + 5)).isZero(); // any nanoTime, even one far below zero
    assertThat(l.admit(Long.MIN_VALUE + 6)).isEqualTo(-1);
    assertThat(l.admit(Long.MIN_VALUE + 1_004)).isEqualTo(-1);
    assertThat(l.admit(Long.MIN_VALUE + 1_005)).isEqualTo(2);
    assertThat(l.admit(Long.MIN_VALUE + 5_000)).isZero();
  }

  @Test
  void nanoTimeWrappingPastMaxValueStillCountsAsLater() {
    LogLimiter l = LogLimiter.everyNanos(10);
    assertThat(l.admit(Long.MAX_VALUE - 5)).isZero();
    assertThat(l.admit(Long.MAX_VALUE)).isEqualTo(-1);
    assertThat(l.admit(Long.MAX_VALUE + 5)).isEqualTo(1); // wrapped: 10 ns later
  }

  @Test
  void zeroIntervalAdmitsEveryLine() {
    LogLimiter l = LogLimiter.everyNanos(0);
    assertThat(l.admit(7)).isZero();
    assertThat(l.admit(7)).isZero();
  }

  @Test
  void negativeIntervalIsRefused() {
    assertThatThrownBy(() -> LogLimiter.everyNanos(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("negative interval: -1 ns");
  }
}
