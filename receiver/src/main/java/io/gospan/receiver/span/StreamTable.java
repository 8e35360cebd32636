package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The streams in flight, by their key (pid, connection, stream id, side: {@link StreamKey}), in
 * start order (which is deadline order: every deadline is a start's processing time plus {@code
 * streams.timeout}), at most {@code streams.max_in_flight} of them.
 *
 * <p>Looked up for every header event, so without an object per look-up or per entry: the key is
 * two numbers (the connection; the pid, side and stream id packed into one long, {@link #packed}),
 * held in columns of an open-addressing hash table (linear probing, at most half full, removal by
 * backward shift); the start order is a doubly linked list through the streams themselves ({@link
 * TracedStream#older}, {@link TracedStream#newer}). The table starts at {@value #INITIAL_SLOTS}
 * slots and doubles as streams are added; it does not shrink. A {@code LinkedHashMap} by {@link
 * StreamKey} before it took a key object per event and an entry per stream (~0.15 µs a span of
 * the ring buffer thread at 20,000 spans/s, docs/benchmarks.md).
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class StreamTable {
  static final int INITIAL_SLOTS = 256;

  private final int maxInFlight;
  private long[] connections;
  private long[] packedKeys;
  private TracedStream[] slots; // null: empty
  private int size;
  private TracedStream oldest; // the list's ends; null when empty
  private TracedStream newest;

  StreamTable(int maxInFlight) {
    this.maxInFlight = maxInFlight;
    allocate(INITIAL_SLOTS);
  }

  private void allocate(int n) {
    connections = new long[n];
    packedKeys = new long[n];
    slots = new TracedStream[n];
  }

  /**
   * The pid (high 32 bits), the side (bit 31: 1 = server) and the stream id (low 31 bits: HTTP/2
   * stream ids are 31-bit, RFC 9113 §5.1.1) as one number: with the connection, a stream's key.
   */
  static long packed(int pid, int streamId, Side side) {
    return ((long) pid << 32) | (side == Side.SERVER ? 0x8000_0000L : 0) | (streamId & 0x7FFF_FFFFL);
  }

  private static long packed(StreamKey key) {
    return packed(key.pid(), key.streamId(), key.side());
  }

  /** Span assembly's mixed hash ({@link RecentEnds#hash}) of a key's two numbers. */
  private static int hash(long connection, long packed) {
    return RecentEnds.hash(connection, packed, 0);
  }

  /** The stream in flight with this key, or {@code null}. */
  TracedStream get(int pid, long connection, int streamId, Side side) {
    int slot = find(connection, packed(pid, streamId, side));
    return slot < 0 ? null : slots[slot];
  }

  TracedStream get(StreamKey key) {
    return get(key.pid(), key.connection(), key.streamId(), key.side());
  }

  /** The slot holding the key, or -1. */
  private int find(long connection, long packed) {
    int mask = slots.length - 1;
    for (int pos = hash(connection, packed) & mask; slots[pos] != null; pos = (pos + 1) & mask) {
      if (connections[pos] == connection && packedKeys[pos] == packed) {
        return pos;
      }
    }
    return -1;
  }

  /** Whether a new stream would exceed {@code max_in_flight}. */
  boolean full() {
    return size >= maxInFlight;
  }

  /**
   * Adds a started stream as the newest (its key not in flight: the caller removes or keeps the
   * stream in flight with it; one that is in flight anyway is replaced in its place in the order).
   */
  void add(TracedStream s) {
    long connection = s.key.connection();
    long packed = packed(s.key);
    int slot = find(connection, packed);
    if (slot >= 0) {
      TracedStream old = slots[slot];
      slots[slot] = s;
      replaceInList(old, s);
      return;
    }
    if ((size + 1) * 2 > slots.length) {
      grow();
    }
    insert(connection, packed, s);
    size++;
    s.older = newest;
    s.newer = null;
    if (newest != null) {
      newest.newer = s;
    } else {
      oldest = s;
    }
    newest = s;
  }

  private void insert(long connection, long packed, TracedStream s) {
    int mask = slots.length - 1;
    int pos = hash(connection, packed) & mask;
    while (slots[pos] != null) {
      pos = (pos + 1) & mask;
    }
    connections[pos] = connection;
    packedKeys[pos] = packed;
    slots[pos] = s;
  }

  private void grow() {
    long[] c = connections;
    long[] p = packedKeys;
    TracedStream[] s = slots;
    allocate(s.length * 2);
    for (int i = 0; i < s.length; i++) {
      if (s[i] != null) {
        insert(c[i], p[i], s[i]);
      }
    }
  }

  private void replaceInList(TracedStream old, TracedStream s) {
    s.older = old.older;
    s.newer = old.newer;
    if (s.older != null) {
      s.older.newer = s;
    } else {
      oldest = s;
    }
    if (s.newer != null) {
      s.newer.older = s;
    } else {
      newest = s;
    }
    old.older = null;
    old.newer = null;
  }

  /** Removes the stream in flight with this key, if any. */
  void remove(StreamKey key) {
    int slot = find(key.connection(), packed(key));
    if (slot < 0) {
      return;
    }
    TracedStream s = slots[slot];
    unindex(slot);
    size--;
    if (s.older != null) {
      s.older.newer = s.newer;
    } else {
      oldest = s.newer;
    }
    if (s.newer != null) {
      s.newer.older = s.older;
    } else {
      newest = s.older;
    }
    s.older = null;
    s.newer = null;
  }

  /** Empties slot {@code pos}, shifting back the entries after it that probed past it. */
  private void unindex(int pos) {
    int mask = slots.length - 1;
    int hole = pos;
    int j = pos;
    while (true) {
      j = (j + 1) & mask;
      if (slots[j] == null) {
        break;
      }
      int home = hash(connections[j], packedKeys[j]) & mask;
      // the entry at j may move to the hole unless its home lies cyclically in (hole, j]
      boolean stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        connections[hole] = connections[j];
        packedKeys[hole] = packedKeys[j];
        slots[hole] = slots[j];
        hole = j;
      }
    }
    slots[hole] = null;
  }

  int size() {
    return size;
  }

  /** Removes and returns the oldest stream when its deadline is at or before {@code now}, else {@code null}. */
  TracedStream removeTimedOut(long now) {
    TracedStream s = oldest;
    if (s == null || s.deadline > now) {
      return null;
    }
    remove(s.key);
    return s;
  }

  /** The streams {@code filter} accepts, oldest first (not removed). */
  List<TracedStream> matching(Predicate<TracedStream> filter) {
    List<TracedStream> found = new ArrayList<>();
    for (TracedStream s = oldest; s != null; s = s.newer) {
      if (filter.test(s)) {
        found.add(s);
      }
    }
    return found;
  }

  /** For tests: the table's slots (a power of two, at least twice the streams in flight). */
  int capacity() {
    return slots.length;
  }

  /** For tests: how many streams sit off their home slot (moved along by collisions). */
  int displaced() {
    int n = 0;
    int mask = slots.length - 1;
    for (int i = 0; i < slots.length; i++) {
      if (slots[i] != null && (hash(connections[i], packedKeys[i]) & mask) != i) {
        n++;
      }
    }
    return n;
  }
}
