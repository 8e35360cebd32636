package io.gospan.receiver.event;

import java.util.function.Consumer;

/**
 * Where the ring buffer's reader hands decoded {@link ProbeEvent}s: one at a time ({@link
 * #accept}), or the events of one poll in runs of up to a few hundred ({@link #acceptAll}), in the
 * ring buffer's order either way. A run lets the receiver share per-event work among its events:
 * span assembly's lock entry and clock read (the clock read alone was ~0.09 µs a span of the ring
 * buffer thread's ~1.0 in the profile of docs/benchmarks.md "The ring buffer thread's span assembly";
 * the A/B is in "The ring buffer thread's events in runs").
 */
public interface ProbeEventSink extends Consumer<ProbeEvent> {

  /**
   * Feeds {@code events[from]} to {@code events[to - 1]}, in that order, on the reader's thread. An
   * event whose handling throws does not keep the others from being fed: the first such exception
   * is thrown once all were (the others suppressed in it). {@code events} is the caller's: read
   * during this call only. This default feeds each to {@link #accept}.
   */
  default void acceptAll(ProbeEvent[] events, int from, int to) {
    RuntimeException failure = null;
    for (int i = from; i < to; i++) {
      try {
        accept(events[i]);
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** A sink that feeds every event to {@code consumer}, one at a time. */
  static ProbeEventSink of(Consumer<ProbeEvent> consumer) {
    return consumer instanceof ProbeEventSink s ? s : consumer::accept;
  }

  /** The first failure of a run, with the later ones suppressed in it. */
  final class Failures {
    private Failures() {}

    /** {@code e} when {@code first} is null, else {@code first} with {@code e} suppressed in it. */
    public static RuntimeException add(RuntimeException first, RuntimeException e) {
      if (first == null) {
        return e;
      }
      if (first != e) {
        first.addSuppressed(e);
      }
      return first;
    }
  }
}
