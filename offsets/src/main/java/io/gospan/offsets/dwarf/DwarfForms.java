package io.gospan.offsets.dwarf;

/** DWARF constants used by the reader (DWARF 5 sections 7.5.3–7.5.6, 7.7, 7.29; GNU extensions). */
final class DwarfForms {
  private DwarfForms() {}

  static final int TAG_ARRAY_TYPE = 0x01;
  static final int TAG_FORMAL_PARAMETER = 0x05;
  static final int TAG_MEMBER = 0x0d;
  static final int TAG_POINTER_TYPE = 0x0f;
  static final int TAG_COMPILE_UNIT = 0x11;
  static final int TAG_STRUCTURE_TYPE = 0x13;
  static final int TAG_SUBROUTINE_TYPE = 0x15;
  static final int TAG_TYPEDEF = 0x16;
  static final int TAG_SUBRANGE_TYPE = 0x21;
  static final int TAG_BASE_TYPE = 0x24;
  static final int TAG_CONST_TYPE = 0x26;
  static final int TAG_SUBPROGRAM = 0x2e;
  static final int TAG_VOLATILE_TYPE = 0x35;
  static final int TAG_RESTRICT_TYPE = 0x37;

  static final int AT_LOCATION = 0x02;
  static final int AT_NAME = 0x03;
  static final int AT_BYTE_SIZE = 0x0b;
  static final int AT_LOW_PC = 0x11;
  static final int AT_HIGH_PC = 0x12;
  static final int AT_RANGES = 0x55;
  static final int AT_UPPER_BOUND = 0x2f;
  static final int AT_ABSTRACT_ORIGIN = 0x31;
  static final int AT_COUNT = 0x37;
  static final int AT_DATA_MEMBER_LOCATION = 0x38;
  static final int AT_DECLARATION = 0x3c;
  static final int AT_TYPE = 0x49;
  static final int AT_VARIABLE_PARAMETER = 0x4b;
  static final int AT_STR_OFFSETS_BASE = 0x72;
  static final int AT_ADDR_BASE = 0x73;
  static final int AT_RNGLISTS_BASE = 0x74;
  static final int AT_LOCLISTS_BASE = 0x8c;
  /** Go's DW_AT_go_kind: the reflect.Kind of a type. */
  static final int AT_GO_KIND = 0x2900;
  /** Go's DW_AT_go_embedded_field. */
  static final int AT_GO_EMBEDDED_FIELD = 0x2903;

  static final int FORM_ADDR = 0x01;
  static final int FORM_BLOCK2 = 0x03;
  static final int FORM_BLOCK4 = 0x04;
  static final int FORM_DATA2 = 0x05;
  static final int FORM_DATA4 = 0x06;
  static final int FORM_DATA8 = 0x07;
  static final int FORM_STRING = 0x08;
  static final int FORM_BLOCK = 0x09;
  static final int FORM_BLOCK1 = 0x0a;
  static final int FORM_DATA1 = 0x0b;
  static final int FORM_FLAG = 0x0c;
  static final int FORM_SDATA = 0x0d;
  static final int FORM_STRP = 0x0e;
  static final int FORM_UDATA = 0x0f;
  static final int FORM_REF_ADDR = 0x10;
  static final int FORM_REF1 = 0x11;
  static final int FORM_REF2 = 0x12;
  static final int FORM_REF4 = 0x13;
  static final int FORM_REF8 = 0x14;
  static final int FORM_REF_UDATA = 0x15;
  static final int FORM_INDIRECT = 0x16;
  static final int FORM_SEC_OFFSET = 0x17;
  static final int FORM_EXPRLOC = 0x18;
  static final int FORM_FLAG_PRESENT = 0x19;
  static final int FORM_STRX = 0x1a;
  static final int FORM_ADDRX = 0x1b;
  static final int FORM_REF_SUP4 = 0x1c;
  static final int FORM_STRP_SUP = 0x1d;
  static final int FORM_DATA16 = 0x1e;
  static final int FORM_LINE_STRP = 0x1f;
  static final int FORM_REF_SIG8 = 0x20;
  static final int FORM_IMPLICIT_CONST = 0x21;
  static final int FORM_LOCLISTX = 0x22;
  static final int FORM_RNGLISTX = 0x23;
  static final int FORM_REF_SUP8 = 0x24;
  static final int FORM_STRX1 = 0x25;
  static final int FORM_STRX2 = 0x26;
  static final int FORM_STRX3 = 0x27;
  static final int FORM_STRX4 = 0x28;
  static final int FORM_ADDRX1 = 0x29;
  static final int FORM_ADDRX2 = 0x2a;
  static final int FORM_ADDRX3 = 0x2b;
  static final int FORM_ADDRX4 = 0x2c;
  static final int FORM_GNU_ADDR_INDEX = 0x1f01;
  static final int FORM_GNU_STR_INDEX = 0x1f02;
  static final int FORM_GNU_REF_ALT = 0x1f20;
  static final int FORM_GNU_STRP_ALT = 0x1f21;

  static boolean isStrx(int form) {
    return form == FORM_STRX || form == FORM_GNU_STR_INDEX || (form >= FORM_STRX1 && form <= FORM_STRX4);
  }

  static boolean isAddrx(int form) {
    return form == FORM_ADDRX || form == FORM_GNU_ADDR_INDEX || (form >= FORM_ADDRX1 && form <= FORM_ADDRX4);
  }

  static boolean isBlock(int form) {
    return form == FORM_BLOCK || form == FORM_BLOCK1 || form == FORM_BLOCK2 || form == FORM_BLOCK4
        || form == FORM_EXPRLOC;
  }

  static boolean isConstant(int form) {
    return form == FORM_DATA1 || form == FORM_DATA2 || form == FORM_DATA4 || form == FORM_DATA8
        || form == FORM_SDATA || form == FORM_UDATA || form == FORM_IMPLICIT_CONST;
  }
}
