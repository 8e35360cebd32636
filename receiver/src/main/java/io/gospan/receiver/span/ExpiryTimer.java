package io.gospan.receiver.span;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs span assembly's expiry ({@link SpanAssembler#expire}: stream timeouts, link waits, ended
 * spans forgotten) on a period that follows the event rate: every {@value #EXPIRE_PERIOD_MILLIS} ms
 * at high rates, up to every {@value #EXPIRE_SLOW_PERIOD_MILLIS} ms while events come slowly, every
 * second once none came for 10 s; the next event (or a burst after a slow spell) brings the
 * {@value #EXPIRE_PERIOD_MILLIS} ms period back at once.
 *
 * <pre>{@code
 * ExpiryTimer expiry = ExpiryTimer.start(scheduler, assembler::expire); // a single-thread scheduler
 * expiry.eventAccepted();                                               // after each event, on the reading thread
 * }</pre>
 *
 * <p>Threads: {@link #eventsSeen} and {@link #eventAccepted} on the one thread that feeds events;
 * everything else on the scheduler's single thread, which must run nothing that takes long.
 */
public final class ExpiryTimer {
  private static final Logger log = LoggerFactory.getLogger(ExpiryTimer.class);
  /** The expiry period at high event rates, and its shortest (ms). */
  public static final long EXPIRE_PERIOD_MILLIS = 100;
  /**
   * The longest expiry period while events come (ms). Between the two, the period is the time
   * {@link #EVENTS_PER_EXPIRY} events took to arrive before the last run: at 1,000 spans/s (~2,000
   * events/s) the timer wakes twice a second instead of 10 times, at 10,000 events/s and above
   * every 100 ms. A wake-up costs ~60 µs of CPU on a VM before any work (docs/benchmarks.md "What
   * wakes the idle sidecar"), so at low rates the wake-ups were most of the timer's cost. What is
   * due (a span that waited {@code streams.link_wait}, a stream's timeout, an ended span forgotten)
   * is done up to this much later; the ended spans remembered grow by at most ~{@link
   * #EVENTS_PER_EXPIRY} (more events wake the timer early: {@link #BURST_EVENTS}).
   */
  public static final long EXPIRE_SLOW_PERIOD_MILLIS = 500;
  /** Events an expiry period is sized for (see {@link #EXPIRE_SLOW_PERIOD_MILLIS}). */
  public static final long EVENTS_PER_EXPIRY = 1024;
  /**
   * Events after which the next one wakes a timer on a period longer than {@link
   * #EXPIRE_PERIOD_MILLIS} (a burst after a slow or idle spell): it runs at 100 ms again at once.
   */
  public static final long BURST_EVENTS = 4 * EVENTS_PER_EXPIRY;
  /**
   * The expiry period once no event came for {@link #EXPIRE_IDLE_AFTER}: an idle sidecar's timer
   * wakes once a second instead of 10 times (each wake-up costs ~60 µs of CPU on a VM,
   * docs/benchmarks.md "What wakes the idle sidecar"). The next event brings the 100 ms period back
   * at once; what is due in the idle spell (a stream's timeout, a client span kept for other
   * gospans) is done up to this much later.
   */
  public static final Duration EXPIRE_IDLE_PERIOD = Duration.ofSeconds(1);
  /** How long without an event before expiry runs every {@link #EXPIRE_IDLE_PERIOD}. */
  public static final Duration EXPIRE_IDLE_AFTER = Duration.ofSeconds(10);

  private static final VarHandle EVENTS_SEEN;

  static {
    try {
      EVENTS_SEEN = MethodHandles.lookup().findVarHandle(ExpiryTimer.class, "eventsSeen", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ScheduledExecutorService scheduler;
  private final Runnable expire;
  private final long idleAfterNanos;
  private final long idlePeriodMillis;
  /** Events accepted (opaque access: only its change matters, to the timer). */
  @SuppressWarnings("unused") // through EVENTS_SEEN
  private long eventsSeen;
  /**
   * An event accepted when {@code eventsSeen} is at least this wakes the timer to its 100 ms period:
   * the count at the timer's last run when idle (the next event), that + {@link #BURST_EVENTS} on a
   * longer period; {@code Long.MAX_VALUE} at 100 ms.
   */
  private volatile long wakeAt = Long.MAX_VALUE;
  // the timer's own state, on the scheduler thread only
  private ScheduledFuture<?> next;
  private long eventsAtLastRun;
  private long lastRunAt;
  private long periodMillis = EXPIRE_PERIOD_MILLIS;
  private long quietSince;

  private ExpiryTimer(ScheduledExecutorService scheduler, Runnable expire, Duration idleAfter, Duration idlePeriod) {
    this.scheduler = scheduler;
    this.expire = expire;
    this.idleAfterNanos = idleAfter.toNanos();
    this.idlePeriodMillis = idlePeriod.toMillis();
    this.quietSince = System.nanoTime();
    this.lastRunAt = quietSince;
  }

  /**
   * Starts running {@code expire} on {@code scheduler} (single-threaded; the timer's state lives on
   * its thread) every {@value #EXPIRE_PERIOD_MILLIS} ms, then as the event rate asks. It stops when
   * the scheduler is shut down. A {@code RuntimeException} from {@code expire} is logged and the
   * timer goes on.
   */
  public static ExpiryTimer start(ScheduledExecutorService scheduler, Runnable expire) {
    return start(scheduler, expire, EXPIRE_IDLE_AFTER, EXPIRE_IDLE_PERIOD);
  }

  /** As {@link #start(ScheduledExecutorService, Runnable)}, with the idle spell and period given (tests). */
  public static ExpiryTimer start(
      ScheduledExecutorService scheduler, Runnable expire, Duration idleAfter, Duration idlePeriod) {
    ExpiryTimer t = new ExpiryTimer(scheduler, expire, idleAfter, idlePeriod);
    t.wake();
    return t;
  }

  /** Events accepted so far. The feeding thread. */
  public long eventsSeen() {
    return (long) EVENTS_SEEN.getOpaque(this);
  }

  /**
   * Counts one event handed to span assembly; after an idle spell or a burst on a slow period it
   * brings the {@value #EXPIRE_PERIOD_MILLIS} ms period back at once. The feeding thread; never
   * waits.
   */
  public void eventAccepted() {
    eventsAccepted(1);
  }

  /** As {@link #eventAccepted} for each of {@code n} events handed over together. The feeding thread. */
  public void eventsAccepted(int n) {
    if (n <= 0) {
      return;
    }
    long seen = (long) EVENTS_SEEN.getOpaque(this);
    EVENTS_SEEN.setOpaque(this, seen + n);
    if (seen + n - 1 >= wakeAt) {
      wakeAt = Long.MAX_VALUE;
      wake();
    }
  }

  private void wake() {
    try {
      scheduler.execute(() -> scheduleNext(EXPIRE_PERIOD_MILLIS));
    } catch (RejectedExecutionException closing) {
      // shut down: nothing to expire any more
    }
  }

  private void run() {
    try {
      expire.run();
    } catch (RuntimeException e) {
      log.warn("stream expiry failed", e);
    }
    long seen = (long) EVENTS_SEEN.getOpaque(this);
    long now = System.nanoTime();
    long events = seen - eventsAtLastRun;
    long elapsed = now - lastRunAt;
    eventsAtLastRun = seen;
    lastRunAt = now;
    if (events != 0) {
      quietSince = now;
    }
    long period;
    if (now - quietSince > idleAfterNanos) {
      period = idlePeriodMillis;
      wakeAt = seen; // before the look at the events again: an event from now on wakes the timer
      if ((long) EVENTS_SEEN.getVolatile(this) != seen) {
        wakeAt = Long.MAX_VALUE;
        period = EXPIRE_PERIOD_MILLIS;
        quietSince = now;
      }
    } else {
      period = periodMillis(events, elapsed);
      wakeAt = period > EXPIRE_PERIOD_MILLIS ? seen + BURST_EVENTS : Long.MAX_VALUE;
    }
    scheduleNext(period);
  }

  /**
   * The expiry period while events come: the time {@link #EVENTS_PER_EXPIRY} events take at the
   * rate of {@code events} in {@code elapsedNanos}, within {@link #EXPIRE_PERIOD_MILLIS}–{@link
   * #EXPIRE_SLOW_PERIOD_MILLIS} ms.
   */
  static long periodMillis(long events, long elapsedNanos) {
    if (events <= 0) {
      return EXPIRE_SLOW_PERIOD_MILLIS;
    }
    double millis = (double) EVENTS_PER_EXPIRY * elapsedNanos / events / 1e6;
    return Math.max(EXPIRE_PERIOD_MILLIS, Math.min(EXPIRE_SLOW_PERIOD_MILLIS, (long) millis));
  }

  /** Tests: the period the timer was last scheduled with (ms). */
  long periodMillis() {
    try {
      return scheduler.submit(() -> periodMillis).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Replaces the next run by one {@code delayMillis} from now. Scheduler thread. */
  private void scheduleNext(long delayMillis) {
    if (next != null) {
      next.cancel(false);
    }
    periodMillis = delayMillis;
    try {
      next = scheduler.schedule(this::run, delayMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      next = null;
    }
  }
}
