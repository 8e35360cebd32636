package io.gospan.offsets.resolve;

import io.gospan.offsets.DwarfUnavailableException;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.ItabAddresses;
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
 * module versions in the binary's build info ({@link OffsetsCatalog}), and the binary's DWARF;
 * when both answer, {@link Preference} decides (DWARF by default) and a disagreement is logged;
 * when neither does, the field is missing with both reasons and only the probes needing it are
 * refused. Itab addresses are per binary: the symbol table or, in stripped binaries, the
 * runtime's itablinks.
 *
 * <p>Binaries without module information (GOPATH builds) key the catalog by the grpc-go version
 * in grpc-go's user agent ({@link GrpcUserAgent}); x/net fields only where every catalogued x/net
 * release agrees; each such struct member and size is checked against the binary's runtime type
 * information before it is trusted, and noted ({@link OffsetsResolution#notes()}). A version between
 * two observations that differ on a struct member is settled by the runtime type information when it
 * shows one of the two observed values. Replaced modules and development toolchains resolve from
 * DWARF only; stripped as well, they are unsupported.
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
      names.add(p.function());
    }
    Map<String, GoFunction> found = binary.functions(names);
    for (Probe p : Probe.values()) {
      GoFunction f = found.get(p.function());
      if (f != null) {
        functions.put(p, f);
      }
    }

    Map<ProbeField, OffsetsCatalog.Answer> answers = new EnumMap<>(ProbeField.class);
    if (!catalog.isEmpty()) {
      OffsetsCatalog.BinaryVersions versions = null;
      String noVersions = null;
      try {
        versions = versions(binary, catalog);
      } catch (GoBinaryException e) {
        noVersions = "no module versions (unreadable build info: " + e.getMessage() + ")";
      }
      for (ProbeField field : ProbeField.values()) {
        if (field.kind() != ProbeField.Kind.ITAB) {
          answers.put(field, versions != null ? catalog.lookup(field, versions) : OffsetsCatalog.Answer.none(noVersions, false));
        }
      }
      if (versions != null && versions.grpcInferredFrom() != null) {
        checkInferred(binary, answers, functions, notes);
      }
      if (answers.values().stream().anyMatch(a -> a.between() != null)) {
        settleBetween(binary, answers, notes);
      }
    }
    GoBinary.Dwarf dwarf = null;
    String noDwarf = null;
    try {
      dwarf = binary.dwarf();
    } catch (DwarfUnavailableException e) {
      noDwarf = "no DWARF (stripped binary): " + e.getMessage();
    }

    Map<Probe, Optional<FunctionParameters>> params = new EnumMap<>(Probe.class);
    ItabAddresses itabs = null;
    for (ProbeField field : ProbeField.values()) {
      if (field.kind() == ProbeField.Kind.ITAB) {
        if (itabs == null) {
          itabs = binary.itabs(GoBinary.PROBE_ITABS);
        }
        resolveItab(field, itabs, values, missing);
        continue;
      }
      OffsetsCatalog.Answer answer = answers.get(field);
      FieldValue fromCatalog = answer == null ? null : answer.value();
      Map<ProbeField, FieldValue> dv = new EnumMap<>(ProbeField.class);
      Map<ProbeField, String> dm = new EnumMap<>(ProbeField.class);
      if (dwarf == null) {
        dm.put(field, noDwarf != null ? noDwarf : "DWARF not read");
      } else {
        resolveFromDwarf(field, dwarf, params, dv, dm);
      }
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
        FieldValue fromTypes = field.runtimeTypes() ? fromRuntimeTypes(binary, field) : null;
        if (fromTypes != null) {
          values.put(field, fromTypes);
        } else {
          missing.put(field, missingReason(answer, dm.get(field), dwarf == null)
              + (field.runtimeTypes() ? "; not in the runtime type information either" : ""));
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
   * A version between two catalog observations that differ on a struct member (an uncatalogued patch
   * release, e.g. grpc-go v1.34.2 between v1.34.0 and v1.35.0): the binary's runtime type information
   * gives the member's offset; when that equals one of the two observed values, the field is answered
   * with it (source catalog, noted); any other value, or no runtime type, leaves it unanswered.
   */
  private static void settleBetween(
      GoBinary binary, Map<ProbeField, OffsetsCatalog.Answer> answers, Map<ProbeField, String> notes) throws GoBinaryException {
    Optional<TypeLayouts> layouts = binary.typeLayouts();
    if (layouts.isEmpty()) {
      return;
    }
    for (Map.Entry<ProbeField, OffsetsCatalog.Answer> e : answers.entrySet()) {
      OffsetsCatalog.Answer a = e.getValue();
      OffsetsCatalog.Between b = a.between();
      ProbeField field = e.getKey();
      if (b == null) {
        continue;
      }
      Optional<OptionalLong> actual = Optional.empty();
      if (field.kind() == ProbeField.Kind.MEMBER) {
        actual = layouts.get().memberOffset(field.path());
      } else if (field.kind() == ProbeField.Kind.SIZE) {
        TypeLayouts.Struct st = layouts.get().struct(field.path().get(0));
        actual = st == null ? Optional.empty() : Optional.of(OptionalLong.of(st.size()));
      }
      if (actual.isEmpty()) {
        continue;
      }
      Long v = actual.get().isPresent() ? actual.get().getAsLong() : null;
      String prefix = a.inferred() == null ? "" : a.inferred() + "; ";
      if (!b.observed(v)) {
        e.setValue(OffsetsCatalog.Answer.none(a.reason() + "; the binary's runtime type information says "
            + (v == null ? "no such member" : v) + ", neither observed value", false));
        continue;
      }
      String note = prefix + "between catalogued " + b.low() + " (" + (b.lowValue() == null ? "absent" : b.lowValue()) + ") and "
          + b.high() + " (" + (b.highValue() == null ? "absent" : b.highValue()) + "): the runtime type information says "
          + (v == null ? "absent" : v);
      if (v == null) {
        e.setValue(OffsetsCatalog.Answer.none(note, true));
      } else {
        e.setValue(new OffsetsCatalog.Answer(new FieldValue(null, v, FieldValue.Source.CATALOG), null, false, a.inferred()));
        notes.put(field, note);
      }
    }
  }

  /**
   * Checks catalog answers that rest on an inferred version against the binary before they are
   * trusted: a struct member or size against the runtime type information (a contradiction drops the
   * answer, with both values); an argument location only by its function being in pclntab (its
   * registers or stack slots cannot be read from a stripped binary). Each kept answer gets a note
   * saying what it was inferred from and how it was checked.
   */
  private static void checkInferred(
      GoBinary binary, Map<ProbeField, OffsetsCatalog.Answer> answers, Map<Probe, GoFunction> functions,
      Map<ProbeField, String> notes) throws GoBinaryException {
    Optional<TypeLayouts> layouts = binary.typeLayouts();
    for (Map.Entry<ProbeField, OffsetsCatalog.Answer> e : answers.entrySet()) {
      ProbeField field = e.getKey();
      OffsetsCatalog.Answer a = e.getValue();
      if (a.inferred() == null || a.value() == null && !a.absent()) {
        continue;
      }
      String check;
      Optional<OptionalLong> actual = Optional.empty();
      if (field.kind() == ProbeField.Kind.MEMBER && layouts.isPresent()) {
        actual = layouts.get().memberOffset(field.path());
      } else if (field.kind() == ProbeField.Kind.SIZE && layouts.isPresent()) {
        TypeLayouts.Struct st = layouts.get().struct(field.path().get(0));
        actual = st == null ? Optional.empty() : Optional.of(OptionalLong.of(st.size()));
      }
      if (field.kind() == ProbeField.Kind.ARGUMENT) {
        if (!functions.containsKey(field.probe())) {
          continue; // the probe is refused for its missing function anyway
        }
        check = "function in pclntab; register/stack slot not checkable without DWARF";
      } else if (layouts.isEmpty()) {
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

  /** A GO_RTYPE member from the binary's runtime type information, or null when it does not show it. */
  private static FieldValue fromRuntimeTypes(GoBinary binary, ProbeField field) throws GoBinaryException {
    Optional<TypeLayouts> layouts = binary.typeLayouts();
    if (layouts.isEmpty()) {
      return null;
    }
    Optional<OptionalLong> off = layouts.get().memberOffset(field.path());
    return off.isPresent() && off.get().isPresent() ? new FieldValue(null, off.get().getAsLong(), FieldValue.Source.RUNTIME_TYPES) : null;
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
      Map<ProbeField, FieldValue> values,
      Map<ProbeField, String> missing)
      throws GoBinaryException {
    switch (field.kind()) {
      case ARGUMENT: {
        Optional<FunctionParameters> fp = params.get(field.probe());
        if (fp == null) {
          fp = dwarf.parametersByAbi(field.probe().function()); // Go 1.17 DWARF shows some register args in spill slots at entry
          params.put(field.probe(), fp);
        }
        resolveArgument(field, fp, values, missing);
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

  private static void resolveItab(
      ProbeField field, ItabAddresses itabs, Map<ProbeField, FieldValue> values, Map<ProbeField, String> missing) {
    String name = field.path().get(0);
    Optional<Long> addr = itabs.address(name);
    if (addr.isPresent()) {
      FieldValue.Source src =
          itabs.source() == ItabAddresses.Source.ITABLINKS ? FieldValue.Source.ITABLINKS : FieldValue.Source.SYMTAB;
      values.put(field, new FieldValue(null, addr.get(), src));
    } else if (!itabs.available()) {
      missing.put(field, "itab addresses unavailable: " + itabs.detail());
    } else {
      missing.put(field, "no itab " + name + " in the binary (type not used as a net.Conn)");
    }
  }

  private static void resolveArgument(
      ProbeField field, Optional<FunctionParameters> fp, Map<ProbeField, FieldValue> values, Map<ProbeField, String> missing) {
    String fn = field.probe().function();
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
