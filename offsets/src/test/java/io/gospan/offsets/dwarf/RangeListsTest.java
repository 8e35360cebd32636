package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.fuzz.FuzzImage.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link RangeLists} on hand-made lists: every entry kind of {@code .debug_rnglists} (DWARF 5 section
 * 2.17.3, 7.25) and the base address selector of {@code .debug_ranges} (DWARF 4 section 2.17.3).
 */
class RangeListsTest {
  private static CompileUnit.Range r(long low, long high) {
    return new CompileUnit.Range(low, high);
  }

  @Test
  void dwarf4LowHighPcThenTheListRelativeToTheUnitsBase() throws Exception {
    byte[] ranges = new Sections.Bytes().u64(0x10).u64(0x20) // base + offsets
        .u64(-1L).u64(0x5000) // base address selector
        .u64(1).u64(2)
        .u64(0).u64(0) // end
        .toArray();
    DebugInfo dies = new DebugInfo(Sections.elf(Kind.DEBUG_RANGES, ranges));
    Unit u = Sections.unit(4, 0x1000);
    Die cu = Sections.die(u, new long[] {AT_LOW_PC, FORM_ADDR, 0x1000}, new long[] {AT_HIGH_PC, FORM_DATA8, 0x100},
        new long[] {AT_RANGES, FORM_SEC_OFFSET, 0});
    assertThat(new RangeLists(dies).of(cu))
        .containsExactly(r(0x1000, 0x1100), r(0x1010, 0x1020), r(0x5001, 0x5002));
  }

  @Test
  void dwarf5EveryEntryKindThroughTheOffsetTable() throws Exception {
    Sections.Bytes list = new Sections.Bytes()
        .u8(0x01).uleb(1) // base_addressx -> 0x2000
        .u8(0x04).uleb(0x10).uleb(0x20) // offset_pair
        .u8(0x02).uleb(0).uleb(2) // startx_endx
        .u8(0x03).uleb(0).uleb(0x40) // startx_length
        .u8(0x05).u64(0x9000) // base_address
        .u8(0x04).uleb(1).uleb(2)
        .u8(0x06).u64(0xa000).u64(0xa010) // start_end
        .u8(0x07).u64(0xb000).uleb(8) // start_length
        .u8(0x00);
    // header (12 bytes), one offset (relative to the base: the byte after the header), a filler, the list
    byte[] rnglists = concat(new Sections.Bytes().u32(0).u16(5).u8(8).u8(0).u32(1).u32(4 + 3).u8(0xee).u8(0xee)
        .u8(0xee).toArray(), list.toArray());
    DebugInfo dies = new DebugInfo(Sections.elf(Kind.DEBUG_RNGLISTS, rnglists,
        Kind.DEBUG_ADDR, Sections.addr(0x1000, 0x2000, 0x3000)));
    Unit u = Sections.unit(5, 0);
    u.addrBase = 8;
    Die cu = Sections.die(u, new long[] {AT_RNGLISTS_BASE, FORM_SEC_OFFSET, 12},
        new long[] {AT_RANGES, FORM_RNGLISTX, 0});
    assertThat(new RangeLists(dies).of(cu)).containsExactly(r(0x2010, 0x2020), r(0x1000, 0x3000), r(0x1000, 0x1040),
        r(0x9001, 0x9002), r(0xa000, 0xa010), r(0xb000, 0xb008));
  }

  @Test
  void anUnknownEntryKindOrAListOutsideItsSectionIsAnError() throws Exception {
    byte[] rnglists = new Sections.Bytes().u32(0).u16(5).u8(8).u8(0).u32(0).u8(0x09).toArray();
    DebugInfo dies = new DebugInfo(Sections.elf(Kind.DEBUG_RNGLISTS, rnglists));
    Unit u = Sections.unit(5, 0);
    RangeLists lists = new RangeLists(dies);
    assertThatThrownBy(() -> lists.of(Sections.die(u, new long[] {AT_RANGES, FORM_SEC_OFFSET, 12})))
        .isInstanceOf(UnsupportedDwarfFormException.class).hasMessageContaining("unknown entry kind 0x9 at 12");
    assertThatThrownBy(() -> lists.of(Sections.die(u, new long[] {AT_RANGES, FORM_SEC_OFFSET, 13})))
        .isInstanceOf(CorruptBinaryException.class).hasMessageContaining("range list at 13 outside 13 bytes");
    assertThatThrownBy(() -> lists.of(Sections.die(Sections.unit(4, 0), new long[] {AT_RANGES, FORM_SEC_OFFSET, 0})))
        .isInstanceOf(CorruptBinaryException.class).hasMessageContaining("needs .debug_ranges, which is absent");
  }

  @Test
  void noRangesWithoutTheAttributes() throws Exception {
    DebugInfo dies = new DebugInfo(Sections.elf(Kind.DEBUG_ADDR, Sections.addr(0x1000)));
    assertThat(new RangeLists(dies).of(Sections.die(Sections.unit(5, 0), new long[] {AT_LOW_PC, FORM_ADDR, 1})))
        .as("a low pc alone is no range").isEqualTo(List.of());
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
