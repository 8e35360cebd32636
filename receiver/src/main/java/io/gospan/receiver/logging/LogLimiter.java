package io.gospan.receiver.logging;

/**
 * At most one log line per interval, counting the lines left out: {@link #admit} says whether a
 * line may be printed now and, if so, how many were left out since the last one printed, for that
 * line to say. The first line is always admitted.
 *
 * <p>For lines that come from events (a failure as it happens). A report called on a schedule
 * ("dropped N since the last report") needs none: its schedule is its interval.
 *
 * <p>Thread-safe. Times are {@link System#nanoTime} values, passed in so tests choose them.
 */
public final class LogLimiter {
  private final long intervalNanos;
  private boolean printed;
  private long lastPrinted;
  private long leftOut;

  private LogLimiter(long intervalNanos) {
    if (intervalNanos < 0) {
      throw new IllegalArgumentException("negative interval: " + intervalNanos + " ns");
    }
    this.intervalNanos = intervalNanos;
  }

  /** A limiter admitting at most one line per {@code intervalNanos} ns. */
  public static LogLimiter everyNanos(long intervalNanos) {
    return new LogLimiter(intervalNanos);
  }

  /**
   * Whether a line may be printed at {@code nowNanos}.
   *
   * @return -1 to leave it out (it is counted), else the number of lines left out since the last
   *     one admitted (0 for the first)
   */
  public synchronized long admit(long nowNanos) {
    if (printed && nowNanos - lastPrinted < intervalNanos) {
      leftOut++;
      return -1;
    }
    long n = leftOut;
    printed = true;
    lastPrinted = nowNanos;
    leftOut = 0;
    return n;
  }
}
