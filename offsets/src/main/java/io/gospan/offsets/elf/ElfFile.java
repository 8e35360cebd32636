package io.gospan.offsets.elf;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.NotElfException;
import io.gospan.offsets.UnsupportedArchitectureException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * A memory-mapped ELF64 little-endian x86-64 file: header, section and program header tables, section
 * contents (decompressed on demand) and {@code .symtab} lookups. Nothing beyond the header tables is read
 * until asked for.
 *
 * <p>Source of the layout: System V gABI (ELF64 header, section and program headers, ELF64_Chdr) as read by
 * Go src/debug/elf/file.go (go1.26); {@code .zdebug_*} framing ("ZLIB" + 8-byte big-endian size) as
 * written by Go's linker before go1.19 (src/cmd/link/internal/ld/dwarf.go, go1.18).
 */
public final class ElfFile {
  /** EM_X86_64. */
  public static final int EM_X86_64 = 62;
  /** e_type of a position-dependent executable. */
  public static final int ET_EXEC = 2;
  /** e_type of a shared object or a position-independent executable (PIE). */
  public static final int ET_DYN = 3;

  private static final int ELF64_EHDR_SIZE = 64;
  private static final int ELF64_SHDR_SIZE = 64;
  private static final int ELF64_PHDR_SIZE = 56;
  private static final int ELF64_SYM_SIZE = 24;
  private static final int ELF64_CHDR_SIZE = 24;
  private static final int ELFCOMPRESS_ZLIB = 1;
  /** A compressed section may claim at most this many times its stored size (zlib tops out near 1032:1). */
  private static final long MAX_INFLATE_RATIO = 1100;
  private static final long MAX_INFLATED_SIZE = Integer.MAX_VALUE - 16;
  private static final long PLAUSIBLE_INFLATE_RATIO = 16;
  /** {@code .zdebug_*} framing: "ZLIB" and the uncompressed size, 8 bytes big-endian. */
  private static final int ZDEBUG_HEADER_SIZE = 12;
  // st_mode file types (Linux include/uapi/linux/stat.h)
  private static final int S_IFMT = 0170000;
  private static final int S_IFSOCK = 0140000;
  private static final int S_IFREG = 0100000;
  private static final int S_IFBLK = 0060000;
  private static final int S_IFDIR = 0040000;
  private static final int S_IFCHR = 0020000;
  private static final int S_IFIFO = 0010000;

  private final Path path;
  private final ByteBuffer file;
  private final int type;
  private final List<ElfSection> sections;
  private final List<ElfSegment> segments;
  private final Map<String, ElfSection> sectionsByName = new HashMap<>();
  private final Map<String, Optional<ByteBuffer>> decompressed = new HashMap<>();

  private ElfFile(Path path, ByteBuffer file) throws GoBinaryException {
    this.path = path;
    this.file = file;
    ByteReader r = new ByteReader(file, path.toString());
    if (file.limit() < 16 || r.peek(0) != 0x7f || r.peek(1) != 'E' || r.peek(2) != 'L' || r.peek(3) != 'F') {
      throw new NotElfException(path + ": not an ELF file (no 7f 45 4c 46 magic)");
    }
    int elfClass = r.peek(4);
    int data = r.peek(5);
    if (elfClass != 2 || data != 1) {
      throw new UnsupportedArchitectureException(path + ": ELF class " + elfClass + ", data encoding " + data
          + "; only 64-bit little-endian x86-64 is supported");
    }
    if (file.limit() < ELF64_EHDR_SIZE) {
      throw new NotElfException(path + ": ELF header truncated (" + file.limit() + " bytes)");
    }
    r.seek(0x10);
    this.type = r.u16();
    int machine = r.u16();
    if (machine != EM_X86_64) {
      throw new UnsupportedArchitectureException(path + ": ELF e_machine " + machine + ", not x86-64 (62)");
    }
    r.seek(0x20);
    long phoff = r.u64();
    long shoff = r.u64();
    r.seek(0x36);
    int phentsize = r.u16();
    int phnum = r.u16();
    int shentsize = r.u16();
    int shnum = r.u16();
    int shstrndx = r.u16();
    this.segments = readSegments(r, phoff, phentsize, phnum);
    this.sections = readSections(r, shoff, shentsize, shnum, shstrndx);
    for (ElfSection s : sections) {
      sectionsByName.putIfAbsent(s.name(), s);
    }
  }

  /**
   * Maps {@code path} read-only and parses the ELF header tables.
   *
   * @throws NotElfException no ELF magic or the header is cut short
   * @throws UnsupportedArchitectureException not ELFCLASS64 / little-endian / EM_X86_64
   * @throws CorruptBinaryException header tables point outside the file
   * @throws NotRegularFileException {@code path} is a FIFO, socket, device or directory (checked before it
   *     is opened, so a FIFO never blocks the caller)
   * @throws IOException the file cannot be read ({@link java.nio.file.NoSuchFileException},
   *     {@link java.nio.file.AccessDeniedException}, ...)
   */
  public static ElfFile open(Path path) throws IOException {
    requireRegularFile(path);
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size > Integer.MAX_VALUE) {
        throw new CorruptBinaryException(path + ": files over 2 GiB are not supported (" + size + " bytes)");
      }
      MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
      map.order(ByteOrder.LITTLE_ENDIAN);
      return new ElfFile(path, map);
    }
  }

  /**
   * Checks that {@code path} (symbolic links followed, as {@code /proc/<pid>/exe} needs) is a regular file,
   * without opening it. The type comes from {@code st_mode} (the "unix" attribute view, Linux); where that
   * view is missing, a directory is still named and other special files are "special file".
   *
   * <p>A file swapped for a FIFO between this check and an open can still block the open: the check is
   * meant for paths a user gives, not for a path an adversary can replace at will.
   *
   * @throws NotRegularFileException a FIFO, socket, device or directory
   * @throws java.nio.file.NoSuchFileException nothing there (or a dangling link)
   * @throws java.nio.file.AccessDeniedException the path cannot be examined (e.g. {@code /proc/1/exe} of
   *     another user's process)
   * @throws IOException another failure to read the file's attributes
   */
  public static void requireRegularFile(Path path) throws IOException {
    String kind;
    try {
      Object mode = Files.getAttribute(path, "unix:mode");
      int fmt = ((Integer) mode) & S_IFMT;
      switch (fmt) {
        case S_IFREG:
          return;
        case S_IFIFO:
          kind = "fifo";
          break;
        case S_IFSOCK:
          kind = "socket";
          break;
        case S_IFCHR:
          kind = "character device";
          break;
        case S_IFBLK:
          kind = "block device";
          break;
        case S_IFDIR:
          kind = "directory";
          break;
        default:
          kind = "special file";
          break;
      }
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
      if (a.isRegularFile()) {
        return;
      }
      kind = a.isDirectory() ? "directory" : "special file";
    }
    throw new NotRegularFileException(path, kind);
  }

  /**
   * Parses an ELF image already in memory (e.g. copied out of a container); {@code name} is used in
   * messages only.
   *
   * @throws NotElfException no ELF magic or the header is cut short
   * @throws UnsupportedArchitectureException not ELFCLASS64 / little-endian / EM_X86_64
   * @throws CorruptBinaryException header tables point outside the image
   */
  public static ElfFile of(Path name, ByteBuffer contents) throws GoBinaryException {
    ByteBuffer b = contents.slice().order(ByteOrder.LITTLE_ENDIAN);
    return new ElfFile(name, b);
  }

  private List<ElfSegment> readSegments(ByteReader r, long phoff, int phentsize, int phnum)
      throws GoBinaryException {
    List<ElfSegment> out = new ArrayList<>();
    if (phnum == 0) {
      return out;
    }
    if (phentsize < ELF64_PHDR_SIZE) {
      throw new CorruptBinaryException(path + ": e_phentsize " + phentsize);
    }
    for (int i = 0; i < phnum; i++) {
      r.seek(checkedOffset(phoff, (long) i * phentsize, "program header " + i));
      int type = (int) r.u32();
      int flags = (int) r.u32();
      long offset = r.u64();
      long vaddr = r.u64();
      r.u64(); // paddr
      long filesz = r.u64();
      long memsz = r.u64();
      out.add(new ElfSegment(type, flags, offset, vaddr, filesz, memsz));
    }
    return List.copyOf(out);
  }

  private List<ElfSection> readSections(ByteReader r, long shoff, int shentsize, int shnum, int shstrndx)
      throws GoBinaryException {
    if (shnum == 0) {
      return List.of();
    }
    if (shentsize < ELF64_SHDR_SIZE) {
      throw new CorruptBinaryException(path + ": e_shentsize " + shentsize);
    }
    long[][] raw = new long[shnum][];
    int[] nameOff = new int[shnum];
    for (int i = 0; i < shnum; i++) {
      r.seek(checkedOffset(shoff, (long) i * shentsize, "section header " + i));
      nameOff[i] = (int) r.u32();
      long type = r.u32();
      long flags = r.u64();
      long addr = r.u64();
      long offset = r.u64();
      long size = r.u64();
      long link = r.u32();
      r.u32(); // info
      r.u64(); // addralign
      long entsize = r.u64();
      raw[i] = new long[] {type, flags, addr, offset, size, link, entsize};
    }
    if (shstrndx >= shnum) {
      throw new CorruptBinaryException(path + ": e_shstrndx " + shstrndx + " >= e_shnum " + shnum);
    }
    ByteBuffer strtab = slice(raw[shstrndx][3], raw[shstrndx][0] == ElfSection.SHT_NOBITS ? 0 : raw[shstrndx][4],
        ".shstrtab");
    ByteReader names = new ByteReader(strtab, path + ": .shstrtab");
    List<ElfSection> out = new ArrayList<>(shnum);
    for (int i = 0; i < shnum; i++) {
      String name = i == 0 ? "" : names.seek(Integer.toUnsignedLong(nameOff[i])).cstring();
      long[] s = raw[i];
      out.add(new ElfSection(name, (int) s[0], s[1], s[2], s[3], s[4], (int) s[5], s[6]));
    }
    return List.copyOf(out);
  }

  private long checkedOffset(long base, long delta, String what) throws CorruptBinaryException {
    long off = base + delta;
    if (base < 0 || off < 0 || off > file.limit()) {
      throw new CorruptBinaryException(path + ": " + what + " at " + Long.toUnsignedString(off)
          + " outside the file (" + file.limit() + " bytes)");
    }
    return off;
  }

  private ByteBuffer slice(long offset, long size, String what) throws CorruptBinaryException {
    if (offset < 0 || size < 0 || offset > file.limit() || size > file.limit() - offset) {
      throw new CorruptBinaryException(path + ": " + what + " [" + Long.toUnsignedString(offset) + ", +"
          + Long.toUnsignedString(size) + ") outside the file (" + file.limit() + " bytes)");
    }
    return file.slice((int) offset, (int) size).order(ByteOrder.LITTLE_ENDIAN);
  }

  public Path path() {
    return path;
  }

  /** File size in bytes. */
  public long size() {
    return file.limit();
  }

  public List<ElfSection> sections() {
    return sections;
  }

  public List<ElfSegment> segments() {
    return segments;
  }

  /** The first section named {@code name}. */
  public Optional<ElfSection> section(String name) {
    return Optional.ofNullable(sectionsByName.get(name));
  }

  /**
   * Raw stored contents of a section (still compressed if it is); empty for SHT_NOBITS.
   *
   * @throws CorruptBinaryException the section lies outside the file
   */
  public ByteBuffer rawData(ElfSection s) throws CorruptBinaryException {
    if (s.type() == ElfSection.SHT_NOBITS) {
      return ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);
    }
    return slice(s.offset(), s.size(), "section " + s.name());
  }

  /**
   * Contents of a section, inflated when SHF_COMPRESSED (ELF64_Chdr + zlib stream).
   *
   * @throws CorruptBinaryException outside the file, unknown compression, bad zlib data or size mismatch
   */
  public ByteBuffer data(ElfSection s) throws CorruptBinaryException {
    ByteBuffer raw = rawData(s);
    if (!s.isCompressed()) {
      return raw;
    }
    if (raw.limit() < ELF64_CHDR_SIZE) {
      throw new CorruptBinaryException(path + ": " + s.name() + ": truncated: " + raw.limit()
          + " bytes, shorter than its " + ELF64_CHDR_SIZE + "-byte ELF64_Chdr");
    }
    ByteReader r = new ByteReader(raw, path + ": " + s.name());
    int type = (int) r.u32();
    r.u32();
    long size = r.u64();
    r.u64();
    if (type != ELFCOMPRESS_ZLIB) {
      throw new CorruptBinaryException(path + ": " + s.name() + ": compression type " + type + " (only zlib)");
    }
    return inflate(r.slice(r.remaining()), size, s.name());
  }

  /**
   * The contents of DWARF section {@code .debug_<base>}, whichever way Go stored it: plain, SHF_COMPRESSED
   * (go1.19+), or {@code .zdebug_<base>} (before go1.19). Cached: each section is inflated at most once.
   *
   * @param base section name without prefix, e.g. {@code "info"}, {@code "loclists"}
   * @return empty when the binary has no such section
   * @throws CorruptBinaryException the section cannot be read or inflated
   */
  public synchronized Optional<ByteBuffer> debugSection(String base) throws CorruptBinaryException {
    Optional<ByteBuffer> cached = decompressed.get(base);
    if (cached != null) {
      return cached.map(ByteBuffer::duplicate);
    }
    Optional<ByteBuffer> result;
    ElfSection plain = sectionsByName.get(".debug_" + base);
    ElfSection z = sectionsByName.get(".zdebug_" + base);
    if (plain != null) {
      result = Optional.of(data(plain));
    } else if (z != null) {
      ByteBuffer raw = rawData(z);
      if (raw.limit() < ZDEBUG_HEADER_SIZE) {
        throw new CorruptBinaryException(path + ": " + z.name() + ": truncated: " + raw.limit()
            + " bytes, shorter than its " + ZDEBUG_HEADER_SIZE + "-byte ZLIB header");
      }
      ByteReader r = new ByteReader(raw, path + ": " + z.name());
      byte[] magic = r.bytes(4);
      if (!"ZLIB".equals(new String(magic, StandardCharsets.ISO_8859_1))) {
        throw new CorruptBinaryException(path + ": " + z.name() + ": missing ZLIB header");
      }
      long size = 0;
      for (byte b : r.bytes(8)) { // big-endian, unlike the rest of the file
        size = (size << 8) | (b & 0xff);
      }
      result = Optional.of(inflate(r.slice(r.remaining()), size, z.name()));
    } else {
      result = Optional.empty();
    }
    decompressed.put(base, result);
    return result.map(ByteBuffer::duplicate);
  }

  /** Drops the inflated DWARF sections; they are inflated again if asked for. */
  public synchronized void releaseCaches() {
    decompressed.clear();
  }

  private ByteBuffer inflate(ByteBuffer in, long size, String name) throws CorruptBinaryException {
    if (size < 0 || size > MAX_INFLATED_SIZE || size > (in.limit() + 64L) * MAX_INFLATE_RATIO) {
      throw new CorruptBinaryException(path + ": " + name + ": implausible uncompressed size "
          + Long.toUnsignedString(size) + " for " + in.limit() + " compressed bytes");
    }
    Inflater inf = new Inflater();
    try {
      inf.setInput(in.duplicate());
      // A plausible size (DWARF inflates 3-5x) is allocated at once; a larger claim is grown towards, so a
      // corrupt size field costs no more than the data really inflates to.
      long plausible = in.limit() * PLAUSIBLE_INFLATE_RATIO + (1 << 20);
      byte[] out = new byte[(int) Math.min(size, plausible)];
      int n = 0;
      while (n < size) {
        if (n == out.length) {
          out = java.util.Arrays.copyOf(out, (int) Math.min(size, out.length * 2L));
        }
        int k = inf.inflate(out, n, out.length - n);
        if (k == 0 && (inf.finished() || inf.needsInput() || inf.needsDictionary())) {
          break;
        }
        n += k;
      }
      if (n != size || !inf.finished()) {
        throw new CorruptBinaryException(path + ": " + name + ": zlib stream gave " + n + " bytes, header says "
            + size);
      }
      return ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
    } catch (DataFormatException e) {
      throw new CorruptBinaryException(path + ": " + name + ": bad zlib data: " + e.getMessage(), e);
    } finally {
      inf.end();
    }
  }

  /** {@code e_type}: {@link #ET_EXEC} for a position-dependent executable, {@link #ET_DYN} for a PIE. */
  public int type() {
    return type;
  }

  /**
   * The read-only data: the largest PT_LOAD segment mapped readable, neither writable nor executable,
   * as {@code [start, end)} link-time virtual addresses (a Go binary's .rodata, type links and pclntab:
   * its string literals are there). A PIE's move with its load bias ({@link #executableStart()}).
   * Empty when no such segment exists.
   */
  public Optional<long[]> readOnlyData() {
    ElfSegment best = null;
    for (ElfSegment p : segments) {
      if (p.type() == ElfSegment.PT_LOAD && (p.flags() & 7) == 4 && (best == null || p.filesz() > best.filesz())) {
        best = p;
      }
    }
    return best == null || best.filesz() == 0
        ? Optional.empty()
        : Optional.of(new long[] {best.vaddr(), best.vaddr() + best.filesz()});
  }

  /**
   * The link-time address of the executable code: the lowest {@code p_vaddr} of a PT_LOAD segment with
   * {@code PF_X}, which Linux's ELF loader adds the load bias to for {@code mm->start_code} (fs/binfmt_elf.c
   * {@code load_elf_binary}): a running PIE's bias is its {@code start_code} minus this.
   *
   * @return empty when no segment is executable
   */
  public java.util.OptionalLong executableStart() {
    long min = Long.MAX_VALUE;
    for (ElfSegment p : segments) {
      if (p.type() == ElfSegment.PT_LOAD && (p.flags() & 1) != 0) {
        min = Math.min(min, p.vaddr());
      }
    }
    return min == Long.MAX_VALUE ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(min);
  }

  /** Whether the executable is position-independent ({@code ET_DYN}): it is loaded at a bias chosen per process. */
  public boolean positionIndependent() {
    return type == ET_DYN;
  }

  /** The PT_LOAD segment whose file-backed bytes hold {@code address}. */
  public Optional<ElfSegment> loadSegmentFor(long address) {
    for (ElfSegment p : segments) {
      if (p.type() == ElfSegment.PT_LOAD && p.containsFileAddress(address)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /**
   * File offset of a virtual address: {@code address - p_vaddr + p_offset} of the PT_LOAD segment holding
   * it (what uprobes attach to); empty when no segment holds it or the segment claims file bytes past the
   * end of the file (a truncated or forged program header: the offset would name no byte of the file).
   */
  public Optional<Long> fileOffset(long address) {
    return loadSegmentFor(address).map(p -> address - p.vaddr() + p.offset())
        .filter(off -> off >= 0 && off < file.limit());
  }

  /**
   * Reads {@code n} bytes at a virtual address through the PT_LOAD segments.
   *
   * @throws CorruptBinaryException the range is not file-backed
   */
  public ByteBuffer readAddress(long address, long n) throws CorruptBinaryException {
    ElfSegment p = loadSegmentFor(address).orElseThrow(() -> new CorruptBinaryException(
        path + ": address 0x" + Long.toHexString(address) + " is in no PT_LOAD segment"));
    long off = address - p.vaddr();
    if (n < 0 || n > p.filesz() - off) {
      throw new CorruptBinaryException(path + ": " + n + " bytes at 0x" + Long.toHexString(address)
          + " run past the end of the segment");
    }
    return slice(p.offset() + off, n, "data at 0x" + Long.toHexString(address));
  }

  /** True when a {@code .symtab} with at least one entry is present (false after {@code -ldflags=-s}). */
  public boolean hasSymbols() {
    ElfSection s = sectionsByName.get(".symtab");
    return s != null && s.type() == ElfSection.SHT_SYMTAB && s.size() >= 2 * ELF64_SYM_SIZE;
  }

  /**
   * Looks up several names in {@code .symtab} in one pass. First match wins, as in Go's debug/elf.
   *
   * @return found symbols by name; empty when there is no symbol table
   * @throws CorruptBinaryException the symbol or string table lies outside the file
   */
  public Map<String, ElfSymbol> symbols(Collection<String> names) throws CorruptBinaryException {
    Map<String, ElfSymbol> out = new HashMap<>();
    List<byte[]> wanted = new ArrayList<>();
    for (String n : names) {
      wanted.add(n.getBytes(StandardCharsets.UTF_8));
    }
    // Compare in place: most names differ from every candidate within a few bytes, so no name is measured
    // or decoded unless it matches.
    scanSymbols((strtab, nameOff) -> {
      for (byte[] c : wanted) {
        if (strtab.cstringEquals(nameOff, c)) {
          return new String(c, StandardCharsets.UTF_8);
        }
      }
      return null;
    }, out);
    return out;
  }

  /**
   * All {@code .symtab} symbols whose name starts with {@code prefix} and satisfies {@code filter}; names are
   * decoded only for symbols with the prefix.
   */
  public Map<String, ElfSymbol> symbolsWithPrefix(String prefix, Predicate<String> filter)
      throws CorruptBinaryException {
    byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
    Map<String, ElfSymbol> out = new HashMap<>();
    scanSymbols((strtab, nameOff) -> {
      for (int i = 0; i < p.length; i++) {
        if (strtab.peek(nameOff + i) != (p[i] & 0xff)) {
          return null;
        }
      }
      int len = strtab.cstringLength(nameOff);
      if (len < 0) {
        return null;
      }
      String name = strtab.string(nameOff, len);
      return filter.test(name) ? name : null;
    }, out);
    return out;
  }

  private interface NameMatcher {
    String match(ByteReader strtab, int nameOff) throws CorruptBinaryException;
  }

  private void scanSymbols(NameMatcher matcher, Map<String, ElfSymbol> out) throws CorruptBinaryException {
    if (!hasSymbols()) {
      return;
    }
    ElfSection symtab = sectionsByName.get(".symtab");
    if (symtab.link() < 0 || symtab.link() >= sections.size()) {
      throw new CorruptBinaryException(path + ": .symtab sh_link " + symtab.link());
    }
    ByteReader syms = new ByteReader(rawData(symtab), path + ": .symtab");
    ByteReader strtab = new ByteReader(rawData(sections.get(symtab.link())), path + ": .strtab");
    long count = symtab.size() / ELF64_SYM_SIZE;
    for (long i = 1; i < count; i++) {
      syms.seek(i * ELF64_SYM_SIZE);
      long nameOff = syms.u32();
      if (nameOff == 0 || nameOff >= strtab.limit()) {
        continue;
      }
      String name = matcher.match(strtab, (int) nameOff);
      if (name == null || out.containsKey(name)) {
        continue;
      }
      int info = syms.u8();
      syms.u8();
      int shndx = syms.u16();
      long value = syms.u64();
      long size = syms.u64();
      out.put(name, new ElfSymbol(name, value, size, info & 0xf, shndx));
    }
  }
}
