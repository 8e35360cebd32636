package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.DwarfUnavailableException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.elf.ElfFile;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Lazy DWARF 2–5 reader for the questions gospan's probes ask of a Go binary: struct layouts, type sizes,
 * parameter locations at function entry, and compilation unit address ranges. Handles DWARF 4 (Go before
 * 1.25: {@code .debug_loc}, {@code .debug_ranges}) and DWARF 5 (Go 1.25+: {@code .debug_loclists}, {@code .debug_addr},
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
 * <p>This class holds the public queries; the work is done by its parts: {@link DebugInfo} (units and
 * DIEs, attribute values through {@link FormTable}), {@link NameDirectory} (name → DIE), {@link TypeReader}
 * (sizes and struct members), {@link RangeLists}, {@link LocationLists} and {@link LocationExpressions}.
 *
 * <p>Sources: DWARF 5 standard (sections 7.5 unit headers, abbreviations and forms; 2.6 location
 * descriptions; 7.7.3/7.29 location lists); Go's writer src/cmd/internal/dwarf/dwarf.go and
 * src/cmd/compile/internal/ssa/debug.go (go1.26); Go's reader src/debug/dwarf (go1.26) for type sizes.
 *
 * <p>Thread-safe: every query holds the instance lock (the parts share one cursor per section).
 */
public final class DwarfData {
  private static final int MAX_PATH_SEGMENTS = 32;

  private final DebugInfo dies;
  private final NameDirectory names;
  private final TypeReader types;
  private final RangeLists ranges;
  private final LocationLists locations;

  private DwarfData(ElfFile elf) {
    this.dies = new DebugInfo(elf);
    this.names = new NameDirectory(dies);
    this.types = new TypeReader(dies);
    this.ranges = new RangeLists(dies);
    this.locations = new LocationLists(dies);
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

  /**
   * The struct type named {@code typeName} (Go name with full package path), with every member.
   *
   * @return empty when DWARF has no such struct
   * @throws CorruptBinaryException the DWARF is truncated or inconsistent
   * @throws UnsupportedDwarfFormException an unknown attribute form
   */
  public synchronized Optional<StructType> struct(String typeName) throws GoBinaryException {
    int off = names.struct(typeName);
    if (off < 0) {
      return Optional.empty();
    }
    return Optional.of(types.struct(off, typeName));
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
    int off = names.struct(typeName);
    if (off < 0) {
      return OptionalLong.empty();
    }
    String[] segments = memberPath.split("\\.", -1);
    if (segments.length > MAX_PATH_SEGMENTS) {
      return OptionalLong.empty();
    }
    return types.memberOffset(off, segments);
  }

  /**
   * Byte size of the type named {@code typeName} (any DWARF type DIE: struct, typedef, base type, pointer…),
   * computed as Go's debug/dwarf does: typedefs take their target's size, arrays count × element size,
   * pointers without DW_AT_byte_size the address size.
   *
   * @return empty when no type has that name or its size is unknown
   */
  public synchronized OptionalLong typeSize(String typeName) throws GoBinaryException {
    int off = names.type(typeName);
    if (off < 0) {
      return OptionalLong.empty();
    }
    long size = types.size(off);
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
    int off = names.subprogram(functionName);
    if (off < 0) {
      return Optional.empty();
    }
    Die sub = dies.readDie(off);
    long lowPc = dies.address(sub, sub.find(AT_LOW_PC));
    List<Parameter> params = new ArrayList<>();
    dies.forEachChild(sub, TAG_FORMAL_PARAMETER, c -> {
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
    int off = names.subprogram(functionName);
    if (off < 0) {
      return Optional.empty();
    }
    Die sub = dies.readDie(off);
    long lowPc = dies.address(sub, sub.find(AT_LOW_PC));
    List<Parameter> params = new ArrayList<>();
    GoRegisterAbi abi = new GoRegisterAbi(types, dies.where(), registerAbi);
    dies.forEachChild(sub, TAG_FORMAL_PARAMETER, c -> {
      Die attrs = c;
      int origin = c.find(AT_ABSTRACT_ORIGIN);
      if (origin >= 0) {
        attrs = dies.readDie(dies.reference(c, origin));
      }
      int vp = attrs.find(AT_VARIABLE_PARAMETER);
      int t = attrs.find(AT_TYPE);
      if ((vp < 0 || attrs.vals[vp] == 0) && t >= 0) {
        int n = attrs.find(AT_NAME);
        int typeOff = dies.reference(attrs, t);
        long size = types.size(typeOff);
        List<Piece> pieces = abi.next(typeOff, size);
        params.add(new Parameter(n >= 0 ? dies.string(attrs, n) : "", types.typeName(typeOff), size, false,
            Parameter.LocationSource.ABI, pieces));
      }
      return false;
    });
    return Optional.of(new FunctionParameters(functionName, lowPc, List.copyOf(params),
        registerAbi ? FunctionParameters.Abi.REGISTER : FunctionParameters.Abi.STACK));
  }

  /**
   * Every compilation unit with its address ranges, in {@code .debug_info} order.
   *
   * @throws CorruptBinaryException a range list is truncated or points outside its section
   */
  public synchronized List<CompileUnit> compileUnits() throws GoBinaryException {
    List<Unit> units = dies.units();
    List<CompileUnit> out = new ArrayList<>(units.size());
    for (Unit u : units) {
      Die d = dies.readDie(u.dieStart, u);
      int n = d.find(AT_NAME);
      out.add(new CompileUnit(n >= 0 ? dies.string(d, n) : "", List.copyOf(ranges.of(d))));
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

  /** DWARF version of the first compilation unit (4 for Go before 1.25, 5 since). */
  public synchronized int version() throws GoBinaryException {
    List<Unit> units = dies.units();
    return units.isEmpty() ? 0 : units.get(0).version;
  }

  /** One DW_TAG_formal_parameter and where it is at {@code pc}, from its DW_AT_location. */
  private Parameter parameter(Die c, long pc) throws GoBinaryException {
    Die attrs = c;
    int origin = c.find(AT_ABSTRACT_ORIGIN);
    if (origin >= 0) {
      attrs = dies.readDie(dies.reference(c, origin));
    }
    int n = attrs.find(AT_NAME);
    String name = n >= 0 ? dies.string(attrs, n) : "";
    int vp = attrs.find(AT_VARIABLE_PARAMETER);
    boolean isReturn = vp >= 0 && attrs.vals[vp] != 0;
    int t = attrs.find(AT_TYPE);
    String typeName = "";
    long size = 0;
    if (t >= 0) {
      int typeOff = dies.reference(attrs, t);
      typeName = types.typeName(typeOff);
      size = types.size(typeOff);
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
      expr = dies.block(c, loc, "location expression");
    } else if (form == FORM_SEC_OFFSET || form == FORM_LOCLISTX
        || (c.unit.version < 4 && (form == FORM_DATA4 || form == FORM_DATA8))) {
      source = Parameter.LocationSource.LIST;
      expr = locations.at(c.unit, form, c.vals[loc], pc);
    } else {
      throw new UnsupportedDwarfFormException(dies.where() + ": DW_AT_location with form 0x"
          + Integer.toHexString(form) + " in DIE at " + c.offset);
    }
    List<Piece> pieces = expr == null ? List.of() : LocationExpressions.decode(expr, size, dies.where());
    return new Parameter(name, typeName, size, isReturn, source, pieces);
  }
}
