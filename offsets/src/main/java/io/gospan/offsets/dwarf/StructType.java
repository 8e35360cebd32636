package io.gospan.offsets.dwarf;

import java.util.List;
import java.util.Optional;

/**
 * A Go struct type from DWARF (DW_TAG_structure_type).
 *
 * @param name Go type name with full package path, e.g. {@code google.golang.org/grpc/internal/transport.loopyWriter}
 * @param size DW_AT_byte_size
 * @param members the members in declaration order
 */
public record StructType(String name, long size, List<Member> members) {
  public Optional<Member> member(String memberName) {
    return members.stream().filter(m -> m.name().equals(memberName)).findFirst();
  }
}
