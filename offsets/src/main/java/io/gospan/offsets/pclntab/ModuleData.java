package io.gospan.offsets.pclntab;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.ElfSection;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;

/**
 * {@code runtime.firstmoduledata}, found without symbols: the first 8-byte word in {@code .go.module} (its
 * own section since go1.26), {@code .noptrdata} or {@code .data} that holds the address of
 * {@code .gopclntab} and is followed by the funcnametab slice pointing into it.
 *
 * <p>Field layout (Go src/runtime/symtab.go, type moduledata, go1.16–go1.26, 64-bit): pcHeader at 0, six
 * slices to 152, findfunctab 152, minpc 160, maxpc 168, text 176, etext 184, then noptrdata…enoptrbss up to
 * 256; go1.20 inserts covctrs/ecovctrs; then end, gcdata, gcbss, types, etypes (types at 280 before go1.20,
 * 296 since); go1.18 adds rodata and gofunc, a later release epclntab; then textsectmap, typelinks and
 * itablinks slices. The types and itablinks positions are therefore found by validating the candidates.
 * go1.27 replaces typelinks and itablinks: {@code types, typedesclen, etypes, itaboffset, itabsize} from 296,
 * the itabs inside the type data ({@link #itabTable}).
 */
public final class ModuleData {
  private static final int OFF_FUNCNAMETAB = 8;
  private static final int OFF_TEXT = 176;
  private static final int OFF_ETEXT = 184;
  private static final int[] OFF_TYPES = {280, 296};
  private static final int[] OFF_ITABLINKS = {344, 360, 368, 376, 384, 392, 400};
  /** go1.27: {@code types, typedesclen, etypes, itaboffset, itabsize}, the itabs inside the type data. */
  private static final int OFF_TYPES_INLINE_ITABS = 296;
  /** An itab without its {@code fun} words past the first: inter, _type, hash and padding, fun[0]. */
  private static final int ITAB_SIZE = 32;
  private static final int MAX_ITABS = 1 << 20;
  /** Bytes read: past itablinks in every layout (moduledata is larger still). */
  private static final int RECORD_SIZE = 448;

  private final ElfFile elf;
  private final long address;
  private final ByteReader r;

  private ModuleData(ElfFile elf, long address, ByteBuffer data) {
    this.elf = elf;
    this.address = address;
    this.r = new ByteReader(data, elf.path() + ": runtime.firstmoduledata");
  }

  /**
   * Locates moduledata by scanning the data sections for the pclntab address.
   *
   * @return empty when no plausible moduledata is found
   */
  public static Optional<ModuleData> find(ElfFile elf, Pclntab pcln) throws GoBinaryException {
    long target = pcln.address();
    long funcnametab = target + pcln.funcnameOffset();
    for (String name : List.of(".go.module", ".noptrdata", ".data", ".data.rel.ro")) {
      Optional<ElfSection> s = elf.section(name);
      if (s.isEmpty() || s.get().type() == ElfSection.SHT_NOBITS) {
        continue;
      }
      ByteReader r = new ByteReader(elf.rawData(s.get()), elf.path() + ": " + name);
      for (int off = 0; off + RECORD_SIZE <= r.limit(); off += 8) {
        r.seek(off);
        if (r.u64() != target) {
          continue;
        }
        if (pcln.version() >= Pclntab.GO_1_16 && r.u64() != funcnametab) {
          continue;
        }
        long addr = s.get().addr() + off;
        return Optional.of(new ModuleData(elf, addr, elf.readAddress(addr, RECORD_SIZE)));
      }
    }
    return Optional.empty();
  }

  /** Virtual address of the moduledata record. */
  public long address() {
    return address;
  }

  /** {@code moduledata.text}: the address of runtime.text, base of go1.18+ pclntab entry offsets. */
  public long text() throws CorruptBinaryException {
    return r.seek(OFF_TEXT).u64();
  }

  /** {@code moduledata.etext}. */
  public long etext() throws CorruptBinaryException {
    return r.seek(OFF_ETEXT).u64();
  }

  /**
   * The runtime type data range and the itab list, found together: a candidate {@code [types, etypes)} is
   * accepted only with a candidate {@code itablinks} slice whose first itabs' interface and type pointers
   * all lie inside it (a wrong pair of words, e.g. gcdata/gcbss, fails that test).
   *
   * @return empty when no combination validates
   */
  public Optional<ItabTable> itabTable() throws GoBinaryException {
    for (int typesOff : OFF_TYPES) {
      long types = r.seek(typesOff).u64();
      long etypes = r.u64();
      if (types == 0 || Long.compareUnsigned(types, etypes) >= 0 || etypes - types >= elf.size()
          || elf.loadSegmentFor(types).isEmpty()) {
        continue;
      }
      long[] range = {types, etypes};
      Optional<long[]> links = itablinks(range);
      if (links.isPresent()) {
        return Optional.of(new ItabTable(types, etypes, links.get()));
      }
    }
    return inlineItabs();
  }

  /**
   * go1.27: no {@code itablinks} slice; the itabs lie one after another inside the type data, from {@code
   * types + itaboffset} for {@code itabsize} bytes (Go src/runtime/symtab.go: {@code types, typedesclen,
   * etypes uintptr; itaboffset, itabsize uintptr} at 296; src/runtime/iface.go {@code addModuleItabs}). An
   * itab is {@code inter}, {@code _type}, {@code hash uint32} and padding, then {@code fun}: one word when
   * {@code fun[0]} is 0 (the type does not implement the interface), else one per interface method
   * (src/internal/abi/iface.go {@code ITab.Size}). Accepted only when every itab's interface and type lie in
   * the type data and the walk ends exactly at {@code itabsize}.
   */
  private Optional<ItabTable> inlineItabs() throws GoBinaryException {
    long types = r.seek(OFF_TYPES_INLINE_ITABS).u64();
    long typedesclen = r.u64();
    long etypes = r.u64();
    long itabOffset = r.u64();
    long itabSize = r.u64();
    if (types == 0 || Long.compareUnsigned(types, etypes) >= 0 || etypes - types >= elf.size()
        || Long.compareUnsigned(typedesclen, etypes - types) > 0 || Long.compareUnsigned(itabOffset, etypes - types) > 0
        || Long.compareUnsigned(itabSize, etypes - types - itabOffset) > 0 || itabSize % 8 != 0
        || elf.loadSegmentFor(types).isEmpty()) {
      return Optional.empty();
    }
    long[] range = {types, etypes};
    java.util.List<Long> itabs = new java.util.ArrayList<>();
    try {
      long p = types + itabOffset;
      long end = p + itabSize;
      while (Long.compareUnsigned(p, end) < 0) {
        if (itabs.size() >= MAX_ITABS) {
          return Optional.empty();
        }
        ByteReader itab = new ByteReader(elf.readAddress(p, 32), "itab");
        long inter = itab.u64();
        long type = itab.u64();
        itab.u64();
        long fun0 = itab.u64();
        if (!inRange(inter, range) || !inRange(type, range)) {
          return Optional.empty();
        }
        long methods = new ByteReader(elf.readAddress(inter + 64, 8), "interfacetype").u64();
        if (fun0 != 0 && (methods <= 0 || methods > 1 << 16)) {
          return Optional.empty();
        }
        itabs.add(p);
        p += ITAB_SIZE + (fun0 == 0 ? 0 : (methods - 1) * 8);
      }
      if (p != end) {
        return Optional.empty();
      }
    } catch (CorruptBinaryException e) {
      return Optional.empty();
    }
    return Optional.of(new ItabTable(types, etypes, itabs.stream().mapToLong(Long::longValue).toArray()));
  }

  /**
   * Runtime type data and the itabs of a module.
   *
   * @param types {@code moduledata.types}: base of type and name offsets
   * @param etypes {@code moduledata.etypes}
   * @param itablinks {@code moduledata.itablinks}: the address of every itab the linker kept
   */
  public record ItabTable(long types, long etypes, long[] itablinks) {}

  private Optional<long[]> itablinks(long[] types) throws GoBinaryException {
    for (int off : OFF_ITABLINKS) {
      long ptr = r.seek(off).u64();
      long len = r.u64();
      long cap = r.u64();
      if (len != cap || len <= 0 || len > MAX_ITABS || elf.loadSegmentFor(ptr).isEmpty()) {
        continue;
      }
      try {
        ByteReader l = new ByteReader(elf.readAddress(ptr, len * 8), "itablinks");
        long[] links = new long[(int) len];
        for (int i = 0; i < len; i++) {
          links[i] = l.u64();
        }
        boolean ok = true;
        for (int i = 0; i < Math.min(links.length, 16) && ok; i++) {
          ByteReader itab = new ByteReader(elf.readAddress(links[i], 16), "itab");
          ok = inRange(itab.u64(), types) && inRange(itab.u64(), types);
        }
        if (ok) {
          return Optional.of(links);
        }
      } catch (CorruptBinaryException e) {
        // not this candidate
      }
    }
    return Optional.empty();
  }

  private static boolean inRange(long a, long[] range) {
    return Long.compareUnsigned(a, range[0]) >= 0 && Long.compareUnsigned(a, range[1]) < 0;
  }
}
