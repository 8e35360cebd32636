package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ExpiryTimerTest {
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final AtomicInteger runs = new AtomicInteger();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  /**
   * While events come slowly the timer wakes every 500 ms, not every 100 (1,024 events would take
   * longer than that); a burst of events brings the 100 ms period back at once, without waiting for
   * the slow period's next run.
   */
  @Test
  void thePeriodFollowsTheEventRate() throws Exception {
    ExpiryTimer timer = ExpiryTimer.start(scheduler, runs::incrementAndGet);
    for (int i = 0; i < 15; i++) { // ~40 events a second for 0.75 s
      timer.eventAccepted();
      timer.eventAccepted();
      Thread.sleep(50);
    }
    assertThat(timer.periodMillis()).isEqualTo(ExpiryTimer.EXPIRE_SLOW_PERIOD_MILLIS);
    assertThat(runs.get()).as("ran at 100 ms, then slower").isPositive();
    long burst = System.nanoTime();
    for (int i = 0; i <= ExpiryTimer.BURST_EVENTS; i++) {
      timer.eventAccepted();
    }
    while (timer.periodMillis() != ExpiryTimer.EXPIRE_PERIOD_MILLIS && System.nanoTime() - burst < 5_000_000_000L) {
      Thread.sleep(5);
    }
    assertThat(timer.periodMillis()).isEqualTo(ExpiryTimer.EXPIRE_PERIOD_MILLIS);
    // woken by the burst, not at the slow period's next run
    assertThat((System.nanoTime() - burst) / 1_000_000).isLessThan(ExpiryTimer.EXPIRE_SLOW_PERIOD_MILLIS);
    assertThat(timer.eventsSeen()).isEqualTo(30 + ExpiryTimer.BURST_EVENTS + 1);
  }

  /** Events handed over in runs count as many as one at a time, and a run that crosses a burst wakes the timer as they would. */
  @Test
  void eventsAcceptedInRunsCountAndWakeAsOneAtATime() throws Exception {
    ExpiryTimer timer = ExpiryTimer.start(scheduler, runs::incrementAndGet);
    for (int i = 0; i < 15; i++) { // ~40 events a second for 0.75 s, in runs of 2
      timer.eventsAccepted(2);
      Thread.sleep(50);
    }
    timer.eventsAccepted(0);
    assertThat(timer.eventsSeen()).isEqualTo(30);
    assertThat(timer.periodMillis()).isEqualTo(ExpiryTimer.EXPIRE_SLOW_PERIOD_MILLIS);
    long burst = System.nanoTime();
    timer.eventsAccepted((int) ExpiryTimer.BURST_EVENTS + 1);
    while (timer.periodMillis() != ExpiryTimer.EXPIRE_PERIOD_MILLIS && System.nanoTime() - burst < 5_000_000_000L) {
      Thread.sleep(5);
    }
    assertThat(timer.periodMillis()).isEqualTo(ExpiryTimer.EXPIRE_PERIOD_MILLIS);
    assertThat((System.nanoTime() - burst) / 1_000_000).isLessThan(ExpiryTimer.EXPIRE_SLOW_PERIOD_MILLIS);
    assertThat(timer.eventsSeen()).isEqualTo(30 + ExpiryTimer.BURST_EVENTS + 1);
  }

  /** Once no event came for the idle spell the timer runs on the idle period; the next event wakes it at once. */
  @Test
  void anEventAfterAnIdleSpellWakesTheTimer() throws Exception {
    ExpiryTimer timer = ExpiryTimer.start(scheduler, runs::incrementAndGet, Duration.ofMillis(300), Duration.ofSeconds(30));
    Thread.sleep(1000); // idle: the next run is 30 s away
    assertThat(timer.periodMillis()).isEqualTo(30_000);
    int before = runs.get();
    long woken = System.nanoTime();
    timer.eventAccepted();
    while (runs.get() == before && System.nanoTime() - woken < 5_000_000_000L) {
      Thread.sleep(5);
    }
    assertThat(runs.get()).isGreaterThan(before);
    assertThat((System.nanoTime() - woken) / 1_000_000).as("one 100 ms period, not the idle one").isLessThan(2_000);
  }

  @Test
  void anExpiryThatThrowsDoesNotStopTheTimer() throws Exception {
    ExpiryTimer.start(scheduler, () -> {
      runs.incrementAndGet();
      throw new IllegalStateException("test");
    });
    long t0 = System.nanoTime();
    while (runs.get() < 2 && System.nanoTime() - t0 < 5_000_000_000L) {
      Thread.sleep(5);
    }
    assertThat(runs.get()).isGreaterThanOrEqualTo(2);
  }

  @Test
  void thePeriodIsTheTimeOfEventsPerExpiryAtTheLastRate() {
    assertThat(ExpiryTimer.periodMillis(0, 100_000_000L)).isEqualTo(ExpiryTimer.EXPIRE_SLOW_PERIOD_MILLIS);
    assertThat(ExpiryTimer.periodMillis(200, 100_000_000L)).isEqualTo(ExpiryTimer.EXPIRE_SLOW_PERIOD_MILLIS); // 2,000/s: 512 ms
    assertThat(ExpiryTimer.periodMillis(400, 100_000_000L)).isEqualTo(256); // 4,000 events/s
    assertThat(ExpiryTimer.periodMillis(2_000, 100_000_000L)).isEqualTo(ExpiryTimer.EXPIRE_PERIOD_MILLIS); // 20,000/s: 51 ms
  }
}
