package io.gospan.offsets.elf;

import io.gospan.offsets.CorruptBinaryException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked little-endian cursor over a {@link ByteBuffer} (a mapped file region or a decompressed
 * section). Every read past the end throws {@link CorruptBinaryException} naming {@code what}, so parsers
 * built on it never see a runtime exception from a truncated file.
 *
 * <p>Positions are {@code int} byte offsets from the start of the buffer.
 */
public final class ByteReader {
  private final ByteBuffer buf;
  private final String what;
  private final int limit;
  private int pos;

  /**
   * @param buf the bytes; read from index 0 to {@code buf.limit()}, its own position is ignored
   * @param what names the region in error messages, e.g. {@code ".debug_info"}
   */
  public ByteReader(ByteBuffer buf, String what) {
    this.buf = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    this.buf.position(0);
    this.what = what;
    this.limit = this.buf.limit();
  }

  public int position() {
    return pos;
  }

  public int limit() {
    return buf.limit();
  }

  public int remaining() {
    return buf.limit() - pos;
  }

  public boolean hasRemaining() {
    return pos < buf.limit();
  }

  public String what() {
    return what;
  }

  /** Moves to {@code offset}; {@code offset == limit()} is allowed (empty remainder). */
  public ByteReader seek(long offset) throws CorruptBinaryException {
    if (offset < 0 || offset > buf.limit()) {
      throw corrupt("offset " + offset + " outside " + buf.limit() + " bytes");
    }
    pos = (int) offset;
    return this;
  }

  public void skip(long n) throws CorruptBinaryException {
    need(n);
    pos += (int) n;
  }

  private void need(long n) throws CorruptBinaryException {
    if (n < 0 || n > buf.limit() - pos) {
      throw corrupt("truncated: need " + n + " bytes at offset " + pos + " of " + buf.limit());
    }
  }

  public CorruptBinaryException corrupt(String message) {
    return new CorruptBinaryException(what + ": " + message);
  }

  public int u8() throws CorruptBinaryException {
    if (pos >= limit) {
      throw corrupt("truncated: need 1 byte at offset " + pos + " of " + limit);
    }
    return buf.get(pos++) & 0xff;
  }

  public int u16() throws CorruptBinaryException {
    need(2);
    int v = buf.getShort(pos) & 0xffff;
    pos += 2;
    return v;
  }

  public long u32() throws CorruptBinaryException {
    need(4);
    long v = buf.getInt(pos) & 0xffffffffL;
    pos += 4;
    return v;
  }

  public int s32() throws CorruptBinaryException {
    need(4);
    int v = buf.getInt(pos);
    pos += 4;
    return v;
  }

  /** An unsigned 64-bit value as a Java long (two's complement for values at or above 2^63). */
  public long u64() throws CorruptBinaryException {
    need(8);
    long v = buf.getLong(pos);
    pos += 8;
    return v;
  }

  /** Reads an unsigned value of {@code size} bytes (1, 2, 4 or 8). */
  public long unsigned(int size) throws CorruptBinaryException {
    switch (size) {
      case 1:
        return u8();
      case 2:
        return u16();
      case 4:
        return u32();
      case 8:
        return u64();
      default:
        throw corrupt("unsupported integer size " + size);
    }
  }

  /** Unsigned LEB128; bits beyond 64 are dropped (as Go's debug/dwarf does). */
  public long uleb() throws CorruptBinaryException {
    // One-byte values are most of DWARF's: abbreviation codes, small constants, lengths.
    if (pos < limit) {
      int first = buf.get(pos);
      if (first >= 0) {
        pos++;
        return first;
      }
    }
    long v = 0;
    int shift = 0;
    while (true) {
      int b = u8();
      if (shift < 64) {
        v |= (long) (b & 0x7f) << shift;
      }
      shift += 7;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
  }

  /** Signed LEB128. */
  public long sleb() throws CorruptBinaryException {
    long v = 0;
    int shift = 0;
    int b;
    do {
      b = u8();
      if (shift < 64) {
        v |= (long) (b & 0x7f) << shift;
      }
      shift += 7;
    } while ((b & 0x80) != 0);
    if (shift < 64 && (b & 0x40) != 0) {
      v |= -1L << shift;
    }
    return v;
  }

  /** A NUL-terminated UTF-8 string; the cursor ends after the NUL. */
  public String cstring() throws CorruptBinaryException {
    int end = pos;
    int lim = buf.limit();
    while (end < lim && buf.get(end) != 0) {
      end++;
    }
    if (end >= lim) {
      throw corrupt("unterminated string at offset " + pos);
    }
    String s = string(pos, end - pos);
    pos = end + 1;
    return s;
  }

  /** Skips a NUL-terminated string. */
  public void skipCstring() throws CorruptBinaryException {
    int lim = buf.limit();
    int end = pos;
    while (end < lim && buf.get(end) != 0) {
      end++;
    }
    if (end >= lim) {
      throw corrupt("unterminated string at offset " + pos);
    }
    pos = end + 1;
  }

  /** Reads {@code n} bytes as UTF-8 without moving the cursor. */
  public String string(int offset, int n) throws CorruptBinaryException {
    if (offset < 0 || n < 0 || offset > buf.limit() - n) {
      throw corrupt("string of " + n + " bytes at " + offset + " outside " + buf.limit());
    }
    byte[] b = new byte[n];
    buf.get(offset, b);
    return new String(b, StandardCharsets.UTF_8);
  }

  public byte[] bytes(long n) throws CorruptBinaryException {
    need(n);
    byte[] b = new byte[(int) n];
    buf.get(pos, b);
    pos += (int) n;
    return b;
  }

  /** A view of {@code n} bytes at the cursor, little-endian, position 0; the cursor moves past them. */
  public ByteBuffer slice(long n) throws CorruptBinaryException {
    need(n);
    ByteBuffer s = buf.slice(pos, (int) n).order(ByteOrder.LITTLE_ENDIAN);
    pos += (int) n;
    return s;
  }

  /** The byte at absolute {@code offset}, or -1 past the end. Does not move the cursor. */
  public int peek(int offset) {
    return offset >= 0 && offset < buf.limit() ? buf.get(offset) & 0xff : -1;
  }

  /** True when the NUL-terminated string at {@code offset} equals {@code expected} (UTF-8 bytes). */
  public boolean cstringEquals(int offset, byte[] expected) {
    int lim = buf.limit();
    if (offset < 0 || offset > lim - expected.length - 1) {
      return false;
    }
    for (int i = 0; i < expected.length; i++) {
      if (buf.get(offset + i) != expected[i]) {
        return false;
      }
    }
    return buf.get(offset + expected.length) == 0;
  }

  /** Length of the NUL-terminated string at {@code offset}, or -1 when unterminated or out of range. */
  public int cstringLength(int offset) {
    int lim = buf.limit();
    if (offset < 0 || offset >= lim) {
      return -1;
    }
    int end = offset;
    while (end < lim && buf.get(end) != 0) {
      end++;
    }
    return end < lim ? end - offset : -1;
  }
}
