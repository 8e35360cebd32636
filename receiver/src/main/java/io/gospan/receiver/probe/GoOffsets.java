package io.gospan.receiver.probe;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The value of {@code go_offsets_by_exe} for one binary ({@code struct go_offsets}): argument
 * locations of the probed functions and struct member offsets, each resolved from the offsets
 * catalog or the binary's DWARF. Unset locations are {@link GoLoc#UNRESOLVED}, unset offsets -1,
 * unset itab addresses 0.
 */
public final class GoOffsets {
  private final Map<String, GoLoc> locations = new LinkedHashMap<>();
  private final Map<String, Long> offsets = new LinkedHashMap<>();

  /** Sets an argument location, by its field name in {@code struct go_offsets}. */
  public GoOffsets location(String field, GoLoc loc) {
    if (GrpcLayouts.GO_OFFSETS.field(field).struct() != GrpcLayouts.GO_LOC) {
      throw new IllegalArgumentException(field + " is not a location field of struct go_offsets");
    }
    locations.put(field, loc);
    return this;
  }

  /**
   * Sets a member offset (bytes) or an itab address, by its field name in {@code struct
   * go_offsets}.
   */
  public GoOffsets offset(String field, long value) {
    if (GrpcLayouts.GO_OFFSETS.field(field).struct() != null) {
      throw new IllegalArgumentException(field + " is not an offset field of struct go_offsets");
    }
    offsets.put(field, value);
    return this;
  }

  /** The {@code struct go_offsets} bytes: unset offset fields are -1, unset locations NONE. */
  public byte[] toBytes() {
    ByteBuffer b = GrpcLayouts.GO_OFFSETS.allocate();
    GrpcLayouts.GO_OFFSETS.fields().forEach(f -> {
      if (f.struct() == null && f.size() == 4) {
        b.putInt(f.offset(), Math.toIntExact(offsets.getOrDefault(f.name(), -1L)));
      } else if (f.struct() == null && f.size() == 8) {
        b.putLong(f.offset(), offsets.getOrDefault(f.name(), 0L)); // itab addresses: 0 unknown
      } else if (f.struct() == GrpcLayouts.GO_LOC) {
        locations.getOrDefault(f.name(), GoLoc.UNRESOLVED).writeTo(b, f.offset());
      }
    });
    return b.array();
  }
}
