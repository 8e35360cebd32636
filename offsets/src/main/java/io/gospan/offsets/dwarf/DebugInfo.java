package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.DwarfUnavailableException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.elf.ElfFile;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Decodes DIEs: reads the unit headers of {@code .debug_info} (DWARF 2–5, 32- and 64-bit), decodes a DIE at
 * an offset through its unit's abbreviations and the {@link FormTable}, and turns attribute values into
 * strings, addresses and references through the other sections ({@code .debug_str}, {@code .debug_line_str},
 * {@code .debug_str_offsets}, {@code .debug_addr}). Sections are inflated on first use; the first call that
 * needs units reads every unit header and unit DIE (a few hundred small reads for a Go binary).
 *
 * <p>Not thread-safe: one cursor over {@code .debug_info} is shared by every read; {@link DwarfData} calls
 * it under its lock.
 */
final class DebugInfo {
  private final ElfFile elf;
  private final String where;
  private final Map<String, Optional<ByteReader>> sections = new HashMap<>();
  private ByteReader info;
  private Abbreviations abbreviations;
  private List<Unit> units;
  private Map<String, Unit> unitsByName;

  DebugInfo(ElfFile elf) {
    this.elf = elf;
    this.where = elf.path().toString();
  }

  /** The file, for messages. */
  String where() {
    return where;
  }

  /** Every unit, in {@code .debug_info} order. */
  List<Unit> units() throws GoBinaryException {
    load();
    return units;
  }

  /** The first unit whose unit DIE has DW_AT_name {@code name} (for Go, a package path), or null. */
  Unit unitNamed(String name) throws GoBinaryException {
    load();
    return unitsByName.get(name);
  }

  /** {@code .debug_info}, positioned wherever the last read left it. */
  ByteReader info() throws GoBinaryException {
    load();
    return info;
  }

  private void load() throws GoBinaryException {
    if (units != null) {
      return;
    }
    ByteBuffer infoBuf = elf.debugSection("info").orElseThrow(
        () -> new DwarfUnavailableException(where + ": no .debug_info"));
    info = new ByteReader(infoBuf, where + ": .debug_info");
    abbreviations = new Abbreviations(section("abbrev").orElseThrow(
        () -> new CorruptBinaryException(where + ": .debug_info without .debug_abbrev")));
    List<Unit> us = new ArrayList<>();
    Map<String, Unit> byName = new HashMap<>();
    Die d = new Die();
    int pos = 0;
    while (pos < info.limit()) {
      Unit u = readUnitHeader(pos);
      pos = u.end;
      if (u.dieStart < u.end) {
        readDie(u.dieStart, u, d);
        if (d.tag != 0) {
          readUnitAttributes(u, d);
          int n = d.find(AT_NAME);
          if (n >= 0) {
            byName.putIfAbsent(string(d, n), u);
          }
        }
      }
      us.add(u);
    }
    unitsByName = byName;
    units = us;
  }

  private Unit readUnitHeader(int pos) throws GoBinaryException {
    info.seek(pos);
    Unit u = new Unit();
    u.offset = pos;
    long len = info.u32();
    u.offsetSize = 4;
    if (len == 0xffffffffL) {
      len = info.u64();
      u.offsetSize = 8;
    } else if (len >= 0xfffffff0L) {
      throw info.corrupt("reserved unit length 0x" + Long.toHexString(len) + " at " + pos);
    }
    if (len < 0 || len > info.limit() - info.position()) {
      throw info.corrupt("unit at " + pos + " of length " + Long.toUnsignedString(len) + " runs past the end");
    }
    u.end = (int) (info.position() + len);
    u.version = info.u16();
    long abbrevOff;
    if (u.version >= 2 && u.version <= 4) {
      abbrevOff = u.offsetSize == 8 ? info.u64() : info.u32();
      u.addrSize = info.u8();
    } else if (u.version == 5) {
      int unitType = info.u8();
      u.addrSize = info.u8();
      abbrevOff = u.offsetSize == 8 ? info.u64() : info.u32();
      if (unitType == 4 || unitType == 5) { // skeleton, split_compile: dwo_id
        info.u64();
      } else if (unitType == 2 || unitType == 6) { // type, split_type
        info.u64();
        info.skip(u.offsetSize);
      } else if (unitType != 1 && unitType != 3) {
        throw new UnsupportedDwarfFormException(where + ": .debug_info: unit type " + unitType + " at " + pos);
      }
    } else {
      throw new UnsupportedDwarfFormException(where + ": .debug_info: DWARF version " + u.version + " at " + pos);
    }
    if (u.addrSize != 8 && u.addrSize != 4) {
      throw info.corrupt("address size " + u.addrSize + " in unit at " + pos);
    }
    if (info.position() > u.end) {
      throw info.corrupt("unit header at " + pos + " longer than the unit");
    }
    u.shape = u.addrSize | u.offsetSize << 8 | (u.version <= 2 ? 1 << 16 : 0);
    u.dieStart = info.position();
    u.abbrevs = abbreviations.table(abbrevOff);
    return u;
  }

  private void readUnitAttributes(Unit u, Die d) throws GoBinaryException {
    int i = d.find(AT_ADDR_BASE);
    if (i >= 0) {
      u.addrBase = d.vals[i];
    }
    i = d.find(AT_STR_OFFSETS_BASE);
    u.strOffsetsBase = i >= 0 ? d.vals[i] : (u.version >= 5 ? 2L * u.offsetSize : 0);
    i = d.find(AT_LOCLISTS_BASE);
    if (i >= 0) {
      u.loclistsBase = d.vals[i];
      u.hasLoclistsBase = true;
    }
    i = d.find(AT_LOW_PC);
    if (i >= 0) {
      u.lowPc = address(d, i);
    }
  }

  private Unit unitAt(int offset) throws GoBinaryException {
    load();
    int lo = 0;
    int hi = units.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      Unit u = units.get(mid);
      if (offset < u.dieStart) {
        hi = mid - 1;
      } else if (offset >= u.end) {
        lo = mid + 1;
      } else {
        return u;
      }
    }
    throw info.corrupt("reference to offset " + offset + " outside every unit");
  }

  // ---------------------------------------------------------------------------------------------
  // DIEs

  /** The DIE at {@code offset}, in whichever unit holds it. */
  Die readDie(int offset) throws GoBinaryException {
    return readDie(offset, unitAt(offset));
  }

  /** The DIE at {@code offset} of unit {@code u}, as a fresh {@link Die}. */
  Die readDie(int offset, Unit u) throws GoBinaryException {
    Die d = new Die();
    readDie(offset, u, d);
    return d;
  }

  /** Decodes the DIE at {@code offset} of unit {@code u} into {@code d}; leaves the cursor at {@code d.next}. */
  void readDie(int offset, Unit u, Die d) throws GoBinaryException {
    if (offset < u.dieStart || offset >= u.end) {
      throw info.corrupt("DIE offset " + offset + " outside its unit");
    }
    ByteReader r = info;
    r.seek(offset);
    d.offset = offset;
    d.unit = u;
    long code = r.uleb();
    if (code == 0) {
      d.tag = 0;
      d.children = false;
      d.count = 0;
      d.next = r.position();
      return;
    }
    Abbreviations.Abbrev a = abbrev(u, code, offset);
    d.tag = a.tag;
    d.children = a.children;
    d.count = a.attrs.length;
    d.ensure(d.count);
    for (int i = 0; i < a.attrs.length; i++) {
      d.attrs[i] = a.attrs[i];
      d.lens[i] = 0;
      FormTable.Encoding e = a.encodings[i];
      int form = a.forms[i];
      if (e == null) {
        form = FormTable.direct(r, form, offset);
        e = FormTable.require(form, where, offset);
      }
      d.forms[i] = form;
      d.vals[i] = e.read(r, u, a.implicit[i], d, i);
      if (r.position() > u.end) {
        throw r.corrupt("DIE at " + offset + " runs past the end of its unit");
      }
    }
    d.next = r.position();
  }

  /** The abbreviation {@code code} of unit {@code u}, used by the DIE at {@code offset}. */
  Abbreviations.Abbrev abbrev(Unit u, long code, int offset) throws CorruptBinaryException {
    Abbreviations.Abbrev a = u.abbrevs.get(code);
    if (a == null) {
      throw info.corrupt("DIE at " + offset + " uses undefined abbreviation " + Long.toUnsignedString(code));
    }
    return a;
  }

  /**
   * Moves the cursor past the attribute values of the DIE at {@code offset}, whose abbreviation code has
   * just been read: what {@link #readDie} reads, without keeping it.
   */
  void skipAttributes(Abbreviations.Abbrev a, Unit u, int offset) throws GoBinaryException {
    ByteReader r = info;
    if (a.skipPlanShape != u.shape) {
      a.skipPlan = FormTable.skipPlan(a.encodings, u);
      a.skipPlanShape = u.shape;
    }
    if (a.skipPlan != null) {
      FormTable.skip(r, a.skipPlan);
    } else {
      for (int i = 0; i < a.forms.length; i++) {
        FormTable.Encoding e = a.encodings[i];
        if (e == null) {
          e = FormTable.require(FormTable.direct(r, a.forms[i], offset), where, offset);
        }
        e.skip(r, u);
      }
    }
    if (r.position() > u.end) {
      throw r.corrupt("DIE at " + offset + " runs past the end of its unit");
    }
  }

  /** Visits a DIE's children; see {@link #forEachChild}. */
  interface ChildVisitor {
    /** Returns true to stop. */
    boolean visit(Die child) throws GoBinaryException;
  }

  /**
   * Visits the direct children of {@code parent} whose tag is {@code tag}, in order, stepping over
   * the others and every grandchild; stops after a visit that returns true. Each child is a fresh
   * {@link Die}, so a visitor may keep it and read other DIEs.
   */
  void forEachChild(Die parent, int tag, ChildVisitor v) throws GoBinaryException {
    if (!parent.children) {
      return;
    }
    int pos = parent.next;
    int depth = 0;
    while (true) {
      Die c = readDie(pos, parent.unit);
      pos = c.next;
      if (c.tag == 0) {
        if (depth == 0) {
          return;
        }
        depth--;
        continue;
      }
      if (depth == 0 && c.tag == tag && v.visit(c)) {
        return;
      }
      if (c.children) {
        depth++;
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Attribute values

  /** A string attribute (DW_FORM_string, strp, line_strp, strx*). */
  String string(Die d, int i) throws GoBinaryException {
    int form = d.forms[i];
    long v = d.vals[i];
    if (form == FORM_STRING) {
      return info.string((int) v, d.lens[i]);
    }
    ByteReader str;
    long off;
    if (form == FORM_STRP) {
      str = requireSection("str", "DW_FORM_strp");
      off = v;
    } else if (form == FORM_LINE_STRP) {
      str = requireSection("line_str", "DW_FORM_line_strp");
      off = v;
    } else if (isStrx(form)) {
      ByteReader offsets = requireSection("str_offsets", "DW_FORM_strx");
      offsets.seek(checked(d.unit.strOffsetsBase + v * d.unit.offsetSize, offsets, "string offset index"));
      off = offsets.unsigned(d.unit.offsetSize);
      str = requireSection("str", "DW_FORM_strx");
    } else {
      throw new CorruptBinaryException(where + ": DIE at " + d.offset + ": a name with form 0x"
          + Integer.toHexString(form));
    }
    return str.seek(checked(off, str, "string")).cstring();
  }

  /** An address attribute (DW_FORM_addr or addrx*); {@code i} -1 is an error naming DW_AT_low_pc. */
  long address(Die d, int i) throws GoBinaryException {
    if (i < 0) {
      throw new CorruptBinaryException(where + ": DIE at " + d.offset + " has no DW_AT_low_pc");
    }
    int form = d.forms[i];
    if (form == FORM_ADDR) {
      return d.vals[i];
    }
    if (isAddrx(form)) {
      return addrx(d.unit, d.vals[i]);
    }
    throw new CorruptBinaryException(where + ": DIE at " + d.offset + ": address with form 0x"
        + Integer.toHexString(form));
  }

  /** Entry {@code index} of the unit's {@code .debug_addr} table. */
  long addrx(Unit u, long index) throws GoBinaryException {
    ByteReader addr = requireSection("addr", "DW_FORM_addrx");
    long off = u.addrBase + index * u.addrSize;
    if (index < 0 || off < 0 || off > addr.limit() - u.addrSize) {
      throw addr.corrupt("address index " + Long.toUnsignedString(index) + " outside the table");
    }
    return addr.seek(off).unsigned(u.addrSize);
  }

  /** A reference attribute as an absolute {@code .debug_info} offset. */
  int reference(Die d, int i) throws CorruptBinaryException {
    long v = d.vals[i];
    if (v < 0 || v >= info.limit()) {
      throw info.corrupt("reference 0x" + Long.toHexString(v) + " from DIE at " + d.offset + " outside .debug_info");
    }
    return (int) v;
  }

  /** The bytes of a block attribute (an expression), as a reader of their own. */
  ByteReader block(Die d, int i, String what) throws CorruptBinaryException {
    return new ByteReader(info.seek(d.vals[i]).slice(d.lens[i]), where + ": " + what);
  }

  /** {@code off} when it lies inside {@code r}. */
  static long checked(long off, ByteReader r, String what) throws CorruptBinaryException {
    if (off < 0 || off >= r.limit()) {
      throw r.corrupt(what + " at " + Long.toUnsignedString(off) + " outside " + r.limit() + " bytes");
    }
    return off;
  }

  // ---------------------------------------------------------------------------------------------
  // Sections

  private Optional<ByteReader> section(String base) throws CorruptBinaryException {
    Optional<ByteReader> r = sections.get(base);
    if (r == null) {
      r = elf.debugSection(base).map(b -> new ByteReader(b, where + ": .debug_" + base));
      sections.put(base, r);
    }
    return r;
  }

  /** {@code .debug_<base>} (or its compressed forms), which {@code why} needs. */
  ByteReader requireSection(String base, String why) throws GoBinaryException {
    return section(base).orElseThrow(() -> new CorruptBinaryException(where + ": " + why
        + " needs .debug_" + base + ", which is absent"));
  }
}
