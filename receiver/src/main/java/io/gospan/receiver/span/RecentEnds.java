package io.gospan.receiver.span;

import java.util.Arrays;
import java.util.Objects;

/**
 * Ended spans remembered for linking, oldest first, findable by key: what {@link SpanAssembler}
 * keeps of each ended client stream (by its flow) and server stream (by its key) for {@code
 * streams.link_wait}. At high rates it holds thousands of entries at any time, each for about a
 * second: as objects (a map entry, a key, a record) they are what the serial collector copies and
 * promotes on every young collection and marks in every full one. Here they are columns of
 * primitive arrays, allocated once per capacity: no object per entry.
 *
 * <p>A key is two numbers and an optional object compared with {@link Object#equals} (a client's
 * socket endpoint). An entry carries the span's start and end (ns, the assembler's event time),
 * until when it is kept (ns), its trace and span ids as numbers (W3C trace context: 16 and 8
 * bytes) and its sampling decision once decided, and two objects while it is not (its node, its
 * stream).
 *
 * <p>Entries are kept in insertion order in a ring; a hash index (open addressing, linear probing,
 * at most half full) finds them. An index entry holds the slot plus one in its low bits and the
 * key hash's low bits in the bits the largest ring leaves spare (17 at {@code maxSlots} 2^14): a
 * probe rejects another key's position, and removal's backward shift finds an entry's home
 * position, without reading the slot's columns at random (the thread that puts sleeps between
 * polls: those reads are cache misses). When the spare bits do not cover the index's position bits
 * ({@code maxSlots} above 2^15), the shift reads the hash column instead. Putting a key again
 * removes its older entry first (it leaves a dead slot in the ring, reclaimed when it becomes the
 * oldest, or when the full ring is rebuilt). The ring grows by doubling, from 256 slots up to the
 * first power of two not below {@code maxEntries}; {@link #put} drops the oldest live entries
 * beyond {@code maxEntries}. So it behaves as an insertion-ordered map bounded at {@code
 * maxEntries} whose eldest entries are dropped.
 *
 * <p>Not thread-safe: the assembler's lock guards it.
 */
final class RecentEnds {
  private static final int INITIAL_SLOTS = 256;

  private final int maxEntries;
  private final int maxSlots;
  /** Index entry bits holding slot + 1 (up to {@code maxSlots}); the bits above hold the hash's low bits. */
  private final int slotBits;
  private final int slotMask;
  /** Whether the tag covers every position bit of the largest index: an entry's home is read from it. */
  private final boolean tagHoldsHome;
  private int head; // the oldest slot (live or dead); the ring is [head, head + used)
  private int used; // slots in the ring, live or dead
  private int live;

  // one column per field, indexed by slot
  private long[] keyA;
  private long[] keyB;
  private Object[] keyRef;
  private int[] hash;
  private boolean[] dead;
  private long[] startNs;
  private long[] endNs;
  private long[] retainUntil;
  private long[] traceIdHigh;
  private long[] traceIdLow;
  private long[] spanId;
  private boolean[] sampled;
  private Object[] node;
  private Object[] stream;
  /** Hash index: (hash's low bits << slotBits) | (slot + 1), 0 = empty; twice the slots. */
  private int[] index;

  /** @param maxEntries at most this many live entries (≥ 1) */
  RecentEnds(int maxEntries) {
    if (maxEntries < 1) {
      throw new IllegalArgumentException("maxEntries < 1: " + maxEntries);
    }
    this.maxEntries = maxEntries;
    int p = Integer.highestOneBit(Math.min(maxEntries, 1 << 29));
    this.maxSlots = p >= maxEntries ? p : p << 1; // the first power of two not below it (2^29 at most)
    this.slotBits = Integer.numberOfTrailingZeros(maxSlots) + 1;
    this.slotMask = (1 << slotBits) - 1;
    this.tagHoldsHome = 32 - slotBits >= slotBits; // the index's position bits: log2(2 maxSlots) = slotBits
    allocate(Math.min(INITIAL_SLOTS, maxSlots));
  }

  private void allocate(int slots) {
    keyA = new long[slots];
    keyB = new long[slots];
    keyRef = new Object[slots];
    hash = new int[slots];
    dead = new boolean[slots];
    startNs = new long[slots];
    endNs = new long[slots];
    retainUntil = new long[slots];
    traceIdHigh = new long[slots];
    traceIdLow = new long[slots];
    spanId = new long[slots];
    sampled = new boolean[slots];
    node = new Object[slots];
    stream = new Object[slots];
    index = new int[slots * 2];
  }

  /** Live entries. */
  int size() {
    return live;
  }

  /** The slot of {@code (a, b, ref)}'s entry, or -1. */
  int find(long a, long b, Object ref) {
    return find(hash(a, b, ref), a, b, ref);
  }

  private int find(int h, long a, long b, Object ref) {
    int mask = index.length - 1;
    int tag = h << slotBits;
    for (int pos = h & mask, e; (e = index[pos]) != 0; pos = (pos + 1) & mask) {
      if ((e & ~slotMask) != tag) {
        continue; // another key's entry, told by its tag: its slot not read
      }
      int slot = (e & slotMask) - 1;
      if (hash[slot] == h && keyA[slot] == a && keyB[slot] == b && Objects.equals(keyRef[slot], ref)) {
        return slot;
      }
    }
    return -1;
  }

  /**
   * Appends an entry as the newest, after removing the key's older entry if any and, beyond
   * {@code maxEntries} live entries, the oldest ones. Returns its slot (valid until the next
   * {@code put}, {@code removeOldest} or {@code clear}).
   */
  int put(long a, long b, Object ref, long start, long end, long keepUntil, Object nodeRef, Object streamRef,
      long traceHigh, long traceLow, long span, boolean spanSampled) {
    int h = hash(a, b, ref);
    int old = find(h, a, b, ref);
    if (old >= 0) {
      kill(old);
    }
    while (live >= maxEntries) {
      removeOldest();
    }
    if (used == keyA.length) {
      // full: twice the slots, or at the largest size the same without the dead ones (there are
      // some: live < maxEntries <= maxSlots = used)
      rebuild(Math.min(keyA.length * 2, maxSlots));
    }
    int slot = (head + used) & (keyA.length - 1);
    used++;
    live++;
    keyA[slot] = a;
    keyB[slot] = b;
    keyRef[slot] = ref;
    hash[slot] = h;
    dead[slot] = false;
    startNs[slot] = start;
    endNs[slot] = end;
    retainUntil[slot] = keepUntil;
    traceIdHigh[slot] = traceHigh;
    traceIdLow[slot] = traceLow;
    spanId[slot] = span;
    sampled[slot] = spanSampled;
    node[slot] = nodeRef;
    stream[slot] = streamRef;
    int mask = index.length - 1;
    int pos = h & mask;
    while (index[pos] != 0) {
      pos = (pos + 1) & mask;
    }
    index[pos] = entry(h, slot);
    return slot;
  }

  /** The oldest live entry's slot, or -1 when there is none (dead slots at the head are reclaimed). */
  int oldest() {
    while (used > 0 && dead[head]) {
      clearSlot(head);
      head = (head + 1) & (keyA.length - 1);
      used--;
    }
    return used > 0 ? head : -1;
  }

  /** Removes the oldest live entry (none: nothing). */
  void removeOldest() {
    int slot = oldest();
    if (slot < 0) {
      return;
    }
    kill(slot);
    oldest(); // reclaims it
  }

  void clear() {
    allocate(Math.min(INITIAL_SLOTS, maxSlots));
    head = 0;
    used = 0;
    live = 0;
  }

  long startNs(int slot) {
    return startNs[slot];
  }

  long endNs(int slot) {
    return endNs[slot];
  }

  long retainUntil(int slot) {
    return retainUntil[slot];
  }

  long traceIdHigh(int slot) {
    return traceIdHigh[slot];
  }

  long traceIdLow(int slot) {
    return traceIdLow[slot];
  }

  long spanId(int slot) {
    return spanId[slot];
  }

  /** Its sampling decision, once decided. */
  boolean sampled(int slot) {
    return sampled[slot];
  }

  Object node(int slot) {
    return node[slot];
  }

  Object stream(int slot) {
    return stream[slot];
  }

  long keyA(int slot) {
    return keyA[slot];
  }

  long keyB(int slot) {
    return keyB[slot];
  }

  Object keyRef(int slot) {
    return keyRef[slot];
  }

  // ------------------------------------------------------------------------------------ internals

  /** Removes a live slot's entry from the index and marks it dead (the ring reclaims it in order). */
  private void kill(int slot) {
    int mask = index.length - 1;
    int h = hash[slot];
    int e = entry(h, slot);
    int pos = h & mask;
    while (index[pos] != e) {
      pos = (pos + 1) & mask;
    }
    unindex(pos);
    dead[slot] = true;
    node[slot] = null; // no reference kept for a dead entry
    stream[slot] = null;
    keyRef[slot] = null;
    live--;
  }

  private void clearSlot(int slot) {
    node[slot] = null;
    stream[slot] = null;
    keyRef[slot] = null;
  }

  /** Empties index position {@code pos}, shifting back the entries after it that probed past it. */
  private void unindex(int pos) {
    int mask = index.length - 1;
    int hole = pos;
    int j = pos;
    while (true) {
      j = (j + 1) & mask;
      if (index[j] == 0) {
        break;
      }
      int e = index[j];
      int home = (tagHoldsHome ? e >>> slotBits : hash[(e & slotMask) - 1]) & mask;
      // the entry at j may move to the hole unless its home lies cyclically in (hole, j]
      boolean stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        index[hole] = index[j];
        hole = j;
      }
    }
    index[hole] = 0;
  }

  /** A ring of {@code slots} slots with the live entries moved to slots 0.. in order; the index rebuilt. */
  private void rebuild(int slots) {
    int n = keyA.length;
    long[] a = keyA;
    long[] b = keyB;
    Object[] r = keyRef;
    int[] h = hash;
    boolean[] d = dead;
    long[] s = startNs;
    long[] e = endNs;
    long[] k = retainUntil;
    long[] th = traceIdHigh;
    long[] tl = traceIdLow;
    long[] sp = spanId;
    boolean[] sa = sampled;
    Object[] nd = node;
    Object[] st = stream;
    allocate(slots);
    int i = 0;
    for (int u = 0; u < used; u++) {
      int from = (head + u) & (n - 1);
      if (d[from]) {
        continue;
      }
      keyA[i] = a[from];
      keyB[i] = b[from];
      keyRef[i] = r[from];
      hash[i] = h[from];
      startNs[i] = s[from];
      endNs[i] = e[from];
      retainUntil[i] = k[from];
      traceIdHigh[i] = th[from];
      traceIdLow[i] = tl[from];
      spanId[i] = sp[from];
      sampled[i] = sa[from];
      node[i] = nd[from];
      stream[i] = st[from];
      int mask = index.length - 1;
      int pos = hash[i] & mask;
      while (index[pos] != 0) {
        pos = (pos + 1) & mask;
      }
      index[pos] = entry(hash[i], i);
      i++;
    }
    head = 0;
    used = i;
  }

  /** The index entry of {@code slot} with hash {@code h}: never 0 (slot + 1 ≥ 1). */
  private int entry(int h, int slot) {
    return (h << slotBits) | (slot + 1);
  }

  private static int hash(long a, long b, Object ref) {
    return hash(a, b, ref == null ? 0 : ref.hashCode());
  }

  /**
   * Span assembly's keys' hash, here and in {@code SpanAssembler}'s key records: mixed, because
   * their parts are close together (connections are nearby addresses, stream ids consecutive odd
   * numbers, a client's ports neighbours), which {@code 31 × a + b} puts into the same few buckets.
   */
  static int hash(long a, long b, long c) {
    long h = ((a * 0x9E3779B97F4A7C15L + b) * 0x9E3779B97F4A7C15L + c) * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }

  @Override
  public String toString() {
    return "RecentEnds{live=" + live + ", slots=" + keyA.length + "/" + maxSlots + "}";
  }

  /** For tests: the live keys' slots, oldest first. */
  int[] liveSlots() {
    int[] out = new int[live];
    int n = 0;
    for (int i = 0; i < used; i++) {
      int slot = (head + i) & (keyA.length - 1);
      if (!dead[slot]) {
        out[n++] = slot;
      }
    }
    return Arrays.copyOf(out, n);
  }
}
