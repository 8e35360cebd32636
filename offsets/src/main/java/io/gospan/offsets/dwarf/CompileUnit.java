package io.gospan.offsets.dwarf;

import java.util.List;

/**
 * A compilation unit (one Go package per unit) and the code addresses it covers.
 *
 * @param name DW_AT_name, the package path for Go (e.g. {@code google.golang.org/grpc/internal/transport})
 * @param ranges address ranges, {@code [low, high)}: DW_AT_low_pc/DW_AT_high_pc, then the entries of its
 *     DW_AT_ranges list ({@code .debug_ranges} for DWARF 2–4, {@code .debug_rnglists} for DWARF 5), in the
 *     order Go's debug/dwarf {@code Data.Ranges} returns them
 */
public record CompileUnit(String name, List<Range> ranges) {
  /** One address range {@code [low, high)}. */
  public record Range(long low, long high) {
    public boolean contains(long pc) {
      return Long.compareUnsigned(pc, low) >= 0 && Long.compareUnsigned(pc, high) < 0;
    }
  }

  public boolean contains(long pc) {
    return ranges.stream().anyMatch(r -> r.contains(pc));
  }
}
