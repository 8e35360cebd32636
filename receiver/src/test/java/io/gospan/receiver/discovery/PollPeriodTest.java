package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The ring buffer reader's period follows the record rate: short under load, long at low rates. */
class PollPeriodTest {

  @Test
  void atHighRatesTheReaderPollsEvery20Ms() {
    // 40,000 records/s (20,000 spans/s): 512 records arrive in 12.8 ms
    assertThat(Sidecar.pollMillis(800, 20_000_000L)).isEqualTo(Sidecar.POLL_MILLIS);
    // woken early by the BPF wakeup threshold: many records in little time
    assertThat(Sidecar.pollMillis(20_000, 5_000_000L)).isEqualTo(Sidecar.POLL_MILLIS);
  }

  @Test
  void inBetweenThePeriodIsTheTimeRecordsPerPollTakeToArrive() {
    // 10,000 records/s: 512 in 51 ms
    assertThat(Sidecar.pollMillis(200, 20_000_000L)).isEqualTo(51);
  }

  @Test
  void atLowRatesTheReaderWaitsAtMost100Ms() {
    // 2,000 records/s (1,000 spans/s)
    assertThat(Sidecar.pollMillis(40, 20_000_000L)).isEqualTo(Sidecar.SLOW_POLL_MILLIS);
    assertThat(Sidecar.pollMillis(1, 100_000_000L)).isEqualTo(Sidecar.SLOW_POLL_MILLIS);
    assertThat(Sidecar.pollMillis(0, 100_000_000L)).isEqualTo(Sidecar.SLOW_POLL_MILLIS);
  }
}
