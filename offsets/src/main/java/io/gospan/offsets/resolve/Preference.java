package io.gospan.offsets.resolve;

/**
 * Which source wins when a field is both in the catalog and in the binary's own description (its DWARF; in
 * a stripped binary whose versions were inferred, its runtime type information and code), and the two
 * disagree (logged either way, {@link OffsetsResolution#mismatches()}).
 */
public enum Preference {
  /**
   * The binary's own description ({@code offsets.prefer: dwarf}, the default): its DWARF describes exactly
   * what was compiled; without DWARF, its runtime type information and code (which a stripped binary's
   * catalogued answers are not checked against, only inferred ones).
   */
  DWARF,
  /** The catalog first, the binary for what the catalog cannot answer. */
  CATALOG
}
