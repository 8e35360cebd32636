package io.gospan.offsets.resolve;

/**
 * One resolved field.
 *
 * @param location for {@link ProbeField.Kind#ARGUMENT}, else null
 * @param value bytes for MEMBER and SIZE, 1/0 for POINTER; 0 for ARGUMENT
 * @param source where it came from
 */
public record FieldValue(ArgLocation location, long value, Source source) {
  /** Where a value came from. */
  public enum Source {
    /** The embedded offsets catalog, by module versions. */
    CATALOG,
    /** The binary's own DWARF. */
    DWARF,
    /** Derived from the Go stack ABI (ABI0) layout where DWARF gives a parameter no location. */
    DWARF_ABI0,
    /**
     * The binary's runtime type information, which stripped binaries keep: a struct member's offset, a
     * struct's size, whether a member is a pointer, read by name from the struct types reachable from its
     * itabs ({@link io.gospan.offsets.pclntab.TypeLayouts}).
     */
    TYPEINFO,
    /**
     * The function's machine code: the registers its stack-growth tail saves ({@link
     * io.gospan.offsets.code.ArgumentSpills}), named by the catalogued argument layout they equal, or by the
     * method's func type ({@link ArgumentLayout}).
     */
    CODE
  }

  @Override
  public String toString() {
    return (location != null ? location.toString() : Long.toString(value)) + " (" + source.name().toLowerCase(java.util.Locale.ROOT) + ")";
  }
}
