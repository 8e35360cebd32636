package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.fuzz.FuzzImage.Kind;
import org.junit.jupiter.api.Test;

/**
 * {@link LocationLists} on hand-made lists: the expression in effect at a pc, through every entry kind of
 * {@code .debug_loclists} (DWARF 5 sections 2.6.2, 7.7.3) and the base address selector of
 * {@code .debug_loc} (DWARF 4 section 2.6.2). Each expression here is one byte, {@code DW_OP_regN}.
 */
class LocationListsTest {
  /** The single byte of the expression at {@code pc}, or -1 when the list has none. */
  private static int at(LocationLists lists, Unit u, int form, long value, long pc) throws Exception {
    ByteReader expr = lists.at(u, form, value, pc);
    if (expr == null) {
      return -1;
    }
    assertThat(expr.limit()).isEqualTo(1);
    return expr.u8();
  }

  @Test
  void dwarf4EntriesAreRelativeToTheBaseAddress() throws Exception {
    byte[] loc = new Sections.Bytes()
        .u64(0x0).u64(0x10).u16(1).u8(0x50) // [lowPc, lowPc+0x10): RAX
        .u64(-1L).u64(0x4000) // base address selector
        .u64(0x0).u64(0x8).u16(1).u8(0x51) // [0x4000, 0x4008): RDX
        .u64(0).u64(0)
        .toArray();
    LocationLists lists = new LocationLists(new DebugInfo(Sections.elf(Kind.DEBUG_LOC, loc)));
    Unit u = Sections.unit(4, 0x1000);
    assertThat(at(lists, u, FORM_SEC_OFFSET, 0, 0x1004)).isEqualTo(0x50);
    assertThat(at(lists, u, FORM_SEC_OFFSET, 0, 0x4007)).isEqualTo(0x51);
    assertThat(at(lists, u, FORM_SEC_OFFSET, 0, 0x4008)).as("high is exclusive").isEqualTo(-1);
    assertThat(at(lists, u, FORM_SEC_OFFSET, 0, 0x0fff)).isEqualTo(-1);
  }

  @Test
  void dwarf5EveryEntryKindThroughTheOffsetTable() throws Exception {
    Sections.Bytes list = new Sections.Bytes()
        .u8(0x01).uleb(1) // base_addressx -> 0x2000
        .u8(0x04).uleb(0x0).uleb(0x10).uleb(1).u8(0x50) // offset_pair [0x2000, 0x2010)
        .u8(0x02).uleb(2).uleb(3).uleb(1).u8(0x51) // startx_endx [0x3000, 0x3010)
        .u8(0x03).uleb(3).uleb(0x10).uleb(1).u8(0x52) // startx_length [0x3010, 0x3020)
        .u8(0x06).u64(0x9000) // base_address
        .u8(0x04).uleb(0).uleb(4).uleb(1).u8(0x53) // [0x9000, 0x9004)
        .u8(0x07).u64(0xa000).u64(0xa010).uleb(1).u8(0x54) // start_end
        .u8(0x08).u64(0xb000).uleb(8).uleb(1).u8(0x55) // start_length
        .u8(0x05).uleb(1).u8(0x56) // default_location: every other pc
        .u8(0x00);
    // header (12 bytes), one offset (relative to the base, the byte after the header), the list
    byte[] loclists = RangeListsTest.concat(new Sections.Bytes().u32(0).u16(5).u8(8).u8(0).u32(1).u32(4).toArray(),
        list.toArray());
    LocationLists lists = new LocationLists(new DebugInfo(Sections.elf(Kind.DEBUG_LOCLISTS, loclists,
        Kind.DEBUG_ADDR, Sections.addr(0x1000, 0x2000, 0x3000, 0x3010))));
    Unit u = Sections.unit(5, 0);
    u.addrBase = 8;
    u.loclistsBase = 12;
    assertThat(at(lists, u, FORM_LOCLISTX, 0, 0x2008)).isEqualTo(0x50);
    assertThat(at(lists, u, FORM_LOCLISTX, 0, 0x300f)).isEqualTo(0x51);
    assertThat(at(lists, u, FORM_LOCLISTX, 0, 0x3010)).isEqualTo(0x52);
    assertThat(at(lists, u, FORM_LOCLISTX, 0, 0x9003)).isEqualTo(0x53);
    assertThat(at(lists, u, FORM_LOCLISTX, 0, 0xa000)).isEqualTo(0x54);
    assertThat(at(lists, u, FORM_LOCLISTX, 0, 0xb007)).isEqualTo(0x55);
    assertThat(at(lists, u, FORM_LOCLISTX, 0, 0x7777)).isEqualTo(0x56);
    assertThat(at(lists, u, FORM_SEC_OFFSET, 16, 0x2008)).as("the same list by its offset").isEqualTo(0x50);
  }

  @Test
  void anUnknownEntryKindIsUnsupported() throws Exception {
    byte[] loclists = new Sections.Bytes().u32(0).u16(5).u8(8).u8(0).u32(0).u8(0x09).toArray();
    LocationLists lists = new LocationLists(new DebugInfo(Sections.elf(Kind.DEBUG_LOCLISTS, loclists)));
    assertThatThrownBy(() -> lists.at(Sections.unit(5, 0), FORM_SEC_OFFSET, 12, 0))
        .isInstanceOf(UnsupportedDwarfFormException.class).hasMessageContaining("unknown entry kind 0x9 at 12");
  }
}
