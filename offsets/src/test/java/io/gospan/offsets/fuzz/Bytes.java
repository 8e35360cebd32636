package io.gospan.offsets.fuzz;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** A little-endian byte writer with back-patching, for building seed sections. */
final class Bytes {
  private byte[] buf = new byte[256];
  private int size;

  int size() {
    return size;
  }

  byte[] toArray() {
    return Arrays.copyOf(buf, size);
  }

  private void ensure(int n) {
    if (size + n > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + n));
    }
  }

  Bytes u8(int v) {
    ensure(1);
    buf[size++] = (byte) v;
    return this;
  }

  Bytes u16(int v) {
    return u8(v).u8(v >>> 8);
  }

  Bytes u32(long v) {
    return u16((int) v).u16((int) (v >>> 16));
  }

  Bytes u64(long v) {
    return u32(v).u32(v >>> 32);
  }

  Bytes u16be(int v) {
    return u8(v >>> 8).u8(v);
  }

  Bytes uleb(long v) {
    do {
      int b = (int) (v & 0x7f);
      v >>>= 7;
      u8(v != 0 ? b | 0x80 : b);
    } while (v != 0);
    return this;
  }

  Bytes sleb(long v) {
    while (true) {
      int b = (int) (v & 0x7f);
      v >>= 7;
      boolean done = (v == 0 && (b & 0x40) == 0) || (v == -1 && (b & 0x40) != 0);
      u8(done ? b : b | 0x80);
      if (done) {
        return this;
      }
    }
  }

  Bytes bytes(byte[] b) {
    ensure(b.length);
    System.arraycopy(b, 0, buf, size, b.length);
    size += b.length;
    return this;
  }

  Bytes ascii(String s) {
    return bytes(s.getBytes(StandardCharsets.UTF_8));
  }

  Bytes cstring(String s) {
    return ascii(s).u8(0);
  }

  Bytes zeros(int n) {
    ensure(n);
    size += n;
    return this;
  }

  Bytes align(int a) {
    while (size % a != 0) {
      u8(0);
    }
    return this;
  }

  Bytes putU32(int at, long v) {
    for (int i = 0; i < 4; i++) {
      buf[at + i] = (byte) (v >>> (8 * i));
    }
    return this;
  }

  Bytes putU64(int at, long v) {
    for (int i = 0; i < 8; i++) {
      buf[at + i] = (byte) (v >>> (8 * i));
    }
    return this;
  }

  Bytes putU8(int at, int v) {
    buf[at] = (byte) v;
    return this;
  }
}
