package io.gospan.offsets.resolve;

/**
 * Which source wins when a field is both in the catalog and in the binary's DWARF (a
 * disagreement is logged either way).
 */
public enum Preference {
  /** The binary's own DWARF describes exactly what was compiled: the default. */
  DWARF,
  /** The catalog first, the DWARF for what the catalog cannot answer. */
  CATALOG
}
