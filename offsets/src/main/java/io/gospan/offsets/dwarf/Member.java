package io.gospan.offsets.dwarf;

/**
 * A struct member (DW_TAG_member).
 *
 * @param name field name; for an embedded field the type's name without package
 * @param offset byte offset from the start of the struct (DW_AT_data_member_location)
 * @param typeName DW_AT_name of the member's type DIE
 * @param size byte size of the member's type, -1 when unknown
 * @param embedded Go's DW_AT_go_embedded_field (0x2903)
 */
public record Member(String name, long offset, String typeName, long size, boolean embedded) {}
