package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;

import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.elf.ByteReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the abbreviation tables of {@code .debug_abbrev} (DWARF 5 section 7.5.3), each once: units that
 * share a table share the parsed copy. The number of abbreviations parsed over all tables is bounded, so a
 * file with many units pointing at many tables cannot make the reader do unbounded work.
 */
final class Abbreviations {
  private static final long MAX_ABBREVS_PARSED = 1 << 18;

  private final ByteReader section;
  private final Map<Long, Table> cache = new HashMap<>();
  private long parsed;

  Abbreviations(ByteReader section) {
    this.section = section;
  }

  /** One abbreviation declaration. */
  static final class Abbrev {
    int tag;
    boolean children;
    /** Whether a top-level DIE with this abbreviation goes into the name index ({@link NameDirectory}). */
    boolean indexed;
    int[] attrs;
    /** DW_FORM_* of each attribute, as declared (possibly DW_FORM_indirect). */
    int[] forms;
    /**
     * How each attribute's value is encoded; null for DW_FORM_indirect (the form precedes the value) and
     * for a form {@link FormTable} does not know (an error only when a DIE uses it).
     */
    FormTable.Encoding[] encodings;
    /** DW_FORM_implicit_const values. */
    long[] implicit;
    /** {@link FormTable#skipPlan} for units of {@link #skipPlanShape} ({@link Unit#shape}); null when none. */
    int[] skipPlan;
    int skipPlanShape;
  }

  /** An abbreviation table: an array for dense codes (Go numbers them 1..n), a map otherwise. */
  static final class Table {
    private final Abbrev[] dense;
    private final Map<Integer, Abbrev> sparse;

    Table(Map<Integer, Abbrev> byCode, int maxCode) {
      if (maxCode <= 4 * byCode.size() + 64) {
        dense = new Abbrev[maxCode + 1];
        byCode.forEach((k, v) -> dense[k] = v);
        sparse = null;
      } else {
        dense = null;
        sparse = byCode;
      }
    }

    /** The abbreviation with {@code code}, or null. */
    Abbrev get(long code) {
      if (dense != null) {
        return code >= 0 && code < dense.length ? dense[(int) code] : null;
      }
      return code >= 0 && code <= Integer.MAX_VALUE ? sparse.get((int) code) : null;
    }
  }

  /**
   * The table at {@code off} in {@code .debug_abbrev}.
   *
   * @throws io.gospan.offsets.CorruptBinaryException truncated, a code out of range, or too many
   *     abbreviations over all tables
   */
  Table table(long off) throws GoBinaryException {
    Table cached = cache.get(off);
    if (cached != null) {
      return cached;
    }
    ByteReader r = section;
    r.seek(off);
    Map<Integer, Abbrev> byCode = new HashMap<>();
    int maxCode = 0;
    while (true) {
      long code = r.uleb();
      if (code == 0) {
        break;
      }
      if (code < 0 || code > Integer.MAX_VALUE) {
        throw r.corrupt("abbreviation code " + Long.toUnsignedString(code));
      }
      if (++parsed > MAX_ABBREVS_PARSED) {
        throw r.corrupt("more than " + MAX_ABBREVS_PARSED + " abbreviations parsed");
      }
      Abbrev a = new Abbrev();
      a.tag = (int) r.uleb();
      a.children = r.u8() != 0;
      List<long[]> specs = new ArrayList<>();
      while (true) {
        long attr = r.uleb();
        long form = r.uleb();
        if (attr == 0 && form == 0) {
          break;
        }
        long implicit = form == FORM_IMPLICIT_CONST ? r.sleb() : 0;
        specs.add(new long[] {attr, form, implicit});
      }
      a.attrs = new int[specs.size()];
      a.forms = new int[specs.size()];
      a.encodings = new FormTable.Encoding[specs.size()];
      a.implicit = new long[specs.size()];
      for (int i = 0; i < specs.size(); i++) {
        a.attrs[i] = (int) specs.get(i)[0];
        a.forms[i] = (int) specs.get(i)[1];
        a.encodings[i] = FormTable.encoding(a.forms[i]);
        a.implicit[i] = specs.get(i)[2];
      }
      a.indexed = isIndexedTag(a.tag);
      byCode.putIfAbsent((int) code, a);
      maxCode = Math.max(maxCode, (int) code);
    }
    Table table = new Table(byCode, maxCode);
    cache.put(off, table);
    return table;
  }

  private static boolean isIndexedTag(int tag) {
    switch (tag) {
      case TAG_SUBPROGRAM:
      case TAG_STRUCTURE_TYPE:
      case TAG_TYPEDEF:
      case TAG_BASE_TYPE:
      case TAG_POINTER_TYPE:
      case TAG_ARRAY_TYPE:
      case TAG_SUBROUTINE_TYPE:
      case TAG_CONST_TYPE:
      case TAG_VOLATILE_TYPE:
      case TAG_RESTRICT_TYPE:
      case 0x04: // enumeration_type
      case 0x17: // union_type
      case 0x3b: // unspecified_type
        return true;
      default:
        return false;
    }
  }
}
