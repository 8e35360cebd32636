package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;

import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import java.util.ArrayList;
import java.util.List;

/**
 * The code address ranges of a DIE: DW_AT_low_pc/DW_AT_high_pc, then the entries of its DW_AT_ranges list
 * ({@code .debug_ranges} for DWARF 2–4, {@code .debug_rnglists} for DWARF 5, DWARF 5 section 2.17.3 and
 * 7.25), in the order Go's debug/dwarf {@code Data.Ranges} returns them (go1.26).
 */
final class RangeLists {
  private final DebugInfo dies;

  RangeLists(DebugInfo dies) {
    this.dies = dies;
  }

  /**
   * The ranges of {@code d}, {@code [low, high)}.
   *
   * @throws io.gospan.offsets.CorruptBinaryException a list is truncated or points outside its section
   * @throws UnsupportedDwarfFormException an unknown DW_RLE_* entry kind
   */
  List<CompileUnit.Range> of(Die d) throws GoBinaryException {
    List<CompileUnit.Range> out = new ArrayList<>();
    Unit u = d.unit;
    int lowIdx = d.find(AT_LOW_PC);
    int highIdx = d.find(AT_HIGH_PC);
    if (lowIdx >= 0 && highIdx >= 0) {
      long low = dies.address(d, lowIdx);
      int form = d.forms[highIdx];
      long high = isConstant(form) ? low + d.vals[highIdx] : dies.address(d, highIdx);
      out.add(new CompileUnit.Range(low, high));
    }
    int rangesIdx = d.find(AT_RANGES);
    if (rangesIdx < 0) {
      return out;
    }
    if (u.version >= 5) {
      rnglists(d, rangesIdx, out);
    } else {
      ranges(u, d.vals[rangesIdx], out);
    }
    return out;
  }

  /** A DWARF 5 list in {@code .debug_rnglists}, by offset or (DW_FORM_rnglistx) by index. */
  private void rnglists(Die d, int rangesIdx, List<CompileUnit.Range> out) throws GoBinaryException {
    Unit u = d.unit;
    long base = u.lowPc;
    ByteReader r = dies.requireSection("rnglists", "a DWARF 5 range list");
    long off = d.vals[rangesIdx];
    if (d.forms[rangesIdx] == FORM_RNGLISTX) {
      int b = d.find(AT_RNGLISTS_BASE);
      long rnglistsBase = b >= 0 ? d.vals[b] : 0;
      r.seek(DebugInfo.checked(rnglistsBase + off * u.offsetSize, r, "range list index"));
      off = rnglistsBase + r.unsigned(u.offsetSize);
    }
    r.seek(DebugInfo.checked(off, r, "range list"));
    while (true) {
      int kind = r.u8();
      switch (kind) {
        case 0x00: // DW_RLE_end_of_list
          return;
        case 0x01: // DW_RLE_base_addressx
          base = dies.addrx(u, r.uleb());
          break;
        case 0x02: { // DW_RLE_startx_endx
          long lo = dies.addrx(u, r.uleb());
          out.add(new CompileUnit.Range(lo, dies.addrx(u, r.uleb())));
          break;
        }
        case 0x03: { // DW_RLE_startx_length
          long lo = dies.addrx(u, r.uleb());
          out.add(new CompileUnit.Range(lo, lo + r.uleb()));
          break;
        }
        case 0x04: { // DW_RLE_offset_pair
          long lo = base + r.uleb();
          out.add(new CompileUnit.Range(lo, base + r.uleb()));
          break;
        }
        case 0x05: // DW_RLE_base_address
          base = r.unsigned(u.addrSize);
          break;
        case 0x06: { // DW_RLE_start_end
          long lo = r.unsigned(u.addrSize);
          out.add(new CompileUnit.Range(lo, r.unsigned(u.addrSize)));
          break;
        }
        case 0x07: { // DW_RLE_start_length
          long lo = r.unsigned(u.addrSize);
          out.add(new CompileUnit.Range(lo, lo + r.uleb()));
          break;
        }
        default:
          throw new UnsupportedDwarfFormException(dies.where() + ": .debug_rnglists: unknown entry kind 0x"
              + Integer.toHexString(kind) + " at " + (r.position() - 1));
      }
    }
  }

  /** A DWARF 2–4 list in {@code .debug_ranges}: address pairs, a base address selector, (0, 0) at the end. */
  private void ranges(Unit u, long offset, List<CompileUnit.Range> out) throws GoBinaryException {
    long base = u.lowPc;
    ByteReader r = dies.requireSection("ranges", "a DWARF 4 range list");
    r.seek(DebugInfo.checked(offset, r, "range list"));
    long maxAddr = u.addrSize == 8 ? -1L : 0xffffffffL;
    while (r.hasRemaining()) {
      long lo = r.unsigned(u.addrSize);
      long hi = r.unsigned(u.addrSize);
      if (lo == 0 && hi == 0) {
        break;
      }
      if (lo == maxAddr) {
        base = hi;
      } else {
        out.add(new CompileUnit.Range(base + lo, base + hi));
      }
    }
  }
}
