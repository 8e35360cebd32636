package io.gospan.offsets.dwarf;

import java.util.List;

/**
 * A formal parameter of a function and its location at the function's entry pc.
 *
 * @param name parameter name ({@code ~r0} for unnamed results)
 * @param typeName the DW_AT_name of its type DIE, e.g. {@code []golang.org/x/net/http2/hpack.HeaderField}
 * @param size byte size of the type, -1 when unknown
 * @param isReturn true for a result (DW_AT_variable_parameter set by Go)
 * @param location how DWARF gives the location
 * @param pieces the location at the entry pc; empty when DWARF has none there (or the expression is empty)
 */
public record Parameter(
    String name, String typeName, long size, boolean isReturn, LocationSource location, List<Piece> pieces) {

  /** Which DWARF construct described the location. */
  public enum LocationSource {
    /** DW_AT_location is a location list (.debug_loc / .debug_loclists), evaluated at the entry pc. */
    LIST,
    /** DW_AT_location is a single expression valid for the whole function. */
    EXPR,
    /** No DW_AT_location. */
    NONE,
    /**
     * Not from DW_AT_location: derived from Go's calling convention and the parameter types in DWARF
     * ({@link DwarfData#parametersByAbi}).
     */
    ABI
  }
}
