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
import java.util.OptionalLong;

/**
 * Lazy DWARF 2–5 reader for the questions gospan's probes ask of a Go binary: struct layouts, type sizes,
 * parameter locations at function entry, and compilation unit address ranges. Handles DWARF 4 (Go before 1.25: {@code .debug_loc},
 * {@code .debug_ranges}) and DWARF 5 (Go 1.25+: {@code .debug_loclists}, {@code .debug_addr},
 * {@code .debug_str_offsets}, {@code .debug_line_str}, {@code .debug_rnglists}), sections stored plain,
 * SHF_COMPRESSED (Go 1.19+) or as {@code .zdebug_*} (before Go 1.19).
 *
 * <p>Nothing is materialised eagerly: the first query inflates {@code .debug_info} and {@code .debug_abbrev}
 * and reads the unit headers; DIEs are then scanned one unit at a time, only where a name can be (Go writes a
 * unit per package holding its functions, and all types in the {@code runtime} unit; other units are
 * scanned only when the name is not there). A scan keeps just a 64-bit hash of each top-level subprogram
 * and type name → DIE offset; answers decode only the DIEs they need. Other sections are inflated on first
 * use.
 *
 * <p>Sources: DWARF 5 standard (sections 7.5 unit headers, abbreviations and forms; 2.6 location
 * descriptions; 7.7.3/7.29 location lists); Go's writer src/cmd/internal/dwarf/dwarf.go and
 * src/cmd/compile/internal/ssa/debug.go (go1.26); Go's reader src/debug/dwarf (go1.26) for type sizes.
 *
 * <p>Thread-safe: every query holds the instance lock (the section cursors are shared).
 */
public final class DwarfData {
  private static final int MAX_TYPE_DEPTH = 64;
  private static final int MAX_PATH_SEGMENTS = 32;

  private final ElfFile elf;
  private final String where;
  private ByteReader info;
  private ByteReader abbrevSection;
  private final Map<String, Optional<ByteReader>> sections = new HashMap<>();
  private final Map<Long, AbbrevTable> abbrevCache = new HashMap<>();
  /** Abbreviations parsed so far, over all tables: bounds the work a file with many units can cause. */
  private long abbrevsParsed;
  private static final long MAX_ABBREVS_PARSED = 1 << 18;
  private List<Unit> units;
  private Map<String, Unit> unitsByName;
  private boolean allScanned;
  private NameIndex subprograms;
  private NameIndex types;
  private NameIndex structs;

  private DwarfData(ElfFile elf) {
    this.elf = elf;
    this.where = elf.path().toString();
  }

  /**
   * Opens the DWARF of {@code elf} without reading it.
   *
   * @throws DwarfUnavailableException there is no {@code .debug_info} / {@code .zdebug_info} (stripped with
   *     {@code -s -w} or built with {@code -ldflags=-w})
   */
  public static DwarfData open(ElfFile elf) throws DwarfUnavailableException {
    if (elf.section(".debug_info").isEmpty() && elf.section(".zdebug_info").isEmpty()) {
      throw new DwarfUnavailableException(elf.path() + ": no DWARF (.debug_info absent; stripped or built with"
          + " -ldflags=-w)");
    }
    return new DwarfData(elf);
  }

  // ---------------------------------------------------------------------------------------------
  // Public queries

  /**
   * The struct type named {@code typeName} (Go name with full package path), with every member.
   *
   * @return empty when DWARF has no such struct
   * @throws CorruptBinaryException the DWARF is truncated or inconsistent
   * @throws UnsupportedDwarfFormException an unknown attribute form
   */
  public synchronized Optional<StructType> struct(String typeName) throws GoBinaryException {
    int off = find(Names.STRUCTS, typeName, TYPES_UNIT);
    if (off < 0) {
      return Optional.empty();
    }
    return Optional.of(readStruct(off, typeName));
  }

  /**
   * Byte offset of a member, following a dotted path through nested struct values, e.g.
   * {@code ("google.golang.org/grpc/internal/transport.loopyWriter", "framer")} or
   * {@code ("net.TCPConn", "conn.fd")} (through the embedded {@code conn}). Every segment but the last must be
   * a struct held by value (typedefs are followed, pointers are not: that would be another object).
   *
   * @return empty when the type or a member is absent, or a segment is not a struct value
   */
  public synchronized OptionalLong memberOffset(String typeName, String memberPath) throws GoBinaryException {
    int off = find(Names.STRUCTS, typeName, TYPES_UNIT);
    if (off < 0) {
      return OptionalLong.empty();
    }
    String[] segments = memberPath.split("\\.", -1);
    if (segments.length > MAX_PATH_SEGMENTS) {
      return OptionalLong.empty();
    }
    long total = 0;
    int structOff = off;
    for (int i = 0; i < segments.length; i++) {
      MemberRef m = findMember(structOff, segments[i]);
      if (m == null) {
        return OptionalLong.empty();
      }
      total += m.offset;
      if (i < segments.length - 1) {
        int t = stripTypedefs(m.typeOffset);
        if (t < 0 || readDie(t).tag != TAG_STRUCTURE_TYPE) {
          return OptionalLong.empty();
        }
        structOff = t;
      }
    }
    return OptionalLong.of(total);
  }

  /**
   * Byte size of the type named {@code typeName} (any DWARF type DIE: struct, typedef, base type, pointer…),
   * computed as Go's debug/dwarf does: typedefs take their target's size, arrays count × element size,
   * pointers without DW_AT_byte_size the address size.
   *
   * @return empty when no type has that name or its size is unknown
   */
  public synchronized OptionalLong typeSize(String typeName) throws GoBinaryException {
    int off = find(Names.TYPES, typeName, TYPES_UNIT);
    if (off < 0) {
      return OptionalLong.empty();
    }
    long size = sizeOf(off, 0);
    return size < 0 ? OptionalLong.empty() : OptionalLong.of(size);
  }

  /**
   * The parameters of function {@code functionName} (Go symbol name, e.g.
   * {@code google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader}) and where each is at the
   * function's entry pc (DW_AT_low_pc of its out-of-line DW_TAG_subprogram).
   *
   * @return empty when DWARF has no out-of-line subprogram of that name
   * @throws UnsupportedDwarfFormException a location uses an operation Go does not emit
   */
  public synchronized Optional<FunctionParameters> parameters(String functionName) throws GoBinaryException {
    int off = find(Names.SUBPROGRAMS, functionName, packageOf(functionName));
    if (off < 0) {
      return Optional.empty();
    }
    Die sub = readDie(off);
    long lowPc = address(sub, sub.find(AT_LOW_PC));
    List<Parameter> params = new ArrayList<>();
    forEachChild(sub, TAG_FORMAL_PARAMETER, c -> {
      params.add(parameter(c, lowPc));
      return false;
    });
    boolean sawRegister = false;
    boolean sawStack = false;
    for (Parameter p : params) {
      for (Piece piece : p.pieces()) {
        sawRegister |= piece.kind() == Piece.Kind.REGISTER;
        sawStack |= piece.kind() == Piece.Kind.STACK;
      }
    }
    FunctionParameters.Abi abi = sawRegister ? FunctionParameters.Abi.REGISTER
        : sawStack ? FunctionParameters.Abi.STACK : FunctionParameters.Abi.NONE;
    return Optional.of(new FunctionParameters(functionName, lowPc, List.copyOf(params), abi));
  }

  /**
   * Where each input parameter of {@code functionName} is at its entry pc according to Go's calling
   * convention ({@link GoRegisterAbi}), computed from the parameter types in DWARF rather than read from
   * DW_AT_location.
   *
   * <p>Why: Go 1.17's location lists put some register arguments in their spill slots at the entry pc
   * (e.g. the receiver of {@code (*loopyWriter).writeHeader} at SP+8 instead of RAX); Go 1.16's give a
   * slice argument no location at all. For Go 1.19+ both methods agree on every probed function.
   *
   * @param registerAbi whether the binary uses ABIInternal (see GoBinary#usesRegisterAbi)
   * @return results are left out; empty when DWARF has no out-of-line subprogram of that name
   * @throws UnsupportedDwarfFormException a parameter type has no Go kind the convention covers
   */
  public synchronized Optional<FunctionParameters> parametersByAbi(String functionName, boolean registerAbi)
      throws GoBinaryException {
    int off = find(Names.SUBPROGRAMS, functionName, packageOf(functionName));
    if (off < 0) {
      return Optional.empty();
    }
    Die sub = readDie(off);
    long lowPc = address(sub, sub.find(AT_LOW_PC));
    List<Parameter> params = new ArrayList<>();
    GoRegisterAbi abi = new GoRegisterAbi(abiTypes, where, registerAbi);
    forEachChild(sub, TAG_FORMAL_PARAMETER, c -> {
      Die attrs = c;
      int origin = c.find(AT_ABSTRACT_ORIGIN);
      if (origin >= 0) {
        attrs = readDie(reference(c, origin));
      }
      int vp = attrs.find(AT_VARIABLE_PARAMETER);
      int t = attrs.find(AT_TYPE);
      if ((vp < 0 || attrs.vals[vp] == 0) && t >= 0) {
        int n = attrs.find(AT_NAME);
        int typeOff = reference(attrs, t);
        long size = sizeOf(typeOff, 0);
        List<Piece> pieces = abi.next(typeOff, size);
        params.add(new Parameter(n >= 0 ? string(attrs, n) : "", typeName(typeOff), size, false,
            Parameter.LocationSource.ABI, pieces));
      }
      return false;
    });
    return Optional.of(new FunctionParameters(functionName, lowPc, List.copyOf(params),
        registerAbi ? FunctionParameters.Abi.REGISTER : FunctionParameters.Abi.STACK));
  }

  /** The type facts {@link GoRegisterAbi} needs, read from this binary's type DIEs. */
  private final GoRegisterAbi.Types abiTypes = new GoRegisterAbi.Types() {
    @Override
    public int[] goKind(int typeOff) throws GoBinaryException {
      for (int i = 0; i < MAX_TYPE_DEPTH; i++) {
        Die d = readDie(typeOff);
        int k = d.find(AT_GO_KIND);
        if (k >= 0) {
          return new int[] {(int) d.vals[k], typeOff};
        }
        int t = d.find(AT_TYPE);
        if (d.tag != TAG_TYPEDEF || t < 0) {
          throw new UnsupportedDwarfFormException(where + ": type DIE at " + typeOff + " has no DW_AT_go_kind");
        }
        typeOff = reference(d, t);
      }
      throw new CorruptBinaryException(where + ": typedef chain too deep at " + typeOff);
    }

    @Override
    public long size(int typeOff) throws GoBinaryException {
      return sizeOf(typeOff, 0);
    }

    @Override
    public long arrayCount(int arrayOff) throws GoBinaryException {
      return DwarfData.this.arrayCount(readDie(arrayOff));
    }

    @Override
    public int arrayElement(int arrayOff) throws GoBinaryException {
      Die a = readDie(arrayOff);
      int t = a.find(AT_TYPE);
      return t < 0 ? -1 : reference(a, t);
    }

    @Override
    public List<Integer> fieldTypes(int structOff) throws GoBinaryException {
      List<Integer> fields = new ArrayList<>();
      forEachMember(readDie(structOff), (c, m) -> {
        fields.add(m.typeOffset);
        return false;
      });
      return fields;
    }
  };

  /**
   * Every compilation unit with its address ranges, in {@code .debug_info} order.
   *
   * @throws CorruptBinaryException a range list is truncated or points outside its section
   */
  public synchronized List<CompileUnit> compileUnits() throws GoBinaryException {
    directory();
    List<CompileUnit> out = new ArrayList<>(units.size());
    for (Unit u : units) {
      Die d = readDie(u.dieStart, u);
      int n = d.find(AT_NAME);
      out.add(new CompileUnit(n >= 0 ? string(d, n) : "", List.copyOf(ranges(d))));
    }
    return List.copyOf(out);
  }

  /** The compilation unit whose ranges contain {@code pc}. */
  public synchronized Optional<CompileUnit> compileUnitAt(long pc) throws GoBinaryException {
    for (CompileUnit cu : compileUnits()) {
      if (cu.contains(pc)) {
        return Optional.of(cu);
      }
    }
    return Optional.empty();
  }

  /** DW_AT_low_pc/DW_AT_high_pc and DW_AT_ranges of a DIE, as Go's debug/dwarf Data.Ranges (go1.26). */
  private List<CompileUnit.Range> ranges(Die d) throws GoBinaryException {
    List<CompileUnit.Range> out = new ArrayList<>();
    Unit u = d.unit;
    int lowIdx = d.find(AT_LOW_PC);
    int highIdx = d.find(AT_HIGH_PC);
    if (lowIdx >= 0 && highIdx >= 0) {
      long low = address(d, lowIdx);
      int form = d.forms[highIdx];
      long high = isConstant(form) ? low + d.vals[highIdx] : address(d, highIdx);
      out.add(new CompileUnit.Range(low, high));
    }
    int rangesIdx = d.find(AT_RANGES);
    if (rangesIdx < 0) {
      return out;
    }
    int form = d.forms[rangesIdx];
    long base = u.lowPc;
    if (u.version >= 5) {
      ByteReader r = requireSection("rnglists", "a DWARF 5 range list");
      long off = d.vals[rangesIdx];
      if (form == FORM_RNGLISTX) {
        int b = d.find(AT_RNGLISTS_BASE);
        long rnglistsBase = b >= 0 ? d.vals[b] : 0;
        r.seek(checked(rnglistsBase + off * u.offsetSize, r, "range list index"));
        off = rnglistsBase + r.unsigned(u.offsetSize);
      }
      r.seek(checked(off, r, "range list"));
      while (true) {
        int kind = r.u8();
        switch (kind) {
          case 0x00: // DW_RLE_end_of_list
            return out;
          case 0x01: // DW_RLE_base_addressx
            base = addrx(u, r.uleb());
            break;
          case 0x02: { // DW_RLE_startx_endx
            long lo = addrx(u, r.uleb());
            out.add(new CompileUnit.Range(lo, addrx(u, r.uleb())));
            break;
          }
          case 0x03: { // DW_RLE_startx_length
            long lo = addrx(u, r.uleb());
            out.add(new CompileUnit.Range(lo, lo + r.uleb()));
            break;
          }
          case 0x04: { // DW_RLE_offset_pair
            long lo = base + r.uleb();
            out.add(new CompileUnit.Range(lo, base + r.uleb()));
            break;
          }
          case 0x05: // DW_RLE_base_address
            base = r.unsigned(u.addrSize);
            break;
          case 0x06: { // DW_RLE_start_end
            long lo = r.unsigned(u.addrSize);
            out.add(new CompileUnit.Range(lo, r.unsigned(u.addrSize)));
            break;
          }
          case 0x07: { // DW_RLE_start_length
            long lo = r.unsigned(u.addrSize);
            out.add(new CompileUnit.Range(lo, lo + r.uleb()));
            break;
          }
          default:
            throw new UnsupportedDwarfFormException(where + ": .debug_rnglists: unknown entry kind 0x"
                + Integer.toHexString(kind) + " at " + (r.position() - 1));
        }
      }
    }
    ByteReader r = requireSection("ranges", "a DWARF 4 range list");
    r.seek(checked(d.vals[rangesIdx], r, "range list"));
    long maxAddr = u.addrSize == 8 ? -1L : 0xffffffffL;
    while (r.hasRemaining()) {
      long lo = r.unsigned(u.addrSize);
      long hi = r.unsigned(u.addrSize);
      if (lo == 0 && hi == 0) {
        break;
      }
      if (lo == maxAddr) {
        base = hi;
      } else {
        out.add(new CompileUnit.Range(base + lo, base + hi));
      }
    }
    return out;
  }

  /** DWARF version of the first compilation unit (4 for Go before 1.25, 5 since). */
  public synchronized int version() throws GoBinaryException {
    directory();
    return units.isEmpty() ? 0 : units.get(0).version;
  }

  // ---------------------------------------------------------------------------------------------
  // Index

  /**
   * Reads every unit header and unit DIE (name, base addresses) — a few hundred small reads — and prepares
   * the empty name indexes. DIEs inside units are scanned per unit, on demand ({@link #scanUnit}).
   */
  private synchronized void directory() throws GoBinaryException {
    if (units != null) {
      return;
    }
    ByteBuffer infoBuf = elf.debugSection("info").orElseThrow(
        () -> new DwarfUnavailableException(where + ": no .debug_info"));
    info = new ByteReader(infoBuf, where + ": .debug_info");
    abbrevSection = section("abbrev").orElseThrow(
        () -> new CorruptBinaryException(where + ": .debug_info without .debug_abbrev"));
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
    subprograms = new NameIndex();
    types = new NameIndex();
    structs = new NameIndex();
    unitsByName = byName;
    units = us;
  }

  /**
   * Indexes the top-level subprograms and types of one unit. Go writes one unit per package, holding that
   * package's functions, and every type in the unit named {@code runtime}; a lookup scans that unit first
   * and the rest only when the name is not there.
   */
  private void scanUnit(Unit u) throws GoBinaryException {
    if (u.scanned) {
      return;
    }
    u.scanned = true;
    IntList concreteByOrigin = new IntList();
    Die d = new Die();
    int diePos = u.dieStart;
    int depth = 0;
    boolean first = true;
    info.seek(diePos);
    while (diePos < u.end) {
      long code = info.uleb(); // the cursor is at diePos: after the unit header or the previous DIE
      if (code == 0) {
        diePos = info.position();
        if (--depth <= 0) {
          break;
        }
        continue;
      }
      Abbrev a = abbrev(u, code, diePos);
      if (!first && depth == 1 && a.indexed) {
        readDie(diePos, u, d);
        indexDie(d, subprograms, types, structs, concreteByOrigin);
        diePos = d.next;
        info.seek(diePos); // indexing may have read other DIEs or sections through the same cursor
      } else {
        skipAttributes(a, u, diePos);
        diePos = info.position();
      }
      first = false;
      if (a.children) {
        depth++;
      } else if (depth == 0) {
        break; // a childless unit DIE
      }
    }
    // Out-of-line copies of inlined functions name themselves through DW_AT_abstract_origin.
    for (int k = 0; k < concreteByOrigin.size(); k += 2) {
      Die origin = readDie(concreteByOrigin.get(k));
      int n = origin.find(AT_NAME);
      if (n >= 0) {
        subprograms.putIfAbsent(nameHash(origin, n), concreteByOrigin.get(k + 1));
      }
    }
  }

  /**
   * The DIE named {@code name} in {@code index}: looked for in the unit {@code unitName} first, then in
   * every unit in {@code .debug_info} order; -1 when absent.
   */
  private int find(Names which, String name, String unitName) throws GoBinaryException {
    directory();
    NameIndex index = which == Names.SUBPROGRAMS ? subprograms : which == Names.TYPES ? types : structs;
    Unit u = unitName == null ? null : unitsByName.get(unitName);
    if (u != null) {
      scanUnit(u);
      int off = lookup(index, name);
      if (off >= 0) {
        return off;
      }
    }
    if (!allScanned) {
      for (Unit each : units) {
        scanUnit(each);
      }
      allScanned = true;
    }
    return lookup(index, name);
  }

  /** The name indexes. */
  private enum Names {
    SUBPROGRAMS,
    TYPES,
    STRUCTS
  }

  /** Go puts every type DIE in this unit (cmd/link, go1.16–go1.26). */
  private static final String TYPES_UNIT = "runtime";

  /**
   * The package path of a Go symbol name: up to the first dot after the last slash (slashes inside generic
   * brackets do not count), e.g. {@code google.golang.org/grpc/internal/transport} for
   * {@code google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader}.
   */
  static String packageOf(String symbol) {
    int bracket = symbol.indexOf('[');
    String head = bracket < 0 ? symbol : symbol.substring(0, bracket);
    int slash = head.lastIndexOf('/');
    int dot = head.indexOf('.', slash + 1);
    return dot < 0 ? head : head.substring(0, dot);
  }

  private void indexDie(Die d, NameIndex subs, NameIndex tys, NameIndex sts, IntList concreteByOrigin)
      throws GoBinaryException {
    int nameIdx = d.find(AT_NAME);
    if (d.tag == TAG_SUBPROGRAM) {
      boolean hasPc = d.find(AT_LOW_PC) >= 0;
      if (nameIdx >= 0) {
        if (hasPc) {
          subs.putIfAbsent(nameHash(d, nameIdx), d.offset);
        }
      } else if (hasPc) {
        int origin = d.find(AT_ABSTRACT_ORIGIN);
        if (origin >= 0) {
          concreteByOrigin.add(reference(d, origin));
          concreteByOrigin.add(d.offset);
        }
      }
      return;
    }
    if (nameIdx < 0) {
      return;
    }
    long h = nameHash(d, nameIdx);
    tys.putIfAbsent(h, d.offset);
    if (d.tag == TAG_STRUCTURE_TYPE) {
      int decl = d.find(AT_DECLARATION);
      if (decl < 0 || d.vals[decl] == 0) {
        sts.putIfAbsent(h, d.offset);
      }
    }
  }

  /** FNV-1a of a name attribute; inline strings are hashed in place. */
  private long nameHash(Die d, int i) throws GoBinaryException {
    if (d.forms[i] != FORM_STRING) {
      return NameIndex.hash(string(d, i));
    }
    long h = NameIndex.FNV_OFFSET;
    int start = (int) d.vals[i];
    int end = start + d.lens[i];
    for (int k = start; k < end; k++) {
      h = (h ^ info.peek(k)) * NameIndex.FNV_PRIME;
    }
    return NameIndex.fix(h);
  }

  /** The DIE indexed under {@code name}, verified against its real name; -1 when absent. */
  private int lookup(NameIndex index, String name) throws GoBinaryException {
    int off = index.get(NameIndex.hash(name));
    if (off < 0) {
      return -1;
    }
    Die d = readDie(off);
    int n = d.find(AT_NAME);
    if (n < 0) {
      int origin = d.find(AT_ABSTRACT_ORIGIN);
      if (origin < 0) {
        return -1;
      }
      d = readDie(reference(d, origin));
      n = d.find(AT_NAME);
    }
    return n >= 0 && string(d, n).equals(name) ? off : -1; // a 64-bit hash collision reads as absent
  }

  /** A growable int array. */
  private static final class IntList {
    private int[] a = new int[64];
    private int n;

    void add(int v) {
      if (n == a.length) {
        a = java.util.Arrays.copyOf(a, n * 2);
      }
      a[n++] = v;
    }

    int get(int i) {
      return a[i];
    }

    int size() {
      return n;
    }
  }

  private Optional<ByteReader> section(String base) throws CorruptBinaryException {
    Optional<ByteReader> r = sections.get(base);
    if (r == null) {
      r = elf.debugSection(base).map(b -> new ByteReader(b, where + ": .debug_" + base));
      sections.put(base, r);
    }
    return r;
  }

  private synchronized ByteReader requireSection(String base, String why) throws GoBinaryException {
    return section(base).orElseThrow(() -> new CorruptBinaryException(where + ": " + why
        + " needs .debug_" + base + ", which is absent"));
  }

  // ---------------------------------------------------------------------------------------------
  // Units, abbreviations, DIEs

  /** A unit header (DWARF 5 section 7.5.1) and the base attributes of its unit DIE. */
  static final class Unit {
    int offset;
    int version;
    int addrSize;
    int offsetSize;
    int dieStart;
    int end;
    AbbrevTable abbrevs;
    long lowPc;
    long addrBase;
    long strOffsetsBase;
    long loclistsBase;
    boolean hasLoclistsBase;
    boolean scanned;
  }

  /** One abbreviation declaration (DWARF 5 section 7.5.3). */
  static final class Abbrev {
    int tag;
    boolean children;
    /** Whether a top-level DIE with this abbreviation goes into the name index. */
    boolean indexed;
    int[] attrs;
    int[] forms;
    long[] implicit;
  }

  /**
   * A decoded DIE. Attribute values: constants, addresses, indices and section offsets as read; references
   * as absolute {@code .debug_info} offsets; strings ({@code DW_FORM_string}) and blocks as the offset of
   * their bytes in {@code .debug_info} with the length in {@code lens}.
   */
  static final class Die {
    int offset;
    Unit unit;
    int tag;
    boolean children;
    int count;
    int[] attrs = new int[16];
    int[] forms = new int[16];
    long[] vals = new long[16];
    int[] lens = new int[16];
    int next;

    int find(int attr) {
      for (int i = 0; i < count; i++) {
        if (attrs[i] == attr) {
          return i;
        }
      }
      return -1;
    }

    void ensure(int n) {
      if (attrs.length < n) {
        attrs = java.util.Arrays.copyOf(attrs, n);
        forms = java.util.Arrays.copyOf(forms, n);
        vals = java.util.Arrays.copyOf(vals, n);
        lens = java.util.Arrays.copyOf(lens, n);
      }
    }
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
    u.dieStart = info.position();
    u.abbrevs = abbrevs(abbrevOff);
    return u;
  }

  /** An abbreviation table: an array for dense codes (Go numbers them 1..n), a map otherwise. */
  static final class AbbrevTable {
    final Abbrev[] dense;
    final Map<Integer, Abbrev> sparse;

    AbbrevTable(Map<Integer, Abbrev> byCode, int maxCode) {
      if (maxCode <= 4 * byCode.size() + 64) {
        dense = new Abbrev[maxCode + 1];
        byCode.forEach((k, v) -> dense[k] = v);
        sparse = null;
      } else {
        dense = null;
        sparse = byCode;
      }
    }

    Abbrev get(long code) {
      if (dense != null) {
        return code >= 0 && code < dense.length ? dense[(int) code] : null;
      }
      return code >= 0 && code <= Integer.MAX_VALUE ? sparse.get((int) code) : null;
    }
  }

  private AbbrevTable abbrevs(long off) throws GoBinaryException {
    AbbrevTable cached = abbrevCache.get(off);
    if (cached != null) {
      return cached;
    }
    ByteReader r = abbrevSection;
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
      if (++abbrevsParsed > MAX_ABBREVS_PARSED) {
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
      a.implicit = new long[specs.size()];
      for (int i = 0; i < specs.size(); i++) {
        a.attrs[i] = (int) specs.get(i)[0];
        a.forms[i] = (int) specs.get(i)[1];
        a.implicit[i] = specs.get(i)[2];
      }
      a.indexed = isIndexedTag(a.tag);
      byCode.putIfAbsent((int) code, a);
      maxCode = Math.max(maxCode, (int) code);
    }
    AbbrevTable table = new AbbrevTable(byCode, maxCode);
    abbrevCache.put(off, table);
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

  private Abbrev abbrev(Unit u, long code, int offset) throws CorruptBinaryException {
    Abbrev a = u.abbrevs.get(code);
    if (a == null) {
      throw info.corrupt("DIE at " + offset + " uses undefined abbreviation " + Long.toUnsignedString(code));
    }
    return a;
  }

  /** Moves {@link #info} past the attribute values of a DIE whose code has just been read. */
  private void skipAttributes(Abbrev a, Unit u, int offset) throws GoBinaryException {
    ByteReader r = info;
    for (int i = 0; i < a.forms.length; i++) {
      int form = a.forms[i];
      int depth = 0;
      while (form == FORM_INDIRECT) {
        form = (int) r.uleb();
        if (++depth > 4) {
          throw r.corrupt("DW_FORM_indirect chain at " + offset);
        }
      }
      switch (form) {
        case FORM_FLAG_PRESENT:
        case FORM_IMPLICIT_CONST:
          break;
        case FORM_DATA1:
        case FORM_FLAG:
        case FORM_REF1:
        case FORM_STRX1:
        case FORM_ADDRX1:
          r.skip(1);
          break;
        case FORM_DATA2:
        case FORM_REF2:
        case FORM_STRX2:
        case FORM_ADDRX2:
          r.skip(2);
          break;
        case FORM_STRX3:
        case FORM_ADDRX3:
          r.skip(3);
          break;
        case FORM_DATA4:
        case FORM_REF4:
        case FORM_STRX4:
        case FORM_ADDRX4:
        case FORM_REF_SUP4:
          r.skip(4);
          break;
        case FORM_DATA8:
        case FORM_REF8:
        case FORM_REF_SIG8:
        case FORM_REF_SUP8:
          r.skip(8);
          break;
        case FORM_DATA16:
          r.skip(16);
          break;
        case FORM_ADDR:
          r.skip(u.addrSize);
          break;
        case FORM_STRP:
        case FORM_LINE_STRP:
        case FORM_SEC_OFFSET:
        case FORM_STRP_SUP:
        case FORM_GNU_REF_ALT:
        case FORM_GNU_STRP_ALT:
          r.skip(u.offsetSize);
          break;
        case FORM_REF_ADDR:
          r.skip(u.version <= 2 ? u.addrSize : u.offsetSize);
          break;
        case FORM_SDATA:
        case FORM_UDATA:
        case FORM_REF_UDATA:
        case FORM_STRX:
        case FORM_ADDRX:
        case FORM_LOCLISTX:
        case FORM_RNGLISTX:
        case FORM_GNU_ADDR_INDEX:
        case FORM_GNU_STR_INDEX:
          r.uleb();
          break;
        case FORM_STRING:
          r.skipCstring();
          break;
        case FORM_BLOCK1:
          r.skip(r.u8());
          break;
        case FORM_BLOCK2:
          r.skip(r.u16());
          break;
        case FORM_BLOCK4:
          r.skip(r.u32());
          break;
        case FORM_BLOCK:
        case FORM_EXPRLOC:
          r.skip(r.uleb());
          break;
        default:
          throw new UnsupportedDwarfFormException(where + ": .debug_info: unknown attribute form 0x"
              + Integer.toHexString(form) + " in DIE at " + offset);
      }
    }
    if (r.position() > u.end) {
      throw r.corrupt("DIE at " + offset + " runs past the end of its unit");
    }
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

  private Unit unitAt(int offset) throws CorruptBinaryException {
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

  private Die readDie(int offset) throws GoBinaryException {
    return readDie(offset, unitAt(offset));
  }

  private Die readDie(int offset, Unit u) throws GoBinaryException {
    Die d = new Die();
    readDie(offset, u, d);
    return d;
  }

  private void readDie(int offset, Unit u, Die d) throws GoBinaryException {
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
    Abbrev a = abbrev(u, code, offset);
    d.tag = a.tag;
    d.children = a.children;
    d.count = a.attrs.length;
    d.ensure(d.count);
    for (int i = 0; i < a.attrs.length; i++) {
      d.attrs[i] = a.attrs[i];
      int form = a.forms[i];
      d.lens[i] = 0;
      int depth = 0;
      while (form == FORM_INDIRECT) {
        form = (int) r.uleb();
        if (++depth > 4) {
          throw r.corrupt("DW_FORM_indirect chain at " + offset);
        }
      }
      d.forms[i] = form;
      d.vals[i] = readValue(r, u, form, a.implicit[i], d, i);
      if (r.position() > u.end) {
        throw r.corrupt("DIE at " + offset + " runs past the end of its unit");
      }
    }
    d.next = r.position();
  }

  private long readValue(ByteReader r, Unit u, int form, long implicit, Die d, int i) throws GoBinaryException {
    switch (form) {
      case FORM_ADDR:
        return r.unsigned(u.addrSize);
      case FORM_DATA1:
      case FORM_FLAG:
      case FORM_STRX1:
      case FORM_ADDRX1:
        return r.u8();
      case FORM_DATA2:
      case FORM_STRX2:
      case FORM_ADDRX2:
        return r.u16();
      case FORM_STRX3:
      case FORM_ADDRX3:
        return r.u16() | ((long) r.u8() << 16);
      case FORM_DATA4:
      case FORM_STRX4:
      case FORM_ADDRX4:
      case FORM_REF_SUP4:
        return r.u32();
      case FORM_DATA8:
      case FORM_REF_SIG8:
      case FORM_REF_SUP8:
        return r.u64();
      case FORM_DATA16:
        r.skip(16);
        return 0;
      case FORM_SDATA:
        return r.sleb();
      case FORM_UDATA:
      case FORM_STRX:
      case FORM_ADDRX:
      case FORM_LOCLISTX:
      case FORM_RNGLISTX:
      case FORM_GNU_ADDR_INDEX:
      case FORM_GNU_STR_INDEX:
        return r.uleb();
      case FORM_STRP:
      case FORM_LINE_STRP:
      case FORM_SEC_OFFSET:
      case FORM_STRP_SUP:
      case FORM_GNU_REF_ALT:
      case FORM_GNU_STRP_ALT:
        return r.unsigned(u.offsetSize);
      case FORM_REF_ADDR:
        return r.unsigned(u.version <= 2 ? u.addrSize : u.offsetSize);
      case FORM_REF1:
        return u.offset + r.u8();
      case FORM_REF2:
        return u.offset + r.u16();
      case FORM_REF4:
        return u.offset + r.u32();
      case FORM_REF8:
        return u.offset + r.u64();
      case FORM_REF_UDATA:
        return u.offset + r.uleb();
      case FORM_FLAG_PRESENT:
        return 1;
      case FORM_IMPLICIT_CONST:
        return implicit;
      case FORM_STRING: {
        int start = r.position();
        r.skipCstring();
        d.lens[i] = r.position() - start - 1;
        return start;
      }
      case FORM_BLOCK1:
        return block(r, r.u8(), d, i);
      case FORM_BLOCK2:
        return block(r, r.u16(), d, i);
      case FORM_BLOCK4:
        return block(r, r.u32(), d, i);
      case FORM_BLOCK:
      case FORM_EXPRLOC:
        return block(r, r.uleb(), d, i);
      default:
        throw new UnsupportedDwarfFormException(where + ": .debug_info: unknown attribute form 0x"
            + Integer.toHexString(form) + " in DIE at " + d.offset);
    }
  }

  private static long block(ByteReader r, long len, Die d, int i) throws CorruptBinaryException {
    int start = r.position();
    r.skip(len);
    d.lens[i] = (int) len;
    return start;
  }

  // ---------------------------------------------------------------------------------------------
  // Attribute values

  private String string(Die d, int i) throws GoBinaryException {
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

  private long checked(long off, ByteReader r, String what) throws CorruptBinaryException {
    if (off < 0 || off >= r.limit()) {
      throw r.corrupt(what + " at " + Long.toUnsignedString(off) + " outside " + r.limit() + " bytes");
    }
    return off;
  }

  private long address(Die d, int i) throws GoBinaryException {
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

  private long addrx(Unit u, long index) throws GoBinaryException {
    ByteReader addr = requireSection("addr", "DW_FORM_addrx");
    long off = u.addrBase + index * u.addrSize;
    if (index < 0 || off < 0 || off > addr.limit() - u.addrSize) {
      throw addr.corrupt("address index " + Long.toUnsignedString(index) + " outside the table");
    }
    return addr.seek(off).unsigned(u.addrSize);
  }

  private long constant(Die d, int i) {
    return d.vals[i];
  }

  private int reference(Die d, int i) throws CorruptBinaryException {
    long v = d.vals[i];
    if (v < 0 || v >= info.limit()) {
      throw info.corrupt("reference 0x" + Long.toHexString(v) + " from DIE at " + d.offset + " outside .debug_info");
    }
    return (int) v;
  }

  // ---------------------------------------------------------------------------------------------
  // Types

  private String typeName(int typeOff) throws GoBinaryException {
    Die t = readDie(typeOff);
    int n = t.find(AT_NAME);
    return n >= 0 ? string(t, n) : "";
  }

  private int stripTypedefs(int off) throws GoBinaryException {
    for (int i = 0; i < MAX_TYPE_DEPTH; i++) {
      Die d = readDie(off);
      if (d.tag != TAG_TYPEDEF && d.tag != TAG_CONST_TYPE && d.tag != TAG_VOLATILE_TYPE
          && d.tag != TAG_RESTRICT_TYPE) {
        return off;
      }
      int t = d.find(AT_TYPE);
      if (t < 0) {
        return -1;
      }
      off = reference(d, t);
    }
    return -1;
  }

  /** Size as Go's debug/dwarf Type.Size() computes it; -1 when unknown. */
  private long sizeOf(int off, int depth) throws GoBinaryException {
    if (depth > MAX_TYPE_DEPTH) {
      return -1;
    }
    Die d = readDie(off);
    switch (d.tag) {
      case TAG_TYPEDEF:
      case TAG_CONST_TYPE:
      case TAG_VOLATILE_TYPE:
      case TAG_RESTRICT_TYPE: {
        int t = d.find(AT_TYPE);
        return t < 0 ? (d.tag == TAG_TYPEDEF ? -1 : 0) : sizeOf(reference(d, t), depth + 1);
      }
      case TAG_ARRAY_TYPE: {
        int t = d.find(AT_TYPE);
        if (t < 0) {
          return -1;
        }
        long count = arrayCount(d);
        if (count == -1) {
          return 0;
        }
        long elem = sizeOf(reference(d, t), depth + 1);
        return count * elem;
      }
      default: {
        int b = d.find(AT_BYTE_SIZE);
        if (b >= 0) {
          return constant(d, b);
        }
        return d.tag == TAG_POINTER_TYPE ? d.unit.addrSize : -1;
      }
    }
  }

  private long arrayCount(Die array) throws GoBinaryException {
    if (!array.children) {
      return -1;
    }
    int pos = array.next;
    Die c = new Die();
    while (true) {
      readDie(pos, array.unit, c);
      pos = c.next;
      if (c.tag == 0) {
        return -1;
      }
      if (c.tag == TAG_SUBRANGE_TYPE) {
        int n = c.find(AT_COUNT);
        if (n >= 0) {
          return constant(c, n);
        }
        n = c.find(AT_UPPER_BOUND);
        return n >= 0 ? constant(c, n) + 1 : -1;
      }
      if (c.children) {
        return -1; // Go's array DIEs have only subrange children
      }
    }
  }

  private record MemberRef(String name, long offset, int typeOffset) {}

  private StructType readStruct(int off, String name) throws GoBinaryException {
    Die s = readDie(off);
    int b = s.find(AT_BYTE_SIZE);
    long size = b >= 0 ? constant(s, b) : 0;
    List<Member> members = new ArrayList<>();
    forEachMember(s, (c, m) -> {
      int e = c.find(AT_GO_EMBEDDED_FIELD);
      boolean embedded = e >= 0 && c.vals[e] != 0;
      String tn = m.typeOffset >= 0 ? typeName(m.typeOffset) : "";
      long ts = m.typeOffset >= 0 ? sizeOf(m.typeOffset, 0) : -1;
      members.add(new Member(m.name, m.offset, tn, ts, embedded));
      return false;
    });
    return new StructType(name, size, List.copyOf(members));
  }

  private MemberRef findMember(int structOff, String memberName) throws GoBinaryException {
    MemberRef[] found = new MemberRef[1];
    forEachMember(readDie(structOff), (c, m) -> {
      if (m.name.equals(memberName)) {
        found[0] = m;
        return true;
      }
      return false;
    });
    return found[0];
  }

  private interface MemberVisitor {
    /** Returns true to stop. */
    boolean visit(Die member, MemberRef ref) throws GoBinaryException;
  }

  private void forEachMember(Die s, MemberVisitor v) throws GoBinaryException {
    forEachChild(s, TAG_MEMBER, c -> {
      int n = c.find(AT_NAME);
      String name = n >= 0 ? string(c, n) : "";
      int loc = c.find(AT_DATA_MEMBER_LOCATION);
      long offset = 0;
      if (loc >= 0) {
        if (isConstant(c.forms[loc])) {
          offset = c.vals[loc];
        } else if (isBlock(c.forms[loc])) {
          offset = memberLocationExpression(c, loc);
        }
      }
      int t = c.find(AT_TYPE);
      return v.visit(c, new MemberRef(name, offset, t >= 0 ? reference(c, t) : -1));
    });
  }

  private interface ChildVisitor {
    /** Returns true to stop. */
    boolean visit(Die child) throws GoBinaryException;
  }

  /**
   * Visits the direct children of {@code parent} whose tag is {@code tag}, in order, stepping over
   * the others and every grandchild; stops after a visit that returns true. Each child is a fresh
   * {@link Die}, so a visitor may keep it and read other DIEs.
   */
  private void forEachChild(Die parent, int tag, ChildVisitor v) throws GoBinaryException {
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

  /** DWARF 2 style member location: {@code DW_OP_plus_uconst n}. */
  private long memberLocationExpression(Die c, int i) throws GoBinaryException {
    ByteReader r = new ByteReader(info.seek(c.vals[i]).slice(c.lens[i]), where + ": member location");
    if (r.limit() > 0 && r.u8() == 0x23) {
      return r.uleb();
    }
    throw new UnsupportedDwarfFormException(where + ": member location expression of DIE at " + c.offset);
  }

  // ---------------------------------------------------------------------------------------------
  // Parameters and locations

  private Parameter parameter(Die c, long pc) throws GoBinaryException {
    Die attrs = c;
    int origin = c.find(AT_ABSTRACT_ORIGIN);
    if (origin >= 0) {
      attrs = readDie(reference(c, origin));
    }
    int n = attrs.find(AT_NAME);
    String name = n >= 0 ? string(attrs, n) : "";
    int vp = attrs.find(AT_VARIABLE_PARAMETER);
    boolean isReturn = vp >= 0 && attrs.vals[vp] != 0;
    int t = attrs.find(AT_TYPE);
    String typeName = "";
    long size = 0;
    if (t >= 0) {
      int typeOff = reference(attrs, t);
      typeName = typeName(typeOff);
      size = sizeOf(typeOff, 0);
    }
    int loc = c.find(AT_LOCATION);
    if (loc < 0) {
      return new Parameter(name, typeName, size, isReturn, Parameter.LocationSource.NONE, List.of());
    }
    int form = c.forms[loc];
    ByteReader expr;
    Parameter.LocationSource source;
    if (isBlock(form)) {
      source = Parameter.LocationSource.EXPR;
      expr = new ByteReader(info.seek(c.vals[loc]).slice(c.lens[loc]), where + ": location expression");
    } else if (form == FORM_SEC_OFFSET || form == FORM_LOCLISTX
        || (c.unit.version < 4 && (form == FORM_DATA4 || form == FORM_DATA8))) {
      source = Parameter.LocationSource.LIST;
      expr = lookupLocation(c.unit, form, c.vals[loc], pc);
    } else {
      throw new UnsupportedDwarfFormException(where + ": DW_AT_location with form 0x" + Integer.toHexString(form)
          + " in DIE at " + c.offset);
    }
    List<Piece> pieces = expr == null ? List.of() : LocationExpressions.decode(expr, size, where);
    return new Parameter(name, typeName, size, isReturn, source, pieces);
  }

  /** The location expression in effect at {@code pc}, or null when the list has none for it. */
  private ByteReader lookupLocation(Unit u, int form, long value, long pc) throws GoBinaryException {
    if (u.version >= 5) {
      ByteReader r = requireSection("loclists", "a DWARF 5 location list");
      long off = value;
      if (form == FORM_LOCLISTX) {
        r.seek(checked(u.loclistsBase + value * u.offsetSize, r, "location list index"));
        off = u.loclistsBase + r.unsigned(u.offsetSize);
      }
      r.seek(checked(off, r, "location list"));
      long base = u.lowPc;
      while (true) {
        int kind = r.u8();
        long lo;
        long hi;
        switch (kind) {
          case 0x00: // DW_LLE_end_of_list
            return null;
          case 0x01: // DW_LLE_base_addressx
            base = addrx(u, r.uleb());
            continue;
          case 0x02: // DW_LLE_startx_endx
            lo = addrx(u, r.uleb());
            hi = addrx(u, r.uleb());
            break;
          case 0x03: // DW_LLE_startx_length
            lo = addrx(u, r.uleb());
            hi = lo + r.uleb();
            break;
          case 0x04: // DW_LLE_offset_pair
            lo = base + r.uleb();
            hi = base + r.uleb();
            break;
          case 0x05: // DW_LLE_default_location
            lo = 0;
            hi = -1L;
            break;
          case 0x06: // DW_LLE_base_address
            base = r.unsigned(u.addrSize);
            continue;
          case 0x07: // DW_LLE_start_end
            lo = r.unsigned(u.addrSize);
            hi = r.unsigned(u.addrSize);
            break;
          case 0x08: // DW_LLE_start_length
            lo = r.unsigned(u.addrSize);
            hi = lo + r.uleb();
            break;
          default:
            throw new UnsupportedDwarfFormException(where + ": .debug_loclists: unknown entry kind 0x"
                + Integer.toHexString(kind) + " at " + (r.position() - 1));
        }
        long len = r.uleb();
        ByteBuffer expr = r.slice(len);
        if (Long.compareUnsigned(pc, lo) >= 0 && Long.compareUnsigned(pc, hi) < 0) {
          return new ByteReader(expr, where + ": location expression");
        }
      }
    }
    ByteReader r = requireSection("loc", "a DWARF 4 location list");
    r.seek(checked(value, r, "location list"));
    long base = u.lowPc;
    long maxAddr = u.addrSize == 8 ? -1L : 0xffffffffL;
    while (true) {
      long lo = r.unsigned(u.addrSize);
      long hi = r.unsigned(u.addrSize);
      if (lo == 0 && hi == 0) {
        return null;
      }
      if (lo == maxAddr) {
        base = hi;
        continue;
      }
      ByteBuffer expr = r.slice(r.u16());
      if (Long.compareUnsigned(pc, base + lo) >= 0 && Long.compareUnsigned(pc, base + hi) < 0) {
        return new ByteReader(expr, where + ": location expression");
      }
    }
  }
}
