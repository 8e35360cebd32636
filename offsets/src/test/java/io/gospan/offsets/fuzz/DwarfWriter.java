package io.gospan.offsets.fuzz;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes {@code .debug_info} and {@code .debug_abbrev} for seed inputs: abbreviation declarations, unit
 * headers (DWARF 4 or 5, 32-bit), DIEs whose attribute bytes the caller writes, labels and forward
 * references patched at the end (absolute {@code .debug_info} offsets, as Go's {@code DW_FORM_ref_addr}).
 * Layout from the DWARF 5 standard, sections 7.5.1 (unit headers) and 7.5.3 (abbreviations).
 */
final class DwarfWriter {
  final Bytes info = new Bytes();
  final Bytes abbrev = new Bytes();
  private final Map<String, Integer> labels = new HashMap<>();
  private final List<Object[]> refs = new ArrayList<>();
  private int unitStart = -1;

  /** Declares abbreviation {@code code}: {@code specs} are (attribute, form) pairs, or triples with an implicit constant. */
  DwarfWriter declare(int code, int tag, boolean children, long[]... specs) {
    abbrev.uleb(code).uleb(tag).u8(children ? 1 : 0);
    for (long[] s : specs) {
      abbrev.uleb(s[0]).uleb(s[1]);
      if (s.length > 2) {
        abbrev.sleb(s[2]);
      }
    }
    abbrev.u8(0).u8(0);
    return this;
  }

  static long[] a(long attr, long form) {
    return new long[] {attr, form};
  }

  static long[] implicit(long attr, long value) {
    return new long[] {attr, 0x21, value};
  }

  /** Ends the abbreviation table. */
  DwarfWriter endAbbrevs() {
    abbrev.u8(0);
    return this;
  }

  /** Starts a unit; its length is patched by {@link #endUnit}. */
  DwarfWriter unit(int version) {
    unitStart = info.size();
    info.u32(0).u16(version);
    if (version >= 5) {
      info.u8(1).u8(8).u32(0); // DW_UT_compile, address size, abbrev offset
    } else {
      info.u32(0).u8(8); // abbrev offset, address size
    }
    return this;
  }

  DwarfWriter endUnit() {
    info.putU32(unitStart, info.size() - unitStart - 4);
    unitStart = -1;
    return this;
  }

  /** Starts a DIE with abbreviation {@code code}. */
  DwarfWriter die(int code) {
    info.uleb(code);
    return this;
  }

  /** The end of a DIE's children. */
  DwarfWriter end() {
    info.u8(0);
    return this;
  }

  /** Names the current position. */
  DwarfWriter label(String name) {
    labels.put(name, info.size());
    return this;
  }

  int offset(String name) {
    Integer o = labels.get(name);
    if (o == null) {
      throw new IllegalStateException("no label " + name);
    }
    return o;
  }

  /** A 4-byte absolute reference to a label (DW_FORM_ref_addr, DWARF 3+ 32-bit). */
  DwarfWriter ref(String name) {
    refs.add(new Object[] {info.size(), name});
    info.u32(0);
    return this;
  }

  DwarfWriter string(String s) {
    info.cstring(s);
    return this;
  }

  /** Patches every reference. */
  DwarfWriter finish() {
    for (Object[] r : refs) {
      info.putU32((Integer) r[0], offset((String) r[1]));
    }
    refs.clear();
    return this;
  }
}
