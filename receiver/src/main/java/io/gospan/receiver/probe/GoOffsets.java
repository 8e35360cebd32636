package io.gospan.receiver.probe;

import io.gospan.receiver.bpf.StructLayout;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The offsets of one binary ({@code struct go_offsets}, in its {@code binaries} slot): argument
 * locations of the probed functions and struct member offsets, each resolved from the offsets
 * catalog or the binary's DWARF. Unset locations are {@link GoLoc#UNRESOLVED}, unset offsets -1,
 * unset itab addresses 0.
 *
 * <p>Fields are named as in C; a member of a nested {@code struct http_server_offsets} is named
 * with its member's prefix ({@code xnet_process_headers_sc}), as {@code ProbeField} names it.
 */
public final class GoOffsets {

  /** A leaf field of struct go_offsets: its absolute offset, size, and whether it is a go_loc. */
  private record Leaf(int offset, int size, boolean location) {}

  private static final Map<String, Leaf> LEAVES = leaves();

  private static Map<String, Leaf> leaves() {
    Map<String, Leaf> out = new LinkedHashMap<>();
    for (StructLayout.Field f : GrpcLayouts.GO_OFFSETS.fields()) {
      if (f.name().startsWith("_")) {
        continue; // padding: zero
      }
      if (f.struct() == GrpcLayouts.GO_LOC) {
        out.put(f.name(), new Leaf(f.offset(), f.size(), true));
      } else if (f.struct() != null) {
        for (StructLayout.Field g : f.struct().fields()) {
          if (!g.name().startsWith("_")) {
            out.put(f.name() + "_" + g.name(), new Leaf(f.offset() + g.offset(), g.size(), g.struct() == GrpcLayouts.GO_LOC));
          }
        }
      } else {
        out.put(f.name(), new Leaf(f.offset(), f.size(), false));
      }
    }
    return out;
  }

  private final Map<String, GoLoc> locations = new LinkedHashMap<>();
  private final Map<String, Long> offsets = new LinkedHashMap<>();

  private static Leaf leaf(String field) {
    Leaf l = LEAVES.get(field);
    if (l == null) {
      throw new IllegalArgumentException("struct go_offsets has no field " + field);
    }
    return l;
  }

  /** Sets an argument location, by its field name in {@code struct go_offsets}. */
  public GoOffsets location(String field, GoLoc loc) {
    if (!leaf(field).location()) {
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
    if (leaf(field).location()) {
      throw new IllegalArgumentException(field + " is not an offset field of struct go_offsets");
    }
    offsets.put(field, value);
    return this;
  }

  /** Leaves a field unset (-1, NONE or 0 in {@link #toBytes()}), by its name in {@code struct go_offsets}. */
  public GoOffsets unset(String field) {
    leaf(field);
    locations.remove(field);
    offsets.remove(field);
    return this;
  }

  /** The {@code struct go_offsets} bytes: unset offset fields are -1, unset locations NONE. */
  public byte[] toBytes() {
    ByteBuffer b = GrpcLayouts.GO_OFFSETS.allocate();
    LEAVES.forEach((name, f) -> {
      if (f.location()) {
        locations.getOrDefault(name, GoLoc.UNRESOLVED).writeTo(b, f.offset());
      } else if (f.size() == 4) {
        b.putInt(f.offset(), Math.toIntExact(offsets.getOrDefault(name, -1L)));
      } else if (f.size() == 8) {
        b.putLong(f.offset(), offsets.getOrDefault(name, 0L)); // itab addresses: 0 unknown
      }
    });
    return b.array();
  }
}
