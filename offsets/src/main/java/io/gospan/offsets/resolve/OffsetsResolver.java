package io.gospan.offsets.resolve;

import io.gospan.offsets.DwarfUnavailableException;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.ItabAddresses;
import io.gospan.offsets.dwarf.FunctionParameters;
import io.gospan.offsets.dwarf.Parameter;
import io.gospan.offsets.dwarf.Piece;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Resolves every {@link ProbeField} of one binary. Sources, in order: the binary's DWARF
 * (the embedded catalog is consulted first once it exists), then missing with the reason.
 * Itab addresses come from the symbol table or, in stripped binaries, the runtime's itablinks.
 */
public final class OffsetsResolver {
  private OffsetsResolver() {}

  /**
   * Resolves what the probes need.
   *
   * @throws GoBinaryException when the binary is not a readable Go binary; a missing or
   *     partial DWARF is not an error (the fields are reported missing)
   */
  public static OffsetsResolution resolve(GoBinary binary) throws GoBinaryException {
    Map<ProbeField, FieldValue> values = new EnumMap<>(ProbeField.class);
    Map<ProbeField, String> missing = new LinkedHashMap<>();
    Map<Probe, GoFunction> functions = new EnumMap<>(Probe.class);

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

    GoBinary.Dwarf dwarf = null;
    String noDwarf = null;
    try {
      dwarf = binary.dwarf();
    } catch (DwarfUnavailableException e) {
      noDwarf = "no DWARF (stripped binary) and no catalog entry: " + e.getMessage();
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
      if (dwarf == null) {
        missing.put(field, noDwarf);
        continue;
      }
      switch (field.kind()) {
        case ARGUMENT: {
          GoBinary.Dwarf d = dwarf;
          Optional<FunctionParameters> fp = params.get(field.probe());
          if (fp == null) {
            // Go 1.17 DWARF shows some register arguments in their spill slots at the entry pc:
            // derive the locations from the calling convention and the DWARF types instead.
            fp = d.parametersByAbi(field.probe().function());
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
    return new OffsetsResolution(values, missing, functions);
  }

  private static void resolveItab(
      ProbeField field, ItabAddresses itabs, Map<ProbeField, FieldValue> values, Map<ProbeField, String> missing) {
    String name = field.path().get(0);
    Optional<Long> addr = itabs.address(name);
    if (addr.isEmpty() && field == ProbeField.ITAB_SYSCALL_CONN) {
      addr = itabs.address(GoBinary.ITAB_GRPC_SYSCALL_CONN_OLD);
    }
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
