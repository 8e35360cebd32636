package io.gospan.receiver.span;

import java.time.Instant;

/**
 * Converts {@code bpf_ktime_get_ns()} timestamps to epoch nanoseconds.
 *
 * <p>How, and why it is exact: {@code bpf_ktime_get_ns()} reads {@code CLOCK_MONOTONIC}, and on
 * Linux the JDK's {@link System#nanoTime()} is {@code clock_gettime(CLOCK_MONOTONIC)} too, so the
 * sidecar and the kernel share one clock. {@code CLOCK_REALTIME − CLOCK_MONOTONIC} is a constant
 * that changes only when the wall clock is stepped (settimeofday, an NTP step; NTP's frequency
 * slewing applies to both clocks alike). gospan measures that offset with a tight bracket: read
 * monotonic, read realtime ({@link Instant#now()}, microsecond resolution or better), read monotonic
 * again; the realtime read happened within the bracket, so {@code realtime − midpoint} is the offset
 * within ±half the bracket. The narrowest of {@value #SAMPLES} brackets is kept (typically well
 * under a microsecond apart). Conversion is then {@code epoch = monotonic + offset}: an addition,
 * no drift however long gospan runs. {@link #recalibrate()} (every minute from the pipeline) picks
 * up wall-clock steps; a new estimate replaces the old one only when it differs by more than its
 * own uncertainty plus {@value #ADOPT_THRESHOLD_NANOS} ns, so span times do not jitter.
 */
public final class MonotonicClock {
  static final int SAMPLES = 25;
  static final long ADOPT_THRESHOLD_NANOS = 100_000;

  /** Reads of the two clocks; replaced in tests. */
  public interface Source {
    long monotonicNanos();

    long epochNanos();
  }

  private static final Source SYSTEM =
      new Source() {
        @Override
        public long monotonicNanos() {
          return System.nanoTime();
        }

        @Override
        public long epochNanos() {
          Instant now = Instant.now();
          return now.getEpochSecond() * 1_000_000_000L + now.getNano();
        }
      };

  private final Source source;
  private volatile long offsetNanos;
  private volatile long uncertaintyNanos;

  private MonotonicClock(Source source) {
    this.source = source;
    long[] est = estimate();
    this.offsetNanos = est[0];
    this.uncertaintyNanos = est[1];
  }

  /** The real clocks of this machine. */
  public static MonotonicClock system() {
    return new MonotonicClock(SYSTEM);
  }

  /** Clocks read from {@code source}. */
  public static MonotonicClock of(Source source) {
    return new MonotonicClock(source);
  }

  /** A fixed offset, for tests: {@code epoch = monotonic + offsetNanos}. */
  public static MonotonicClock fixed(long offsetNanos) {
    return new MonotonicClock(
        new Source() {
          long t = 1;

          @Override
          public long monotonicNanos() {
            return t;
          }

          @Override
          public long epochNanos() {
            return t + offsetNanos;
          }
        });
  }

  /** Epoch nanoseconds of a {@code CLOCK_MONOTONIC} timestamp. */
  public long toEpochNanos(long monotonicNanos) {
    return monotonicNanos + offsetNanos;
  }

  /** The current monotonic time, same clock as the events. */
  public long monotonicNow() {
    return source.monotonicNanos();
  }

  public long offsetNanos() {
    return offsetNanos;
  }

  /** Half-width of the bracket the current offset came from. */
  public long uncertaintyNanos() {
    return uncertaintyNanos;
  }

  /** Re-measures the offset; returns whether it was replaced (the wall clock was stepped). */
  public synchronized boolean recalibrate() {
    long[] est = estimate();
    long limit = Math.max(est[1], uncertaintyNanos) + ADOPT_THRESHOLD_NANOS;
    if (Math.abs(est[0] - offsetNanos) > limit) {
      offsetNanos = est[0];
      uncertaintyNanos = est[1];
      return true;
    }
    if (est[1] < uncertaintyNanos) {
      // A tighter bracket for the same offset: keep the old value (no jitter), trust it more.
      uncertaintyNanos = Math.max(est[1], 0);
    }
    return false;
  }

  private long[] estimate() {
    long bestOffset = 0;
    long bestWidth = Long.MAX_VALUE;
    for (int i = 0; i < SAMPLES; i++) {
      long m0 = source.monotonicNanos();
      long wall = source.epochNanos();
      long m1 = source.monotonicNanos();
      long width = m1 - m0;
      if (width >= 0 && width < bestWidth) {
        bestWidth = width;
        bestOffset = wall - (m0 + width / 2);
      }
    }
    return new long[] {bestOffset, bestWidth / 2};
  }
}
