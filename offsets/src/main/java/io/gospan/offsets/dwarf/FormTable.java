package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * How each attribute form (DW_FORM_*) is encoded in {@code .debug_info}: the one table both reading an
 * attribute value ({@link Encoding#read}) and stepping over it ({@link Encoding#skip}) use, so the two
 * cannot disagree on a form's length. Sources: DWARF 5 section 7.5.6 (forms, table 7.6), DWARF 2 section
 * 7.5.4 (DW_FORM_ref_addr has the size of an address), the GNU extensions as binutils' dwarf.c reads them.
 */
final class FormTable {
  private FormTable() {}

  /** The byte encoding of a value, and how the value read from it is interpreted. */
  enum Encoding {
    /** No bytes; the value is 1 (DW_FORM_flag_present). */
    PRESENT(0, false),
    /** No bytes; the value is in the abbreviation (DW_FORM_implicit_const). */
    IMPLICIT(0, false),
    U8(1, false),
    U16(2, false),
    U24(3, false),
    U32(4, false),
    U64(8, false),
    /** 16 bytes nothing here reads (DW_FORM_data16); the value is 0. */
    SKIPPED16(16, false),
    /** A reference of 1, 2, 4 or 8 bytes relative to its unit: the value is made absolute. */
    REF_U8(1, true),
    REF_U16(2, true),
    REF_U32(4, true),
    REF_U64(8, true),
    REF_ULEB(-1, true),
    /** An address of the unit's address size. */
    ADDRESS(-1, false),
    /** A section offset of the unit's offset size (4 in 32-bit DWARF, 8 in 64-bit DWARF). */
    OFFSET(-1, false),
    /** DW_FORM_ref_addr: an address's size in DWARF 2, an offset's size since DWARF 3. */
    REF_ADDR(-1, false),
    ULEB(-1, false),
    SLEB(-1, false),
    /** A NUL-terminated string in place: the value is the offset of its bytes, the length in {@link Die#lens}. */
    CSTRING(-1, false),
    /** A block after a 1, 2, 4-byte or LEB128 length: the value is the offset of its bytes, see CSTRING. */
    BLOCK1(-1, false),
    BLOCK2(-1, false),
    BLOCK4(-1, false),
    BLOCK_ULEB(-1, false);

    private final int fixedSize;
    private final boolean unitRelative;

    Encoding(int fixedSize, boolean unitRelative) {
      this.fixedSize = fixedSize;
      this.unitRelative = unitRelative;
    }

    /** Bytes of a fixed-size value in unit {@code u}; -1 when the length is in the data. */
    int size(Unit u) {
      switch (this) {
        case ADDRESS:
          return u.addrSize;
        case OFFSET:
          return u.offsetSize;
        case REF_ADDR:
          return u.version <= 2 ? u.addrSize : u.offsetSize;
        default:
          return fixedSize;
      }
    }

    /**
     * Reads the value at the cursor of {@code r} and moves past it; sets {@code d.lens[i]} for strings and
     * blocks.
     */
    long read(ByteReader r, Unit u, long implicit, Die d, int i) throws CorruptBinaryException {
      long v;
      switch (this) {
        case PRESENT:
          return 1;
        case IMPLICIT:
          return implicit;
        case SLEB:
          return r.sleb();
        case ULEB:
        case REF_ULEB:
          v = r.uleb();
          break;
        case CSTRING: {
          int start = r.position();
          r.skipCstring();
          d.lens[i] = r.position() - start - 1;
          return start;
        }
        case BLOCK1:
        case BLOCK2:
        case BLOCK4:
        case BLOCK_ULEB: {
          long len = blockLength(r);
          int start = r.position();
          r.skip(len);
          d.lens[i] = (int) len;
          return start;
        }
        default:
          v = fixed(r, size(u));
      }
      return unitRelative ? u.offset + v : v;
    }

    /** Moves the cursor of {@code r} past the value, the same number of bytes {@link #read} would. */
    void skip(ByteReader r, Unit u) throws CorruptBinaryException {
      FormTable.skip(r, skipStep(u));
    }

    /** How {@link FormTable#skip(ByteReader, int)} steps over the value: its size, or -1 - ordinal. */
    private int skipStep(Unit u) {
      int n = size(u);
      return n >= 0 ? n : -1 - ordinal();
    }

    private void skipVariable(ByteReader r) throws CorruptBinaryException {
      switch (this) {
        case ULEB:
        case SLEB: // a signed LEB128 ends where an unsigned one would
        case REF_ULEB:
          r.uleb();
          return;
        case CSTRING:
          r.skipCstring();
          return;
        default: // the blocks
          r.skip(blockLength(r));
      }
    }

    private long blockLength(ByteReader r) throws CorruptBinaryException {
      switch (this) {
        case BLOCK1:
          return r.u8();
        case BLOCK2:
          return r.u16();
        case BLOCK4:
          return r.u32();
        default:
          return r.uleb();
      }
    }

    private static long fixed(ByteReader r, int size) throws CorruptBinaryException {
      switch (size) {
        case 3:
          return r.u16() | ((long) r.u8() << 16);
        case 16:
          r.skip(16);
          return 0;
        default:
          return r.unsigned(size);
      }
    }
  }

  private static final Encoding[] ENCODINGS = Encoding.values();

  /** Steps over one value, or a run of fixed-size values: {@code step} bytes, or (negative) a variable one. */
  private static void skip(ByteReader r, int step) throws CorruptBinaryException {
    if (step >= 0) {
      r.skip(step);
    } else {
      ENCODINGS[-1 - step].skipVariable(r);
    }
  }

  /**
   * A plan to step over all values of an abbreviation in units like {@code u} at once: each run of
   * fixed-size values is merged into one byte count.
   *
   * @return null when a value's form is only known from the data (DW_FORM_indirect) or unknown
   */
  static int[] skipPlan(Encoding[] encodings, Unit u) {
    int[] plan = new int[encodings.length];
    int n = 0;
    boolean lastFixed = false;
    for (Encoding e : encodings) {
      if (e == null) {
        return null;
      }
      int step = e.skipStep(u);
      if (step >= 0 && lastFixed) {
        plan[n - 1] += step;
      } else {
        plan[n++] = step;
      }
      lastFixed = step >= 0;
    }
    return Arrays.copyOf(plan, n);
  }

  /** Steps over the values a {@link #skipPlan} describes. */
  static void skip(ByteReader r, int[] plan) throws CorruptBinaryException {
    for (int step : plan) {
      skip(r, step);
    }
  }

  /** Standard forms (0x01–0x2c) by number; the GNU ones in {@link #GNU}. */
  private static final Encoding[] STANDARD = new Encoding[FORM_ADDRX4 + 1];
  private static final Map<Integer, Encoding> GNU = new HashMap<>();

  static {
    put(Encoding.PRESENT, FORM_FLAG_PRESENT);
    put(Encoding.IMPLICIT, FORM_IMPLICIT_CONST);
    put(Encoding.U8, FORM_DATA1, FORM_FLAG, FORM_STRX1, FORM_ADDRX1);
    put(Encoding.U16, FORM_DATA2, FORM_STRX2, FORM_ADDRX2);
    put(Encoding.U24, FORM_STRX3, FORM_ADDRX3);
    put(Encoding.U32, FORM_DATA4, FORM_STRX4, FORM_ADDRX4, FORM_REF_SUP4);
    put(Encoding.U64, FORM_DATA8, FORM_REF_SIG8, FORM_REF_SUP8);
    put(Encoding.SKIPPED16, FORM_DATA16);
    put(Encoding.REF_U8, FORM_REF1);
    put(Encoding.REF_U16, FORM_REF2);
    put(Encoding.REF_U32, FORM_REF4);
    put(Encoding.REF_U64, FORM_REF8);
    put(Encoding.REF_ULEB, FORM_REF_UDATA);
    put(Encoding.ADDRESS, FORM_ADDR);
    put(Encoding.OFFSET, FORM_STRP, FORM_LINE_STRP, FORM_SEC_OFFSET, FORM_STRP_SUP, FORM_GNU_REF_ALT,
        FORM_GNU_STRP_ALT);
    put(Encoding.REF_ADDR, FORM_REF_ADDR);
    put(Encoding.ULEB, FORM_UDATA, FORM_STRX, FORM_ADDRX, FORM_LOCLISTX, FORM_RNGLISTX, FORM_GNU_ADDR_INDEX,
        FORM_GNU_STR_INDEX);
    put(Encoding.SLEB, FORM_SDATA);
    put(Encoding.CSTRING, FORM_STRING);
    put(Encoding.BLOCK1, FORM_BLOCK1);
    put(Encoding.BLOCK2, FORM_BLOCK2);
    put(Encoding.BLOCK4, FORM_BLOCK4);
    put(Encoding.BLOCK_ULEB, FORM_BLOCK, FORM_EXPRLOC);
  }

  private static void put(Encoding e, int... forms) {
    for (int f : forms) {
      if (f < STANDARD.length) {
        STANDARD[f] = e;
      } else {
        GNU.put(f, e);
      }
    }
  }

  /** The encoding of {@code form}; null for DW_FORM_indirect and for a form this reader does not know. */
  static Encoding encoding(int form) {
    if (form >= 0 && form < STANDARD.length) {
      return STANDARD[form];
    }
    return GNU.get(form);
  }

  /** Every form this reader knows (DW_FORM_indirect, which names another form, aside). */
  static int[] knownForms() {
    int[] out = new int[STANDARD.length + GNU.size()];
    int n = 0;
    for (int f = 0; f < STANDARD.length; f++) {
      if (STANDARD[f] != null) {
        out[n++] = f;
      }
    }
    for (int f : GNU.keySet().stream().sorted().mapToInt(Integer::intValue).toArray()) {
      out[n++] = f;
    }
    return Arrays.copyOf(out, n);
  }

  /**
   * Resolves DW_FORM_indirect: the form is then a ULEB128 before the value (at most four in a row).
   *
   * @return {@code form} itself when it is not indirect
   */
  static int direct(ByteReader r, int form, int dieOffset) throws CorruptBinaryException {
    int depth = 0;
    while (form == FORM_INDIRECT) {
      form = (int) r.uleb();
      if (++depth > 4) {
        throw r.corrupt("DW_FORM_indirect chain at " + dieOffset);
      }
    }
    return form;
  }

  /** The encoding of a direct {@code form}. */
  static Encoding require(int form, String where, int dieOffset) throws UnsupportedDwarfFormException {
    Encoding e = encoding(form);
    if (e == null) {
      throw new UnsupportedDwarfFormException(where + ": .debug_info: unknown attribute form 0x"
          + Integer.toHexString(form) + " in DIE at " + dieOffset);
    }
    return e;
  }
}
