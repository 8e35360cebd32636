package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;

import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import java.nio.ByteBuffer;

/**
 * Finds the location expression a location list gives for one pc: {@code .debug_loc} for DWARF 2–4,
 * {@code .debug_loclists} for DWARF 5 (DWARF 5 sections 2.6.2 and 7.7.3, 7.29), which Go's compiler writes
 * for the parameters of optimised functions (src/cmd/compile/internal/ssa/debug.go, go1.26).
 */
final class LocationLists {
  private final DebugInfo dies;

  LocationLists(DebugInfo dies) {
    this.dies = dies;
  }

  /**
   * The location expression in effect at {@code pc} in the list an attribute of unit {@code u} names: a
   * section offset, or (DW_FORM_loclistx) an index into the unit's offset table.
   *
   * @return null when the list has no entry for {@code pc}
   * @throws io.gospan.offsets.CorruptBinaryException the list is truncated or points outside its section
   * @throws UnsupportedDwarfFormException an unknown DW_LLE_* entry kind
   */
  ByteReader at(Unit u, int form, long value, long pc) throws GoBinaryException {
    return u.version >= 5 ? loclists(u, form, value, pc) : loc(u, value, pc);
  }

  private ByteReader loclists(Unit u, int form, long value, long pc) throws GoBinaryException {
    ByteReader r = dies.requireSection("loclists", "a DWARF 5 location list");
    long off = value;
    if (form == FORM_LOCLISTX) {
      r.seek(DebugInfo.checked(u.loclistsBase + value * u.offsetSize, r, "location list index"));
      off = u.loclistsBase + r.unsigned(u.offsetSize);
    }
    r.seek(DebugInfo.checked(off, r, "location list"));
    long base = u.lowPc;
    while (true) {
      int kind = r.u8();
      long lo;
      long hi;
      switch (kind) {
        case 0x00: // DW_LLE_end_of_list
          return null;
        case 0x01: // DW_LLE_base_addressx
          base = dies.addrx(u, r.uleb());
          continue;
        case 0x02: // DW_LLE_startx_endx
          lo = dies.addrx(u, r.uleb());
          hi = dies.addrx(u, r.uleb());
          break;
        case 0x03: // DW_LLE_startx_length
          lo = dies.addrx(u, r.uleb());
          hi = lo + r.uleb();
          break;
        case 0x04: // DW_LLE_offset_pair
          lo = base + r.uleb();
          hi = base + r.uleb();
          break;
        case 0x05: // DW_LLE_default_location
          lo = 0;
          hi = -1L;
          break;
        case 0x06: // DW_LLE_base_address
          base = r.unsigned(u.addrSize);
          continue;
        case 0x07: // DW_LLE_start_end
          lo = r.unsigned(u.addrSize);
          hi = r.unsigned(u.addrSize);
          break;
        case 0x08: // DW_LLE_start_length
          lo = r.unsigned(u.addrSize);
          hi = lo + r.uleb();
          break;
        default:
          throw new UnsupportedDwarfFormException(dies.where() + ": .debug_loclists: unknown entry kind 0x"
              + Integer.toHexString(kind) + " at " + (r.position() - 1));
      }
      long len = r.uleb();
      ByteBuffer expr = r.slice(len);
      if (Long.compareUnsigned(pc, lo) >= 0 && Long.compareUnsigned(pc, hi) < 0) {
        return new ByteReader(expr, dies.where() + ": location expression");
      }
    }
  }

  /** DWARF 2–4: address pairs each followed by a 2-byte length and the expression; (0, 0) ends the list. */
  private ByteReader loc(Unit u, long value, long pc) throws GoBinaryException {
    ByteReader r = dies.requireSection("loc", "a DWARF 4 location list");
    r.seek(DebugInfo.checked(value, r, "location list"));
    long base = u.lowPc;
    long maxAddr = u.addrSize == 8 ? -1L : 0xffffffffL;
    while (true) {
      long lo = r.unsigned(u.addrSize);
      long hi = r.unsigned(u.addrSize);
      if (lo == 0 && hi == 0) {
        return null;
      }
      if (lo == maxAddr) {
        base = hi;
        continue;
      }
      ByteBuffer expr = r.slice(r.u16());
      if (Long.compareUnsigned(pc, base + lo) >= 0 && Long.compareUnsigned(pc, base + hi) < 0) {
        return new ByteReader(expr, dies.where() + ": location expression");
      }
    }
  }
}
