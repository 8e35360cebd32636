package io.gospan.receiver.span;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Predicate;

/**
 * The streams in flight, by {@link StreamKey}, in start order (which is deadline order: every
 * deadline is a start's processing time plus {@code streams.timeout}), at most {@code
 * streams.max_in_flight} of them.
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class StreamTable {
  private final LinkedHashMap<StreamKey, TracedStream> streams = new LinkedHashMap<>();
  private final int maxInFlight;

  StreamTable(int maxInFlight) {
    this.maxInFlight = maxInFlight;
  }

  TracedStream get(StreamKey key) {
    return streams.get(key);
  }

  /** Whether a new stream would exceed {@code max_in_flight}. */
  boolean full() {
    return streams.size() >= maxInFlight;
  }

  /** Adds a started stream (its key not in flight). */
  void add(TracedStream s) {
    streams.put(s.key, s);
  }

  void remove(StreamKey key) {
    streams.remove(key);
  }

  int size() {
    return streams.size();
  }

  /** Removes and returns the oldest stream when its deadline is at or before {@code now}, else {@code null}. */
  TracedStream removeTimedOut(long now) {
    if (streams.isEmpty()) {
      return null;
    }
    TracedStream oldest = streams.values().iterator().next();
    if (oldest.deadline > now) {
      return null;
    }
    streams.remove(oldest.key);
    return oldest;
  }

  /** The streams {@code filter} accepts, oldest first (not removed). */
  List<TracedStream> matching(Predicate<TracedStream> filter) {
    List<TracedStream> found = new ArrayList<>();
    for (TracedStream s : streams.values()) {
      if (filter.test(s)) {
        found.add(s);
      }
    }
    return found;
  }
}
