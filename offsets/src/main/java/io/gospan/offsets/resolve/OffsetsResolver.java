package io.gospan.offsets.resolve;

import io.gospan.offsets.DwarfUnavailableException;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.catalog.OffsetsCatalog;
import io.gospan.offsets.dwarf.FunctionParameters;
import io.gospan.offsets.dwarf.Parameter;
import io.gospan.offsets.dwarf.Piece;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.GrpcUserAgent;
import io.gospan.offsets.pclntab.TypeLayouts;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves every {@link ProbeField} of one binary. Sources: the embedded offsets catalog, by the
 * module versions in the binary's build info ({@link OffsetsCatalog}); the binary's DWARF; and, in a
 * binary without DWARF, for what the catalog does not answer, what the binary says by itself ({@link
 * TypeInfo}: struct members, sizes and pointer members by name from its runtime type information; argument
 * registers from its code, named by a catalogued argument layout they equal or by the method's func type).
 * When the catalog and the binary (its DWARF; the type information and code of one whose versions were
 * inferred) both answer, {@link Preference} decides (the binary by default) and a disagreement is logged and
 * reported ({@link OffsetsResolution#mismatches()}); when none answers, the field is missing with every
 * reason and only the probes needing it are refused.
 * Itab addresses are per binary: the symbol table or, in stripped binaries, the runtime's itablinks.
 *
 * <p>So a stripped binary of a grpc-go (or x/net, or Go) release the catalog has not observed resolves
 * every struct member from its own type information, and every argument whose function takes the same
 * parameters as in the newest catalogued release (its code saves the same registers at the same places);
 * a probe whose function's parameters changed is refused, naming it.
 *
 * <p>Binaries without module information (GOPATH builds) key the catalog by the grpc-go version
 * in grpc-go's user agent ({@link GrpcUserAgent}); x/net fields only where every catalogued x/net
 * release agrees; each such struct member and size is checked against the binary's runtime type
 * information before it is trusted, each argument location against its function's code, and noted
 * ({@link OffsetsResolution#notes()}). Replaced modules and development toolchains get no catalog
 * answer: their DWARF, or stripped, their own type information and code decide.
 */
public final class OffsetsResolver {
  private static final Logger LOG = LoggerFactory.getLogger(OffsetsResolver.class);

  private OffsetsResolver() {}

  /**
   * Resolves what the probes need with the embedded catalog, DWARF winning where both answer
   * ({@link Preference#DWARF}).
   *
   * @throws GoBinaryException when the binary is not a readable Go binary; a missing or
   *     partial DWARF is not an error (the fields are reported missing)
   */
  public static OffsetsResolution resolve(GoBinary binary) throws GoBinaryException {
    return resolve(binary, OffsetsCatalog.embedded(), Preference.DWARF);
  }

  /**
   * Resolves what the probes need: per field, the catalog (by the module versions in the binary's
   * build info) and the binary's DWARF; {@code preference} decides which wins when both answer (a
   * disagreement is logged and reported in {@link OffsetsResolution#mismatches()}); neither: missing,
   * with both reasons.
   *
   * @param catalog {@link OffsetsCatalog#empty()} for DWARF only
   * @throws GoBinaryException when the binary is not a readable Go binary; a missing or
   *     partial DWARF is not an error (the fields are reported missing)
   */
  public static OffsetsResolution resolve(GoBinary binary, OffsetsCatalog catalog, Preference preference)
      throws GoBinaryException {
    Map<ProbeField, FieldValue> values = new EnumMap<>(ProbeField.class);
    Map<ProbeField, String> missing = new LinkedHashMap<>();
    Map<ProbeField, String> mismatches = new LinkedHashMap<>();
    Map<Probe, GoFunction> functions = new EnumMap<>(Probe.class);
    Map<ProbeField, String> notes = new EnumMap<>(ProbeField.class);

    List<String> names = new ArrayList<>();
    for (Probe p : Probe.values()) {
      names.addAll(p.functions());
    }
    Map<String, GoFunction> found = binary.functions(names);
    for (Probe p : Probe.values()) {
      for (String name : p.functions()) { // the first alternative the binary has
        GoFunction f = found.get(name);
        if (f != null) {
          functions.put(p, f);
          break;
        }
      }
    }

    Map<ProbeField, OffsetsCatalog.Answer> answers = new EnumMap<>(ProbeField.class);
    OffsetsCatalog.BinaryVersions versions = null;
    if (!catalog.isEmpty()) {
      String noVersions = null;
      try {
        versions = versions(binary, catalog);
      } catch (GoBinaryException e) {
        noVersions = "no module versions (unreadable build info: " + e.getMessage() + ")";
      }
      for (ProbeField field : ProbeField.values()) {
        answers.put(field, versions != null ? catalog.lookup(field, versions) : OffsetsCatalog.Answer.none(noVersions, false));
      }
      if (versions != null && versions.grpcInferredFrom() != null) {
        checkInferred(binary, answers, notes);
      }
    }
    GoBinary.Dwarf dwarf = null;
    String noDwarf = null;
    try {
      dwarf = binary.dwarf();
    } catch (DwarfUnavailableException e) {
      noDwarf = "no DWARF (stripped binary): " + e.getMessage();
    }
    // the binary's own runtime type information and code: what a stripped binary says by itself
    TypeInfo typeInfo = new TypeInfo(binary, catalog, versions, functions);

    Map<Probe, Optional<FunctionParameters>> params = new EnumMap<>(Probe.class);
    for (ProbeField field : ProbeField.values()) {
      OffsetsCatalog.Answer answer = answers.get(field);
      FieldValue fromCatalog = answer == null ? null : answer.value();
      if (dwarf == null) {
        // the binary's own type information and code when the catalog does not answer, or answers by a version
        // inferred from the binary (then as a check); a catalogued answer stands without reading them (an
        // inspection reads the type layouts and decodes a function per probe only when it must)
        boolean catalogAnswers = answer != null && (answer.value() != null || answer.absent()) && answer.inferred() == null;
        fromBinary(binary, field, answer, catalogAnswers ? TypeInfo.Fact.unknown("not read: the catalog answers")
            : typeInfo.fact(field), preference, noDwarf, values, missing, mismatches, notes);
        continue;
      }
      Map<ProbeField, FieldValue> dv = new EnumMap<>(ProbeField.class);
      Map<ProbeField, String> dm = new EnumMap<>(ProbeField.class);
      resolveFromDwarf(field, dwarf, params, functions, dv, dm);
      FieldValue fromDwarf = dv.get(field);
      if (fromDwarf != null) {
        if (fromCatalog != null && !sameValue(fromCatalog, fromDwarf)) {
          String m = "catalog says " + fromCatalog + ", DWARF says " + fromDwarf + "; using "
              + (preference == Preference.DWARF ? "DWARF" : "catalog");
          mismatches.put(field, m);
          LOG.warn("{}: {} {}", binary.path(), field.cName(), m);
        }
        values.put(field, fromCatalog != null && preference == Preference.CATALOG ? fromCatalog : fromDwarf);
      } else if (fromCatalog != null) {
        values.put(field, fromCatalog);
      } else {
        // a GO_RTYPE member DWARF lacks (a type DWARF does not describe): the runtime type information may have it
        TypeInfo.Fact t = field.runtimeTypes() ? typeInfo.fact(field) : null;
        if (t != null && t.value() != null) {
          values.put(field, t.value());
        } else {
          missing.put(field, missingReason(answer, dm.get(field), false)
              + (t != null && t.reason() != null ? "; runtime type information: " + t.reason() : ""));
        }
      }
    }
    // A field only probes need whose functions the binary does not have (x/net's HTTP/2 server in a
    // client that links x/net) is not resolved, whatever a source says: the catalog would answer it by
    // the x/net version where the binary's DWARF has no such subprogram or type.
    for (ProbeField field : ProbeField.values()) {
      if (!field.neededBy().isEmpty() && field.neededBy().stream().noneMatch(functions::containsKey) && values.remove(field) != null) {
        missing.put(field, "needed only by " + field.neededBy().stream().map(p -> p.name().toLowerCase(java.util.Locale.ROOT)).sorted().toList()
            + ", whose functions are not in the binary");
      }
    }
    notes.keySet().retainAll(values.keySet());
    return new OffsetsResolution(values, missing, functions, mismatches, notes);
  }

  /**
   * The versions keying the catalog: the build info's; without module information, grpc-go's from
   * its user agent ({@link GrpcUserAgent}).
   */
  public static OffsetsCatalog.BinaryVersions versions(GoBinary binary, OffsetsCatalog catalog) throws GoBinaryException {
    BuildInfo info = binary.buildInfo();
    GrpcUserAgent.Found ua = info.hasModuleInfo() ? null : GrpcUserAgent.find(binary.elf());
    OffsetsCatalog.BinaryVersions v = OffsetsCatalog.BinaryVersions.of(info, binary.usesRegisterAbi(), ua);
    if (!info.hasModuleInfo() && v.grpc() == null && ua != null && ua.text() == null) {
      // no user agent at all (a server-only program): grpc-go's struct layouts narrow its release
      Optional<TypeLayouts> layouts = binary.typeLayouts();
      if (layouts.isPresent()) {
        Map<ProbeField, OptionalLong> layout = new EnumMap<>(ProbeField.class);
        for (ProbeField f : ProbeField.values()) {
          if (f.kind() == ProbeField.Kind.MEMBER && f.catalogued() && OffsetsCatalog.GRPC.equals(OffsetsCatalog.section(f, true))) {
            layouts.get().memberOffset(f.path()).ifPresent(off -> layout.put(f, off));
          }
        }
        Optional<List<String>> range = catalog.grpcRange(layout);
        if (range.isPresent()) {
          return v.withGrpcRange(range.get());
        }
      }
    }
    return v;
  }

  /**
   * A field of a binary without DWARF: the catalog's answer and what the binary itself says ({@link TypeInfo}:
   * its runtime type information, its code; read only when the catalog does not answer or answers by an
   * inferred version). When both answer and differ, {@code preference} decides ({@link Preference#DWARF}: the
   * binary's own description) and the disagreement is logged; an answer resting on an inferred version is
   * noted with how the binary confirmed it.
   */
  private static void fromBinary(GoBinary binary, ProbeField field, OffsetsCatalog.Answer answer, TypeInfo.Fact own,
      Preference preference, String noDwarf, Map<ProbeField, FieldValue> values, Map<ProbeField, String> missing,
      Map<ProbeField, String> mismatches, Map<ProbeField, String> notes) {
    FieldValue fromCatalog = answer == null ? null : answer.value();
    boolean catalogKnows = fromCatalog != null || answer != null && answer.absent();
    boolean binaryKnows = own.value() != null || own.absent();
    if (catalogKnows && binaryKnows && (fromCatalog == null ? own.value() != null : own.value() == null
        || !sameValue(fromCatalog, own.value()))) {
      String m = "catalog says " + (fromCatalog == null ? "no such member" : fromCatalog) + ", the binary says "
          + (own.value() == null ? "no such member (" + own.reason() + ")" : own.value()) + "; using "
          + (preference == Preference.DWARF ? "the binary's" : "the catalog's");
      mismatches.put(field, m);
      LOG.warn("{}: {} {}", binary.path(), field.cName(), m);
    }
    boolean agree = catalogKnows && binaryKnows && !mismatches.containsKey(field);
    // agreeing, the catalog's answer stands (it was observed with DWARF); disagreeing, the preference decides
    boolean useBinary = binaryKnows && !agree && (preference == Preference.DWARF || !catalogKnows);
    if (useBinary && own.value() != null) {
      values.put(field, own.value());
      if (own.note() != null) {
        notes.put(field, own.note());
      }
      notes.computeIfPresent(field, (f, n) -> answer != null && answer.inferred() != null && !n.startsWith(answer.inferred())
          ? answer.inferred() + "; " + n : n);
    } else if (!useBinary && fromCatalog != null) {
      values.put(field, fromCatalog);
      if (answer.inferred() != null && field.kind() == ProbeField.Kind.ARGUMENT) {
        notes.put(field, answer.inferred() + "; " + (own.value() != null ? "the function's argument spills agree"
            : "not checked: " + own.reason()));
      }
    } else if (useBinary) {
      missing.put(field, own.reason() + (answer != null && !answer.absent() ? "; catalog: " + answer.reason() : ""));
    } else if (answer != null && answer.absent()) {
      missing.put(field, answer.reason() + "; " + noDwarf);
    } else {
      missing.put(field, missingReason(answer, noDwarf, true) + "; and the binary: " + own.reason());
    }
  }

  /**
   * Checks catalog answers that rest on an inferred version against the binary before they are
   * trusted: a struct member, size or pointer member against the runtime type information (a contradiction drops the
   * answer, with both values, whatever {@link Preference} says). Each kept answer gets a note saying what
   * it was inferred from and how it was checked. An argument location is checked against the function's
   * code where the binary has no DWARF ({@link #fromBinary}).
   */
  private static void checkInferred(
      GoBinary binary, Map<ProbeField, OffsetsCatalog.Answer> answers, Map<ProbeField, String> notes)
      throws GoBinaryException {
    Optional<TypeLayouts> layouts = binary.typeLayouts();
    for (Map.Entry<ProbeField, OffsetsCatalog.Answer> e : answers.entrySet()) {
      ProbeField field = e.getKey();
      OffsetsCatalog.Answer a = e.getValue();
      if (a.inferred() == null || a.value() == null && !a.absent() || field.kind() == ProbeField.Kind.ARGUMENT) {
        continue;
      }
      String check;
      Optional<OptionalLong> actual = Optional.empty();
      if (field.kind() == ProbeField.Kind.MEMBER && layouts.isPresent()) {
        actual = layouts.get().memberOffset(field.path());
      } else if (field.kind() == ProbeField.Kind.SIZE && layouts.isPresent()) {
        TypeLayouts.Struct st = layouts.get().struct(field.path().get(0));
        actual = st == null ? Optional.empty() : Optional.of(OptionalLong.of(st.size()));
      } else if (field.kind() == ProbeField.Kind.POINTER && layouts.isPresent()) {
        TypeLayouts.Struct st = layouts.get().struct(field.path().get(0));
        actual = st == null ? Optional.empty() : Optional.of(layouts.get().memberIsPointer(field.path().get(0), field.path().get(1))
            .map(p -> OptionalLong.of(p ? 1 : 0)).orElse(OptionalLong.empty()));
      }
      if (layouts.isEmpty()) {
        check = "not checked: no runtime type information";
      } else if (actual.isEmpty()) {
        check = "not checked: " + field.path().get(0) + " not in the runtime type information";
      } else {
        OptionalLong v = actual.get();
        boolean agrees = a.value() == null ? v.isEmpty() : v.isPresent() && v.getAsLong() == a.value().value();
        if (!agrees) {
          String catalogSays = a.value() == null ? "no such member" : Long.toString(a.value().value());
          String binarySays = v.isEmpty() ? "no such member" : Long.toString(v.getAsLong());
          e.setValue(OffsetsCatalog.Answer.none(a.inferred() + ": the catalog says " + catalogSays
              + ", the binary's runtime type information says " + binarySays + ": not trusted", false));
          continue;
        }
        check = "matches the runtime type information";
      }
      notes.put(field, a.inferred() + "; " + check);
    }
  }

  private static boolean sameValue(FieldValue a, FieldValue b) {
    return java.util.Objects.equals(a.location(), b.location()) && a.value() == b.value();
  }

  /** Both reasons; "unsupported: ..." when the binary is stripped and the catalog cannot answer. */
  private static String missingReason(OffsetsCatalog.Answer answer, String dwarfReason, boolean noDwarf) {
    if (answer == null) {
      return dwarfReason;
    }
    if (answer.absent()) {
      return answer.reason() + "; " + dwarfReason;
    }
    if (noDwarf) {
      return "unsupported: " + answer.reason() + ", and " + dwarfReason;
    }
    return dwarfReason + "; catalog: " + answer.reason();
  }

  private static void resolveFromDwarf(
      ProbeField field,
      GoBinary.Dwarf dwarf,
      Map<Probe, Optional<FunctionParameters>> params,
      Map<Probe, GoFunction> functions,
      Map<ProbeField, FieldValue> values,
      Map<ProbeField, String> missing)
      throws GoBinaryException {
    switch (field.kind()) {
      case ARGUMENT: {
        GoFunction found = functions.get(field.probe());
        String fn = found != null ? found.name() : field.probe().function(); // the alternative the binary has
        Optional<FunctionParameters> fp = params.get(field.probe());
        if (fp == null) {
          fp = dwarf.parametersByAbi(fn); // Go 1.17 DWARF shows some register args in spill slots at entry
          params.put(field.probe(), fp);
        }
        resolveArgument(field, fn, fp, values, missing);
        break;
      }
      case MEMBER: {
        long sum = 0;
        String failed = null;
        List<String> path = field.path();
        for (int i = 0; i + 1 < path.size(); i += 2) {
          OptionalLong off = dwarf.memberOffset(path.get(i), path.get(i + 1));
          if (off.isEmpty()) {
            failed = "DWARF has no member " + path.get(i) + "." + path.get(i + 1);
            break;
          }
          sum += off.getAsLong();
        }
        if (failed == null) {
          values.put(field, new FieldValue(null, sum, FieldValue.Source.DWARF));
        } else {
          missing.put(field, failed);
        }
        break;
      }
      case POINTER: {
        // Whether a member is held through a pointer: its DWARF type's name starts with '*'
        // (e.g. transport.ServerStream's embedded *Stream in grpc-go v1.69-v1.76, Stream by value since).
        String type = field.path().get(0);
        String member = field.path().get(1);
        Optional<io.gospan.offsets.dwarf.Member> m = dwarf.struct(type).flatMap(s -> s.member(member));
        if (m.isPresent()) {
          values.put(field, new FieldValue(null, m.get().typeName().startsWith("*") ? 1 : 0, FieldValue.Source.DWARF));
        } else {
          missing.put(field, "DWARF has no member " + type + "." + member);
        }
        break;
      }
      case SIZE: {
        OptionalLong size = dwarf.typeSize(field.path().get(0));
        if (size.isPresent()) {
          values.put(field, new FieldValue(null, size.getAsLong(), FieldValue.Source.DWARF));
        } else {
          missing.put(field, "DWARF has no type " + field.path().get(0));
        }
        break;
      }
      default:
        throw new AssertionError(field);
    }
  }

  private static void resolveArgument(
      ProbeField field, String fn, Optional<FunctionParameters> fp, Map<ProbeField, FieldValue> values,
      Map<ProbeField, String> missing) {
    if (fp.isEmpty()) {
      missing.put(field, "DWARF has no subprogram " + fn);
      return;
    }
    String param = field.path().get(0);
    // ABI0 (Go <= 1.16): arguments follow the return address in declaration order, each
    // aligned to min(size, 8). Go 1.16 sometimes gives a parameter no location (seen: hf of
    // writeHeader); its place is then still fixed by this layout.
    long abi0 = Piece.RETURN_ADDRESS_SIZE;
    for (Parameter p : fp.get().parameters()) {
      long align = p.size() >= 8 ? 8 : Math.max(1, Long.highestOneBit(Math.max(1, p.size())));
      abi0 = (abi0 + align - 1) / align * align;
      if (!p.name().equals(param)) {
        abi0 += Math.max(0, p.size());
        continue;
      }
      if (field.piece() < p.pieces().size()) {
        Piece piece = p.pieces().get(field.piece());
        switch (piece.kind()) {
          case REGISTER:
            if (piece.dwarfRegister() < 0 || piece.dwarfRegister() > 15) {
              missing.put(field, fn + " " + param + " is in DWARF register " + piece.dwarfRegister() + ", not a general register");
              return;
            }
            values.put(field, new FieldValue(ArgLocation.inRegister((int) piece.dwarfRegister()), 0, FieldValue.Source.DWARF));
            return;
          case STACK:
            values.put(field, new FieldValue(ArgLocation.onStack((int) piece.stackOffset()), 0, FieldValue.Source.DWARF));
            return;
          default:
            missing.put(field, fn + " " + param + " piece " + field.piece() + " has no location at entry");
            return;
        }
      }
      if (p.pieces().size() == 1 && p.pieces().get(0).kind() == Piece.Kind.STACK && p.pieces().get(0).size() > 8L * field.piece()) {
        // One stack piece for the whole value (the ABI-derived layout): word N is 8*N bytes on.
        values.put(field, new FieldValue(
            ArgLocation.onStack((int) (p.pieces().get(0).stackOffset() + 8L * field.piece())), 0, FieldValue.Source.DWARF));
        return;
      }
      if (p.pieces().isEmpty() && fp.get().abi() == FunctionParameters.Abi.STACK) {
        values.put(field, new FieldValue(ArgLocation.onStack((int) (abi0 + 8L * field.piece())), 0, FieldValue.Source.DWARF_ABI0));
        return;
      }
      missing.put(field, fn + " " + param + " has no location for word " + field.piece() + " at entry");
      return;
    }
    missing.put(field, fn + " has no parameter " + param);
  }
}
