package io.gospan.offsets.resolve;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.catalog.OffsetsCatalog;
import io.gospan.offsets.code.ArgumentSpills;
import io.gospan.offsets.dwarf.GoRegisterAbi;
import io.gospan.offsets.dwarf.Piece;
import io.gospan.offsets.pclntab.RuntimeTypes;
import io.gospan.offsets.pclntab.TypeLayouts;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a binary says of the probes' facts by itself, without DWARF: its runtime type information, which every
 * Go binary keeps, stripped or not, and its machine code.
 *
 * <ul>
 *   <li>a struct member's offset ({@link ProbeField.Kind#MEMBER}), a struct's size ({@code SIZE}), whether a
 *       member is a pointer ({@code POINTER}): read by name from the struct types reachable from the binary's
 *       itabs ({@link TypeLayouts});
 *   <li>an argument's register ({@code ARGUMENT}, register ABI): the function's machine code says which
 *       register holds which word of its arguments ({@link ArgumentSpills}), but not which parameter a word
 *       belongs to; a catalogued layout of the function ({@link ArgumentLayout}, by name) whose words equal
 *       those exactly says it. The candidates are the catalog's for the binary's version, else the nearest
 *       ones ({@link OffsetsCatalog#layouts}): a release newer than the catalog whose function takes the same
 *       parameters as the newest catalogued release is read with that release's names. When the method's func
 *       type is in the binary (a method of an interface it implements: its type's method table, {@code mtyp}),
 *       its parameter types must agree too; when no catalogued layout fits, Go's calling convention applied
 *       to that func type, confirmed by the spills, gives each parameter's registers, and a parameter is
 *       found by its type (the one parameter of the catalogued one's type).
 * </ul>
 *
 * Everything else is not in a stripped binary: {@code runtime.g}'s members (not reachable from an itab),
 * argument slots of the stack ABI (Go ≤ 1.16: no spills; no grpc-go release newer than the catalog builds
 * with it), a parameter on the stack.
 */
final class TypeInfo {
  /**
   * One field as the binary gives it.
   *
   * @param value the value (source {@link FieldValue.Source#TYPEINFO} or {@link FieldValue.Source#CODE}), or null
   * @param absent true when the binary shows the field does not exist (its struct lacks the member)
   * @param reason why there is no value, else null
   * @param note for a value: how it was found (an argument's layout), else null
   */
  record Fact(FieldValue value, boolean absent, String reason, String note) {
    static Fact of(FieldValue v, String note) {
      return new Fact(v, false, null, note);
    }

    static Fact absent(String why) {
      return new Fact(null, true, why, null);
    }

    static Fact unknown(String why) {
      return new Fact(null, false, why, null);
    }
  }

  /** The layout a probe's function was read with, or why none. */
  private record Arguments(ArgumentLayout layout, Map<String, String> byType, String note, String reason) {}

  private final GoBinary binary;
  private final OffsetsCatalog catalog;
  private final OffsetsCatalog.BinaryVersions versions;
  private final Map<Probe, GoFunction> functions;
  private final Map<Probe, Arguments> arguments = new EnumMap<>(Probe.class);
  private Optional<TypeLayouts> layouts;
  private String noLayouts;

  /**
   * @param versions the binary's versions keying the catalog, null when unknown
   * @param functions the probed functions the binary has
   */
  TypeInfo(GoBinary binary, OffsetsCatalog catalog, OffsetsCatalog.BinaryVersions versions, Map<Probe, GoFunction> functions) {
    this.binary = binary;
    this.catalog = catalog;
    this.versions = versions;
    this.functions = functions;
  }

  private Optional<TypeLayouts> layouts() {
    if (layouts == null) {
      try {
        layouts = binary.typeLayouts();
        noLayouts = layouts.isEmpty() ? "no runtime type information found" : null;
      } catch (GoBinaryException | RuntimeException e) {
        layouts = Optional.empty();
        noLayouts = "the runtime type information cannot be read: " + Printable.escape(e.getMessage());
      }
    }
    return layouts;
  }

  /** The field as the binary gives it. */
  Fact fact(ProbeField field) {
    try {
      return switch (field.kind()) {
        case MEMBER -> member(field);
        case SIZE -> size(field);
        case POINTER -> pointer(field);
        case ARGUMENT -> argument(field);
        default -> Fact.unknown("not a fact of the type information");
      };
    } catch (GoBinaryException | RuntimeException e) {
      return Fact.unknown("the binary's type information cannot be read: " + Printable.escape(e.getMessage()));
    }
  }

  private Fact member(ProbeField field) {
    if (layouts().isEmpty()) {
      return Fact.unknown(noLayouts);
    }
    Optional<OptionalLong> off = layouts.get().memberOffset(field.path());
    if (off.isEmpty()) {
      return Fact.unknown(unreachable(field));
    }
    if (off.get().isEmpty()) {
      return Fact.absent(missingMember(field));
    }
    return Fact.of(new FieldValue(null, off.get().getAsLong(), FieldValue.Source.TYPEINFO), null);
  }

  private Fact size(ProbeField field) {
    if (layouts().isEmpty()) {
      return Fact.unknown(noLayouts);
    }
    TypeLayouts.Struct s = layouts.get().struct(field.path().get(0));
    return s == null ? Fact.unknown(unreachable(field))
        : Fact.of(new FieldValue(null, s.size(), FieldValue.Source.TYPEINFO), null);
  }

  private Fact pointer(ProbeField field) {
    if (layouts().isEmpty()) {
      return Fact.unknown(noLayouts);
    }
    String type = field.path().get(0);
    String member = field.path().get(1);
    TypeLayouts.Struct s = layouts.get().struct(type);
    if (s == null) {
      return Fact.unknown(unreachable(field));
    }
    if (!s.fields().containsKey(member)) {
      return Fact.absent(missingMember(field));
    }
    return Fact.of(new FieldValue(null, s.pointers().contains(member) ? 1 : 0, FieldValue.Source.TYPEINFO), null);
  }

  private static String unreachable(ProbeField field) {
    // the first struct of the path the binary does not show
    return "the runtime type information has no struct " + field.path().get(0) + " (not reachable from an itab)";
  }

  private String missingMember(ProbeField field) {
    List<String> p = field.path();
    for (int i = 0; i + 1 < p.size(); i += 2) {
      TypeLayouts.Struct s = layouts.get().struct(p.get(i));
      if (s != null && !s.fields().containsKey(p.get(i + 1))) {
        return p.get(i) + " has no member " + p.get(i + 1) + " (runtime type information)";
      }
    }
    return "no member " + String.join(".", p) + " (runtime type information)";
  }

  private Fact argument(ProbeField field) throws GoBinaryException {
    Arguments a = arguments.get(field.probe());
    if (a == null) {
      a = arguments(field.probe());
      arguments.put(field.probe(), a);
    }
    if (a.reason() != null) {
      return Fact.unknown(a.reason());
    }
    String param = field.path().get(0);
    String name = a.byType() != null ? a.byType().get(param) : param;
    if (name == null) {
      return Fact.unknown(field.probe().function() + "'s func type has no single parameter of " + param + "'s catalogued type");
    }
    Optional<ArgLocation> loc = a.layout().location(name, field.piece());
    if (loc.isEmpty()) {
      return Fact.unknown(a.layout().param(name).isEmpty() ? "the layout has no parameter " + param
          : "word " + field.piece() + " of " + param + " is not in a register");
    }
    return Fact.of(new FieldValue(loc.get(), 0, FieldValue.Source.CODE), a.note());
  }

  /** Which parameters a probe's function takes where, in this binary. */
  private Arguments arguments(Probe probe) throws GoBinaryException {
    GoFunction f = functions.get(probe);
    if (f == null) {
      return no("function " + probe.function() + " is not in the binary");
    }
    if (!binary.usesRegisterAbi()) {
      return no("stack ABI (Go <= 1.16): argument slots are not in the code of a stripped binary");
    }
    ArgumentSpills spills = ArgumentSpills.of(binary, f);
    if (!spills.found()) {
      return no(spills.reason());
    }
    String fn = shortName(f.name());
    List<OffsetsCatalog.CataloguedLayout> candidates = catalog.layouts(probe, versions);
    Optional<ArgumentLayout> fromFuncType;
    try {
      fromFuncType = funcTypeLayout(f.name(), spills);
    } catch (GoBinaryException | RuntimeException e) {
      fromFuncType = Optional.empty(); // a func type that cannot be read confirms nothing; the spills still decide
    }
    List<String> tried = new ArrayList<>();
    for (OffsetsCatalog.CataloguedLayout c : candidates) {
      String mismatch = c.layout().mismatch(spills);
      if (mismatch != null) {
        tried.add(c.observed() + " (" + mismatch + ")");
        continue;
      }
      String funcType = "";
      if (fromFuncType.isPresent()) {
        TypeCheck check = typeCheck(c.layout(), fromFuncType.get());
        if (check.reject() != null) {
          tried.add(c.observed() + " (its func type: " + check.reject() + ")");
          continue;
        }
        funcType = check.note() == null ? "; its func type agrees" : "; its func type agrees but " + check.note();
      }
      return new Arguments(c.layout(), null, fn + "'s argument spills equal the layout of " + c.observed() + " ("
          + c.why() + ")" + funcType, null);
    }
    if (fromFuncType.isPresent() && !candidates.isEmpty()) {
      // no catalogued layout fits: each parameter found by its type in the method's own func type
      ArgumentLayout own = fromFuncType.get();
      ArgumentLayout named = candidates.get(0).layout();
      Map<String, String> byType = new java.util.HashMap<>();
      for (int i = 0; i < named.params().size(); i++) {
        ArgumentLayout.Param p = named.params().get(i);
        List<ArgumentLayout.Param> same = i == 0 ? List.of(own.params().get(0)) // the receiver
            : own.params().subList(1, own.params().size()).stream()
                .filter(q -> q.type().equals(ArgumentLayout.packageNames(p.type()))).toList();
        if (same.size() == 1) {
          byType.put(p.name(), same.get(0).name());
        }
      }
      return new Arguments(own, byType, fn + "'s parameters by type in its func type (Go's calling convention, as its"
          + " argument spills confirm): no catalogued layout fits (" + String.join("; ", tried) + ")", null);
    }
    if (candidates.isEmpty()) {
      return no("the catalog has no argument layout of " + fn + " (the parameters' names)");
    }
    return no(fn + "'s arguments are not where any catalogued layout has them: " + String.join("; ", tried));
  }

  private static Arguments no(String why) {
    return new Arguments(null, null, null, why);
  }

  /** {@code (*http2Client).closeStream} of {@code google.golang.org/grpc/internal/transport.(*http2Client).closeStream}. */
  private static String shortName(String fn) {
    int p = fn.indexOf(".(");
    return p >= 0 ? fn.substring(p + 1) : fn.substring(fn.lastIndexOf('.') + 1);
  }

  /**
   * How a method's func type from the binary compares with a catalogued layout whose words the binary's spills
   * equal (so the same number of words in the same registers).
   *
   * @param reject why the layout is not the function's (the parameter count differs, or a catalogued
   *     parameter's type is at another position: parameters moved), else null
   * @param note parameters whose type changed in place (a type renamed: grpc-go v1.69 made {@code *Stream}
   *     {@code *ServerStream}), else null
   */
  private record TypeCheck(String reject, String note) {}

  private static TypeCheck typeCheck(ArgumentLayout catalogued, ArgumentLayout own) {
    if (catalogued.params().size() != own.params().size()) {
      return new TypeCheck(own.params().size() - 1 + " parameters, not " + (catalogued.params().size() - 1), null);
    }
    List<String> retyped = new ArrayList<>();
    for (int i = 1; i < own.params().size(); i++) {
      String want = ArgumentLayout.packageNames(catalogued.params().get(i).type());
      String have = own.params().get(i).type();
      if (want.equals(have)) {
        continue;
      }
      for (int k = 1; k < own.params().size(); k++) {
        if (own.params().get(k).type().equals(want)) {
          return new TypeCheck(catalogued.params().get(i).name() + " (" + want + ") is parameter " + k + ", not " + i, null);
        }
      }
      retyped.add(catalogued.params().get(i).name() + " is " + have + ", not " + want);
    }
    return new TypeCheck(null, retyped.isEmpty() ? null : String.join(", ", retyped));
  }

  /**
   * The layout Go's calling convention gives a method's func type from the binary's method table (the
   * receiver, a pointer, first), each register word's offset taken from the spills, which must hold exactly
   * those registers and sizes. Parameters are named {@code p0} (the receiver), {@code p1}, ...; types in the
   * runtime's spelling (package names). Empty when the binary has no func type for it or they disagree.
   */
  private Optional<ArgumentLayout> funcTypeLayout(String function, ArgumentSpills spills) throws GoBinaryException {
    int open = function.indexOf(".(*");
    int close = function.indexOf(").", open);
    if (open < 0 || close < 0 || layouts().isEmpty()) {
      return Optional.empty();
    }
    String receiver = "*" + function.substring(0, open) + "." + function.substring(open + 3, close);
    String method = function.substring(close + 2);
    Optional<Long> recv = layouts.get().typeAddress(receiver);
    if (recv.isEmpty()) {
      return Optional.empty();
    }
    RuntimeTypes rt = layouts.get().types();
    long funcType = 0;
    for (RuntimeTypes.Method m : rt.methods(recv.get())) {
      if (m.name().equals(method)) {
        funcType = m.funcType();
      }
    }
    if (funcType == 0) {
      return Optional.empty();
    }
    long base = rt.typeRange()[0];
    GoRegisterAbi abi = new GoRegisterAbi(abiTypes(rt, base), binary.path() + ": " + function, true);
    List<Long> types = new ArrayList<>();
    types.add(recv.get());
    for (long t : rt.funcParams(funcType)[0]) {
      types.add(t);
    }
    List<ArgumentSpills.Spill> unused = new ArrayList<>(spills.spills());
    List<ArgumentLayout.Param> params = new ArrayList<>();
    for (int i = 0; i < types.size(); i++) {
      long t = types.get(i);
      List<ArgumentLayout.Word> words = new ArrayList<>();
      for (Piece piece : abi.next((int) (t - base), rt.size(t))) {
        if (piece.kind() != Piece.Kind.REGISTER) {
          return Optional.empty(); // a parameter on the stack: not confirmed by the spills
        }
        String reg = ArgumentLayout.register(piece.dwarfRegister());
        ArgumentSpills.Spill s = unused.stream().filter(x -> x.register().equals(reg)).findFirst().orElse(null);
        if (s == null || s.size() != piece.size()) {
          return Optional.empty();
        }
        unused.remove(s);
        words.add(new ArgumentLayout.Word(reg, s.offset(), s.size()));
      }
      params.add(new ArgumentLayout.Param("p" + i, rt.typeString(t), words));
    }
    return unused.isEmpty() ? Optional.of(new ArgumentLayout(params)) : Optional.empty();
  }

  /** Go's calling convention's view of runtime type descriptors (offsets from {@code base}, the type data). */
  private static GoRegisterAbi.Types abiTypes(RuntimeTypes rt, long base) {
    return new GoRegisterAbi.Types() {
      @Override
      public int[] goKind(int typeOff) throws GoBinaryException {
        return new int[] {rt.kind(base + typeOff), typeOff};
      }

      @Override
      public long size(int typeOff) throws GoBinaryException {
        return rt.size(base + typeOff);
      }

      @Override
      public long arrayCount(int arrayOff) throws GoBinaryException {
        return rt.arrayLength(base + arrayOff);
      }

      @Override
      public int arrayElement(int arrayOff) throws GoBinaryException {
        return (int) (rt.elem(base + arrayOff) - base);
      }

      @Override
      public List<Integer> fieldTypes(int structOff) throws GoBinaryException {
        List<Integer> out = new ArrayList<>();
        for (RuntimeTypes.Field f : rt.structFields(base + structOff)) {
          out.add((int) (f.type() - base));
        }
        return out;
      }
    };
  }
}
