package io.gospan.offsets.dwarf;

/**
 * One unit of {@code .debug_info}: its header (DWARF 5 section 7.5.1; versions 2–4 as section 7.5.1.1 of
 * DWARF 4) and the base attributes of its unit DIE that the other sections are read against
 * (DW_AT_low_pc, DW_AT_addr_base, DW_AT_str_offsets_base, DW_AT_loclists_base). Filled by
 * {@link DebugInfo}; offsets are into {@code .debug_info}.
 */
final class Unit {
  /** Offset of the unit header. */
  int offset;
  int version;
  /** Bytes of an address: 8 (amd64) or 4. */
  int addrSize;
  /** Bytes of a section offset: 4 (32-bit DWARF) or 8 (64-bit DWARF). */
  int offsetSize;
  /**
   * What the sizes of offset- and address-sized forms depend on (address size, offset size, whether
   * DWARF 2); units of one shape step over the DIEs of an abbreviation the same way.
   */
  int shape;
  /** Offset of the unit DIE, just after the header. */
  int dieStart;
  /** Offset of the next unit. */
  int end;
  Abbreviations.Table abbrevs;
  long lowPc;
  long addrBase;
  long strOffsetsBase;
  long loclistsBase;
  boolean hasLoclistsBase;
  /** Whether {@link NameDirectory} has indexed this unit's top-level names. */
  boolean scanned;
}
