package io.gospan.offsets.fuzz;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The input format of the section-level fuzz targets: a list of ELF sections, each written as
 * {@code kind:u8, flags:u8, length:u16 little-endian, bytes}, turned into a well-formed ELF64 x86-64 image
 * by {@link #elf}. The fuzzer mutates section contents; the ELF header, section headers and program
 * headers are written here (the raw-image target fuzzes those). A record cut short takes the bytes that
 * remain.
 *
 * <p>Every kind has a fixed virtual address (so pointers in a seed stay valid when other sections change)
 * and, when it is loaded, its own PT_LOAD segment with the flags Go's linker gives it. Flag bit 0 marks the
 * section {@code SHF_COMPRESSED} (its bytes then start with an ELF64_Chdr).
 */
public final class FuzzImage {
  /** A section of the image. */
  public record Section(Kind kind, boolean compressed, byte[] data) {}

  /** Section kinds: name, virtual address (0: not loaded), PT_LOAD flags. */
  public enum Kind {
    TEXT(".text", 0x401000, PF_R | PF_X),
    RODATA(".rodata", 0x480000, PF_R),
    TYPELINK(".typelink", 0x4a0000, PF_R),
    ITABLINK(".itablink", 0x4a8000, PF_R),
    GOPCLNTAB(".gopclntab", 0x4c0000, PF_R),
    GO_BUILDINFO(".go.buildinfo", 0x500000, PF_R | PF_W),
    GO_MODULE(".go.module", 0x510000, PF_R | PF_W),
    NOPTRDATA(".noptrdata", 0x520000, PF_R | PF_W),
    DATA(".data", 0x540000, PF_R | PF_W),
    SYMTAB(".symtab", 0, 0),
    STRTAB(".strtab", 0, 0),
    DEBUG_INFO(".debug_info", 0, 0),
    DEBUG_ABBREV(".debug_abbrev", 0, 0),
    DEBUG_STR(".debug_str", 0, 0),
    DEBUG_LINE_STR(".debug_line_str", 0, 0),
    DEBUG_STR_OFFSETS(".debug_str_offsets", 0, 0),
    DEBUG_ADDR(".debug_addr", 0, 0),
    DEBUG_LOC(".debug_loc", 0, 0),
    DEBUG_LOCLISTS(".debug_loclists", 0, 0),
    DEBUG_RANGES(".debug_ranges", 0, 0),
    DEBUG_RNGLISTS(".debug_rnglists", 0, 0),
    ZDEBUG_INFO(".zdebug_info", 0, 0),
    ZDEBUG_ABBREV(".zdebug_abbrev", 0, 0),
    ZDEBUG_LOC(".zdebug_loc", 0, 0),
    ZDEBUG_RANGES(".zdebug_ranges", 0, 0),
    ZDEBUG_STR(".zdebug_str", 0, 0),
    DATA_REL_RO(".data.rel.ro", 0x560000, PF_R | PF_W);

    final String name;
    final long addr;
    final int segmentFlags;

    Kind(String name, long addr, int segmentFlags) {
      this.name = name;
      this.addr = addr;
      this.segmentFlags = segmentFlags;
    }

    public String sectionName() {
      return name;
    }

    public long address() {
      return addr;
    }
  }

  static final int PF_X = 1;
  static final int PF_W = 2;
  static final int PF_R = 4;
  private static final int SHT_PROGBITS = 1;
  private static final int SHT_SYMTAB = 2;
  private static final int SHT_STRTAB = 3;
  private static final long SHF_WRITE = 1;
  private static final long SHF_ALLOC = 2;
  private static final long SHF_EXECINSTR = 4;
  private static final long SHF_COMPRESSED = 0x800;
  private static final int EHDR = 64;
  private static final int PHDR = 56;
  private static final int SHDR = 64;

  private FuzzImage() {}

  /** Splits a fuzz input into sections (see the class comment). */
  public static List<Section> decode(byte[] input) {
    List<Section> out = new ArrayList<>();
    Kind[] kinds = Kind.values();
    int p = 0;
    while (p + 4 <= input.length) {
      Kind kind = kinds[(input[p] & 0xff) % kinds.length];
      boolean compressed = (input[p + 1] & 1) != 0;
      int len = (input[p + 2] & 0xff) | (input[p + 3] & 0xff) << 8;
      p += 4;
      int n = Math.min(len, input.length - p);
      byte[] data = new byte[n];
      System.arraycopy(input, p, data, 0, n);
      p += n;
      out.add(new Section(kind, compressed, data));
    }
    return out;
  }

  /** The fuzz input for a list of sections (the inverse of {@link #decode}). */
  public static byte[] encode(List<Section> sections) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Section s : sections) {
      if (s.data().length > 0xffff) {
        throw new IllegalArgumentException(s.kind() + ": " + s.data().length + " bytes, at most 65535");
      }
      out.write(s.kind().ordinal());
      out.write(s.compressed() ? 1 : 0);
      out.write(s.data().length & 0xff);
      out.write(s.data().length >>> 8);
      out.writeBytes(s.data());
    }
    return out.toByteArray();
  }

  /** The ELF image of a fuzz input. */
  public static ByteBuffer elf(byte[] input) {
    return elf(decode(input));
  }

  /**
   * Lays the sections out as an ET_EXEC x86-64 image: header, program headers (one PT_LOAD per loaded
   * section), the section contents, {@code .shstrtab}, the section headers ({@code .symtab} linked to the
   * first {@code .strtab}).
   */
  public static ByteBuffer elf(List<Section> sections) {
    ByteArrayOutputStream shstr = new ByteArrayOutputStream();
    shstr.write(0);
    Map<String, Integer> nameOff = new LinkedHashMap<>();
    for (Section s : sections) {
      nameOff.computeIfAbsent(s.kind().name, n -> {
        int off = shstr.size();
        shstr.writeBytes(n.getBytes(StandardCharsets.US_ASCII));
        shstr.write(0);
        return off;
      });
    }
    int shstrName = shstr.size();
    shstr.writeBytes(".shstrtab\0".getBytes(StandardCharsets.US_ASCII));
    byte[] shstrtab = shstr.toByteArray();

    int loaded = 0;
    for (Section s : sections) {
      loaded += s.kind().addr != 0 ? 1 : 0;
    }
    int dataStart = EHDR + PHDR * loaded;
    int size = dataStart;
    for (Section s : sections) {
      size += s.data().length;
    }
    int shstrOff = size;
    size += shstrtab.length;
    int shoff = (size + 7) & ~7;
    int shnum = sections.size() + 2;
    ByteBuffer b = ByteBuffer.allocate(shoff + SHDR * shnum).order(ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1});
    b.putShort(0x10, (short) 2).putShort(0x12, (short) 62).putInt(0x14, 1);
    b.putLong(0x18, Kind.TEXT.addr);
    b.putLong(0x20, loaded == 0 ? 0 : EHDR).putLong(0x28, shoff);
    b.putShort(0x34, (short) EHDR).putShort(0x36, (short) PHDR).putShort(0x38, (short) loaded);
    b.putShort(0x3a, (short) SHDR).putShort(0x3c, (short) shnum).putShort(0x3e, (short) (shnum - 1));

    int strtabIndex = 0;
    for (int i = 0; i < sections.size(); i++) {
      if (sections.get(i).kind() == Kind.STRTAB) {
        strtabIndex = i + 1;
        break;
      }
    }
    int off = dataStart;
    int ph = EHDR;
    for (int i = 0; i < sections.size(); i++) {
      Section s = sections.get(i);
      Kind k = s.kind();
      b.put(off, s.data());
      int at = shoff + SHDR * (i + 1);
      int type = k == Kind.SYMTAB ? SHT_SYMTAB : k == Kind.STRTAB ? SHT_STRTAB : SHT_PROGBITS;
      long flags = (s.compressed() ? SHF_COMPRESSED : 0) | (k.addr != 0 ? SHF_ALLOC : 0)
          | ((k.segmentFlags & PF_W) != 0 ? SHF_WRITE : 0) | ((k.segmentFlags & PF_X) != 0 ? SHF_EXECINSTR : 0);
      b.putInt(at, nameOff.get(k.name)).putInt(at + 4, type).putLong(at + 8, flags).putLong(at + 16, k.addr)
          .putLong(at + 24, off).putLong(at + 32, s.data().length)
          .putInt(at + 40, k == Kind.SYMTAB ? strtabIndex : 0)
          .putLong(at + 48, 1).putLong(at + 56, k == Kind.SYMTAB ? 24 : 0);
      if (k.addr != 0) {
        b.putInt(ph, 1).putInt(ph + 4, k.segmentFlags).putLong(ph + 8, off).putLong(ph + 16, k.addr)
            .putLong(ph + 24, k.addr).putLong(ph + 32, s.data().length).putLong(ph + 40, s.data().length)
            .putLong(ph + 48, 0x1000);
        ph += PHDR;
      }
      off += s.data().length;
    }
    b.put(shstrOff, shstrtab);
    int at = shoff + SHDR * (shnum - 1);
    b.putInt(at, shstrName).putInt(at + 4, SHT_STRTAB).putLong(at + 24, shstrOff).putLong(at + 32, shstrtab.length)
        .putLong(at + 48, 1);
    b.position(0);
    return b;
  }
}
