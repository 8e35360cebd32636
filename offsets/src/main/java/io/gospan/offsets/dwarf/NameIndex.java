package io.gospan.offsets.dwarf;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Name → DIE offset without keeping names: open addressing on the 64-bit FNV-1a hash of the name's UTF-8
 * bytes, hashed straight from {@code .debug_info} during the scan so no String is built per DIE. A hit is
 * verified against the DIE's real name by the caller. The first offset stored for a hash wins, matching
 * "first DIE with that name" lookup order.
 */
final class NameIndex {
  static final long FNV_OFFSET = 0xcbf29ce484222325L;
  static final long FNV_PRIME = 0x100000001b3L;
  private static final long EMPTY = 0;

  private long[] keys = new long[1 << 12];
  private int[] values = new int[1 << 12];
  private int size;

  static long hash(String name) {
    long h = FNV_OFFSET;
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xff)) * FNV_PRIME;
    }
    return fix(h);
  }

  /** Maps the reserved empty key elsewhere. */
  static long fix(long h) {
    return h == EMPTY ? 1 : h;
  }

  void putIfAbsent(long hash, int value) {
    if (size * 2 >= keys.length) {
      grow();
    }
    int mask = keys.length - 1;
    int i = (int) (hash ^ (hash >>> 32)) & mask;
    while (keys[i] != EMPTY) {
      if (keys[i] == hash) {
        return;
      }
      i = (i + 1) & mask;
    }
    keys[i] = hash;
    values[i] = value;
    size++;
  }

  /** The value for {@code hash}, or -1. */
  int get(long hash) {
    int mask = keys.length - 1;
    int i = (int) (hash ^ (hash >>> 32)) & mask;
    while (keys[i] != EMPTY) {
      if (keys[i] == hash) {
        return values[i];
      }
      i = (i + 1) & mask;
    }
    return -1;
  }

  int size() {
    return size;
  }

  private void grow() {
    long[] oldKeys = keys;
    int[] oldValues = values;
    keys = new long[oldKeys.length * 2];
    values = new int[oldKeys.length * 2];
    Arrays.fill(keys, EMPTY);
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != EMPTY) {
        putIfAbsent(oldKeys[i], oldValues[i]);
      }
    }
  }
}
