package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderEvent;
import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * End events that arrived before their stream's start (events may come in any order), by stream
 * key, each kept {@code streams.link_wait} for its start, at most {@code
 * streams.max_pending_links} of them. Every event dropped here (bound reached, replaced by a second
 * end, expired, cleared) is reported to the caller, which counts it unmatched.
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class EarlyEnds {
  private record Early(HeaderEvent event, long releaseAt) {}

  private final LinkedHashMap<StreamKey, Early> ends = new LinkedHashMap<>();
  private final int max;
  private final long waitNs;

  /** @param max at most this many kept (at least 1) @param waitNs how long each is kept, ns */
  EarlyEnds(int max, long waitNs) {
    this.max = Math.max(1, max);
    this.waitNs = waitNs;
  }

  /**
   * Keeps {@code e}, the end of stream {@code key}, until {@code now} plus the wait.
   *
   * @return whether an event was dropped: {@code e} (bound reached) or an earlier end of the same key
   */
  boolean hold(StreamKey key, HeaderEvent e, long now) {
    if (ends.size() >= max) {
      return true;
    }
    Early previous = ends.remove(key); // re-insert: the map stays in release order
    ends.put(key, new Early(e, now + waitNs));
    return previous != null; // a duplicate end for a stream whose start has not come
  }

  /** Removes and returns the end kept for {@code key}, or {@code null}. */
  HeaderEvent take(StreamKey key) {
    Early e = ends.isEmpty() ? null : ends.remove(key); // most starts: none held, and no key hashed
    return e == null ? null : e.event();
  }

  /** Drops the ends kept until {@code now} or earlier; returns how many. */
  int expire(long now) {
    int dropped = 0;
    for (Iterator<Early> it = ends.values().iterator(); it.hasNext(); ) {
      if (it.next().releaseAt() > now) {
        break;
      }
      it.remove();
      dropped++;
    }
    return dropped;
  }

  /** Drops every end kept; returns how many. */
  int clear() {
    int n = ends.size();
    ends.clear();
    return n;
  }
}
