package io.gospan.receiver.span;

/** A settable monotonic clock; epoch = monotonic + {@link #OFFSET}. */
public final class TestClock implements MonotonicClock.Source {
  public static final long OFFSET = 1_790_000_000_000_000_000L;
  public long now = 1_000_000_000L;

  @Override
  public long monotonicNanos() {
    return now;
  }

  @Override
  public long epochNanos() {
    return now + OFFSET;
  }

  public void advanceMillis(long ms) {
    now += ms * 1_000_000L;
  }
}
