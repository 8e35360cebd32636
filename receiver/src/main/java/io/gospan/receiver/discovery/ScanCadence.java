package io.gospan.receiver.discovery;

/**
 * When the periodic scan comes and whether it lists all of {@code /proc}: every scan interval
 * while exec notices are off or one was lost; otherwise a listing every {@link
 * #LISTING_INTERVAL_NANOS} at most (between them a scan checks the traced pids alone for exit),
 * and a scan every {@link #QUIET_SCAN_INTERVAL_NANOS} unless a process waits for its {@code
 * open_port} in its first seconds ({@link PortWaitList#anyEager}). Discovery thread only, but for
 * the interval.
 */
final class ScanCadence {
  /**
   * A periodic scan lists {@code /proc} at least this often while exec notices arrive (ns): the
   * listing then finds only what a notice could not announce (a notice dropped because its ring
   * buffer was full, 4,096 execs within one drain). Listing every 500 ms cost the idle sidecar
   * ~2 ms of CPU a second with 64 processes on the machine; checking the traced pids alone costs
   * one {@code /proc/<pid>/stat} read each (docs/benchmarks.md, "The idle sidecar's discovery").
   */
  static final long LISTING_INTERVAL_NANOS = 5_000_000_000L;

  /**
   * The periodic scan's period while exec notices arrive and none was lost, and no process waits for
   * its {@code open_port} in its first {@link PortWaitList#AWAIT_PORT_EAGER_NANOS} (ns). Such a scan only checks
   * the traced pids for exit (a new program, or a traced one exec'ing another, is announced by its
   * exec notice, handled at once between scans): an exit is then seen up to 2 s after it instead of
   * 500 ms, which delays only when the process's binary starts to linger. Each scan costs a wake-up
   * and a {@code /proc/<pid>/stat} read per traced pid, ~0.9 ms of CPU a second at 500 ms
   * (docs/benchmarks.md, "The idle sidecar's discovery").
   */
  static final long QUIET_SCAN_INTERVAL_NANOS = 2_000_000_000L;

  /** The scan interval discovery was started with (ns); set from any thread. */
  private volatile long intervalNanos;
  /** When {@code /proc} was last listed ({@link System#nanoTime()}). */
  private long lastListing;
  private boolean listed;

  /** The periodic scan's interval (default 0 until set: discovery sets it as it starts). */
  void interval(long nanos) {
    intervalNanos = nanos;
  }

  /**
   * Whether a scan at {@code now} lists {@code /proc}: always when {@code forced} or when {@code
   * listingNeeded} (no exec notices, or one was lost), and at least every {@link
   * #LISTING_INTERVAL_NANOS}. A listing is remembered.
   */
  boolean listsAt(long now, boolean forced, boolean listingNeeded) {
    if (!forced && listed && !listingNeeded && now - lastListing < LISTING_INTERVAL_NANOS) {
      return false;
    }
    listed = true;
    lastListing = now;
    return true;
  }

  /**
   * The delay before the next periodic scan (ns): the scan interval when {@code listingNeeded} or
   * {@code portWaitEager} (a process waits for its {@code open_port} in its first seconds), else
   * {@link #QUIET_SCAN_INTERVAL_NANOS} (or the interval if longer).
   */
  long nextDelayNanos(boolean listingNeeded, boolean portWaitEager) {
    if (listingNeeded || portWaitEager) {
      return intervalNanos;
    }
    return Math.max(intervalNanos, QUIET_SCAN_INTERVAL_NANOS);
  }
}
