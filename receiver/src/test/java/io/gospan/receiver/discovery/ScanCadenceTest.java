package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ScanCadenceTest {
  static final long MS = 1_000_000L;

  @Test
  void whileExecNoticesArriveAScanListsProcOnlyEveryListingInterval() {
    ScanCadence c = new ScanCadence();
    long t = 1_000 * MS;
    assertThat(c.listsAt(t, false, false)).as("the first scan lists").isTrue();
    assertThat(c.listsAt(t + 500 * MS, false, false)).isFalse();
    assertThat(c.listsAt(t + 500 * MS, true, false)).as("a forced scan").isTrue();
    assertThat(c.listsAt(t + 1_000 * MS, false, true)).as("a notice was lost").isTrue();
    assertThat(c.listsAt(t + 1_000 * MS + ScanCadence.LISTING_INTERVAL_NANOS - 1, false, false)).isFalse();
    assertThat(c.listsAt(t + 1_000 * MS + ScanCadence.LISTING_INTERVAL_NANOS, false, false)).isTrue();
  }

  @Test
  void theNextScanComesAtTheIntervalOnlyWhileListingIsNeededOrAPortWaitIsEager() {
    ScanCadence c = new ScanCadence();
    c.interval(500 * MS);
    assertThat(c.nextDelayNanos(true, false)).isEqualTo(500 * MS);
    assertThat(c.nextDelayNanos(false, true)).isEqualTo(500 * MS);
    assertThat(c.nextDelayNanos(false, false)).isEqualTo(ScanCadence.QUIET_SCAN_INTERVAL_NANOS);
    c.interval(5_000 * MS);
    assertThat(c.nextDelayNanos(false, false)).as("a longer interval stays").isEqualTo(5_000 * MS);
  }
}
