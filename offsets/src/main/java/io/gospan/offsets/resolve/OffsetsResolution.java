package io.gospan.offsets.resolve;

import io.gospan.offsets.GoFunction;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What one binary offers the probes: each field's value and source, the reason for each field
 * that could not be resolved, the probed functions' entries, and so which probes can attach.
 *
 * @param values resolved fields
 * @param missing unresolved fields with the reason
 * @param functions entry of each probed function found in the binary
 * @param mismatches fields where the catalog and the DWARF disagreed, with both values and the winner
 * @param notes resolved fields whose catalog value rests on an inferred version: from what it was
 *     inferred and how it was checked against the binary ("inferred from grpc-go user agent
 *     grpc-go/1.33.3; matches the runtime type information")
 */
public record OffsetsResolution(
    Map<ProbeField, FieldValue> values,
    Map<ProbeField, String> missing,
    Map<Probe, GoFunction> functions,
    Map<ProbeField, String> mismatches,
    Map<ProbeField, String> notes) {

  public OffsetsResolution {
    notes = Collections.unmodifiableMap(new LinkedHashMap<>(notes));
    values = Collections.unmodifiableMap(new EnumMap<>(values.isEmpty() ? new EnumMap<>(ProbeField.class) : values));
    missing = Collections.unmodifiableMap(new LinkedHashMap<>(missing));
    functions = Collections.unmodifiableMap(functions.isEmpty() ? new EnumMap<>(Probe.class) : new EnumMap<>(functions));
    mismatches = Collections.unmodifiableMap(new LinkedHashMap<>(mismatches));
  }

  public OffsetsResolution(
      Map<ProbeField, FieldValue> values, Map<ProbeField, String> missing, Map<Probe, GoFunction> functions) {
    this(values, missing, functions, Map.of(), Map.of());
  }

  public OffsetsResolution(
      Map<ProbeField, FieldValue> values, Map<ProbeField, String> missing, Map<Probe, GoFunction> functions,
      Map<ProbeField, String> mismatches) {
    this(values, missing, functions, mismatches, Map.of());
  }

  /** Whether some value rests on a version inferred without module information ({@link #notes()}). */
  public boolean inferred() {
    return !notes.isEmpty();
  }

  /**
   * Why no probe can attach ("unsupported: grpc-go v1.99.0 is newer than the catalog ..., and no
   * DWARF ..."), or empty when at least one can.
   */
  public java.util.Optional<String> unsupported() {
    if (attachable().stream().anyMatch(Probe.grpcTransport()::contains)) {
      return java.util.Optional.empty();
    }
    String r = refusal(Probe.LOOPY_WRITER_WRITE_HEADER);
    int i = r.indexOf("unsupported: ");
    return java.util.Optional.of(i >= 0 ? r.substring(i) : "unsupported: " + r);
  }

  /** Probes whose function exists and whose required fields all resolved. */
  public Set<Probe> attachable() {
    Set<Probe> out = EnumSet.noneOf(Probe.class);
    for (Probe p : Probe.values()) {
      if (refusal(p) == null) {
        out.add(p);
      }
    }
    return out;
  }

  /** Why a probe cannot attach, or null when it can. */
  public String refusal(Probe probe) {
    if (!functions.containsKey(probe)) {
      return "function " + probe.function() + " is not in the binary";
    }
    for (ProbeField f : ProbeField.values()) {
      if (!f.optional() && f.neededBy().contains(probe) && !values.containsKey(f)) {
        return f.cName() + " unresolved: " + missing.getOrDefault(f, "unknown");
      }
    }
    return null;
  }

  /**
   * Whether the probes find the connection of a stream's start (the {@code net.Conn} members of grpc-go's
   * transport resolved); whether its socket is then identified is the binary's {@link ConnTypes}' part.
   */
  public boolean socketIdentity() {
    return (values.containsKey(ProbeField.LOOPY_WRITER_CONN)
            || values.containsKey(ProbeField.LOOPY_WRITER_FRAMER)
                && values.containsKey(ProbeField.FRAMER_WRITER)
                && values.containsKey(ProbeField.BUF_WRITER_CONN));
  }
}
