package io.gospan.offsets.pclntab;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.NotGoBinaryException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.ElfSection;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Go's function table, {@code .gopclntab}: function names and entry addresses, present even in stripped
 * binaries. Formats (Go src/debug/gosym/pclntab.go and src/runtime/symtab.go):
 *
 * <ul>
 *   <li>go1.2–1.15, magic {@code 0xfffffffb}: nfunc, then (entry, funcoff) uintptr pairs; names relative to
 *       the table start;
 *   <li>go1.16–1.17, magic {@code 0xfffffffa}: header nfunc, nfiles, funcnameOffset, cuOffset,
 *       filetabOffset, pctabOffset, pclnOffset; functab of (entry, funcoff) uintptr pairs;
 *   <li>go1.18–1.19 ({@code 0xfffffff0}) and go1.20+ ({@code 0xfffffff1}): header adds textStart after nfiles;
 *       functab of (entryoff, funcoff) uint32 pairs, entry = textStart + entryoff. Since go1.26 the linker
 *       writes textStart = 0, so the caller supplies it (runtime.firstmoduledata.text or {@code .text}).
 * </ul>
 *
 * In every format a {@code _func} record starts with the entry (uintptr before go1.18, uint32 offset after)
 * followed by an int32 offset of the name in the function name table.
 */
public final class Pclntab {
  public static final int GO_1_2 = 12;
  public static final int GO_1_16 = 116;
  public static final int GO_1_18 = 118;
  public static final int GO_1_20 = 120;

  private final ElfSection section;
  private final ByteReader r;
  private final int version;
  private final int nfunc;
  private final long headerTextStart;
  private final long funcnameOffset;
  private final long pclnOffset;
  private long textStart;

  private Pclntab(ElfFile elf, ElfSection section) throws GoBinaryException {
    this.section = section;
    this.r = new ByteReader(elf.rawData(section), elf.path() + ": .gopclntab");
    if (r.limit() < 16) {
      throw r.corrupt("header truncated");
    }
    long magic = r.u32();
    r.u16();
    int quantum = r.u8();
    int ptrSize = r.u8();
    if (quantum != 1 || ptrSize != 8) {
      throw r.corrupt("pc quantum " + quantum + ", pointer size " + ptrSize + " (x86-64 has 1 and 8)");
    }
    if (magic == 0xfffffffbL) {
      version = GO_1_2;
    } else if (magic == 0xfffffffaL) {
      version = GO_1_16;
    } else if (magic == 0xfffffff0L) {
      version = GO_1_18;
    } else if (magic == 0xfffffff1L) {
      version = GO_1_20;
    } else {
      throw r.corrupt("unknown pclntab magic 0x" + Long.toHexString(magic));
    }
    long n = r.u64();
    if (n < 0 || n > r.limit() / 8) {
      throw r.corrupt("function count " + Long.toUnsignedString(n) + " larger than the table");
    }
    nfunc = (int) n;
    switch (version) {
      case GO_1_2:
        headerTextStart = 0;
        funcnameOffset = 0;
        pclnOffset = 8 + 8;
        break;
      case GO_1_16:
        r.u64(); // nfiles
        headerTextStart = 0;
        funcnameOffset = r.u64();
        r.u64(); // cuOffset
        r.u64(); // filetabOffset
        r.u64(); // pctabOffset
        pclnOffset = r.u64();
        break;
      default:
        r.u64(); // nfiles
        headerTextStart = r.u64();
        funcnameOffset = r.u64();
        r.u64();
        r.u64();
        r.u64();
        pclnOffset = r.u64();
        break;
    }
    if (funcnameOffset < 0 || funcnameOffset > r.limit() || pclnOffset < 0 || pclnOffset > r.limit()) {
      throw r.corrupt("header offsets outside the table");
    }
    long functabSize = (long) (nfunc + 1) * (version >= GO_1_18 ? 8 : 16);
    if (functabSize > r.limit() - pclnOffset) {
      throw r.corrupt("function table of " + nfunc + " entries runs past the end");
    }
    textStart = headerTextStart;
  }

  /**
   * Opens {@code .gopclntab}.
   *
   * @throws NotGoBinaryException no {@code .gopclntab} section
   * @throws CorruptBinaryException bad magic, or the header points outside the section
   */
  public static Pclntab read(ElfFile elf) throws GoBinaryException {
    ElfSection s = elf.section(".gopclntab").orElseThrow(
        () -> new NotGoBinaryException(elf.path() + ": no .gopclntab section"));
    return new Pclntab(elf, s);
  }

  /** Format: {@link #GO_1_2}, {@link #GO_1_16}, {@link #GO_1_18} or {@link #GO_1_20}. */
  public int version() {
    return version;
  }

  public int functionCount() {
    return nfunc;
  }

  /** Virtual address of the table (what {@code runtime.firstmoduledata.pcHeader} points to). */
  public long address() {
    return section.addr();
  }

  /** The funcnametab offset from the header (0 for go1.2). */
  public long funcnameOffset() {
    return funcnameOffset;
  }

  /** textStart as written in the header (go1.18+; zero since go1.26, and for older formats). */
  public long headerTextStart() {
    return headerTextStart;
  }

  /** The address go1.18+ entry offsets are relative to. */
  public long textStart() {
    return textStart;
  }

  /** Sets the base for go1.18+ entry offsets, from moduledata or the {@code .text} section. */
  public void setTextStart(long textStart) {
    this.textStart = textStart;
  }

  /**
   * Entry addresses of the named functions (Go symbol names, e.g.
   * {@code google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader}); one pass over the table.
   * The first function with a name wins, as in debug/gosym.
   *
   * @return entry address by name for the names found
   * @throws CorruptBinaryException a function record or name lies outside the table
   */
  public Map<String, Long> entries(Collection<String> names) throws CorruptBinaryException {
    List<byte[]> wanted = new ArrayList<>();
    for (String n : names) {
      wanted.add(n.getBytes(StandardCharsets.UTF_8));
    }
    Map<String, Long> out = new HashMap<>();
    for (int i = 0; i < nfunc && out.size() < names.size(); i++) {
      long funcOff;
      long entry;
      if (version >= GO_1_18) {
        r.seek(pclnOffset + 8L * i);
        entry = textStart + r.u32();
        funcOff = r.u32();
      } else {
        r.seek(pclnOffset + 16L * i);
        entry = r.u64();
        funcOff = r.u64();
      }
      long rec = (version == GO_1_2 ? 0 : pclnOffset) + funcOff;
      if (funcOff < 0 || rec < 0 || rec > r.limit()) {
        throw r.corrupt("function record " + i + " at " + Long.toUnsignedString(rec) + " outside the table");
      }
      r.seek(rec);
      r.skip(version >= GO_1_18 ? 4 : 8);
      long nameOff = funcnameOffset + r.s32();
      if (nameOff < 0 || nameOff >= r.limit()) {
        throw r.corrupt("name of function " + i + " outside the table");
      }
      for (byte[] c : wanted) { // compared in place: a mismatch shows within a few bytes
        if (r.cstringEquals((int) nameOff, c)) {
          out.putIfAbsent(new String(c, StandardCharsets.UTF_8), entry);
        }
      }
    }
    return out;
  }

  /**
   * The first function entry after {@code address}: the next function's entry, or for the last function the
   * end of the text the table covers (the functab's closing entry). Binary search over the functab, which
   * is sorted by entry (Go src/runtime/symtab.go, findfunc).
   *
   * @return empty when no entry lies after {@code address}
   * @throws CorruptBinaryException the functab runs past the table
   */
  public java.util.OptionalLong entryAfter(long address) throws CorruptBinaryException {
    int lo = 0;
    int hi = nfunc; // inclusive: functab[nfunc] is the end of the text
    long found = -1;
    boolean any = false;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      long e = functabEntry(mid);
      if (Long.compareUnsigned(e, address) > 0) {
        found = e;
        any = true;
        hi = mid - 1;
      } else {
        lo = mid + 1;
      }
    }
    return any ? java.util.OptionalLong.of(found) : java.util.OptionalLong.empty();
  }

  private long functabEntry(int i) throws CorruptBinaryException {
    if (version >= GO_1_18) {
      r.seek(pclnOffset + 8L * i);
      return textStart + r.u32();
    }
    r.seek(pclnOffset + 16L * i);
    return r.u64();
  }
}
