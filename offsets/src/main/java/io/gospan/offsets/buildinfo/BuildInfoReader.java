package io.gospan.offsets.buildinfo;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.NotGoBinaryException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.ElfSection;
import io.gospan.offsets.elf.ElfSegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads the build info blob of a Go ELF binary, as Go src/debug/buildinfo/buildinfo.go (go1.26) does:
 *
 * <ul>
 *   <li>the blob lives in section {@code .go.buildinfo}, else near the start of the first writable,
 *       non-executable PT_LOAD segment, 16-byte aligned, starting with {@code "\xff Go buildinf:"};
 *   <li>a 32-byte header: magic[14], ptrSize, flags, then (pre-go1.18, flags bit 1 clear) two pointers to
 *       Go string headers for the version and module info; since go1.18 (flags bit 1 set) the two strings
 *       follow inline, each prefixed with its uvarint length;
 *   <li>module info is framed by 16-byte sentinels and parsed like runtime/debug.ParseBuildInfo.
 * </ul>
 */
public final class BuildInfoReader {
  private static final byte[] MAGIC = "\u00ff Go buildinf:".getBytes(StandardCharsets.ISO_8859_1);
  private static final int HEADER_SIZE = 32;
  private static final int ALIGN = 16;
  private static final int MAX_SEARCH = 64 << 20;

  private BuildInfoReader() {}

  /**
   * @throws NotGoBinaryException no build info blob, or no version string in it
   * @throws CorruptBinaryException the blob or a string it points to is truncated or malformed
   */
  public static BuildInfo read(ElfFile elf) throws GoBinaryException {
    long[] start = dataStart(elf);
    if (start == null || start[1] == 0) {
      throw new NotGoBinaryException(elf.path() + ": no .go.buildinfo section and no data segment");
    }
    long addr = searchMagic(elf, start[0], start[1]);
    ByteReader hdr = new ByteReader(elf.readAddress(addr, HEADER_SIZE), elf.path() + ": build info header");
    hdr.seek(14);
    int ptrSize = hdr.u8();
    int flags = hdr.u8();
    String vers;
    String mod;
    if ((flags & 2) != 0) {
      ByteReader r = new ByteReader(readToSegmentEnd(elf, addr + HEADER_SIZE), elf.path() + ": build info");
      vers = inlineString(r);
      mod = inlineString(r);
    } else {
      if ((flags & 1) != 0) {
        throw new CorruptBinaryException(elf.path() + ": big-endian build info on x86-64");
      }
      if (ptrSize != 8 && ptrSize != 4) {
        throw new NotGoBinaryException(elf.path() + ": build info pointer size " + ptrSize);
      }
      long versPtr = hdr.unsigned(ptrSize);
      long modPtr = hdr.unsigned(ptrSize);
      vers = pointedString(elf, ptrSize, versPtr);
      mod = pointedString(elf, ptrSize, modPtr);
    }
    if (vers.isEmpty()) {
      throw new NotGoBinaryException(elf.path() + ": build info without a Go version");
    }
    if (mod.length() >= 33 && mod.charAt(mod.length() - 17) == '\n') {
      mod = mod.substring(16, mod.length() - 16);
    } else {
      mod = "";
    }
    return parse(vers, mod, elf.path().toString());
  }

  private static long[] dataStart(ElfFile elf) {
    Optional<ElfSection> s = elf.section(".go.buildinfo");
    if (s.isPresent()) {
      return new long[] {s.get().addr(), s.get().size()};
    }
    for (ElfSegment p : elf.segments()) {
      if (p.type() == ElfSegment.PT_LOAD && (p.flags() & 3) == 2) {
        return new long[] {p.vaddr(), p.memsz()};
      }
    }
    return null;
  }

  private static long searchMagic(ElfFile elf, long start, long size) throws GoBinaryException {
    ElfSegment seg = elf.loadSegmentFor(start).orElseThrow(() -> new NotGoBinaryException(
        elf.path() + ": build info address 0x" + Long.toHexString(start) + " is not in the file"));
    long avail = Math.min(Math.min(size, seg.vaddr() + seg.filesz() - start), MAX_SEARCH);
    ByteReader r = new ByteReader(elf.readAddress(start, avail), elf.path() + ": data");
    // Go aligns the blob to 16 bytes relative to the start address of the data.
    for (int off = 0; off + HEADER_SIZE <= avail; off += ALIGN) {
      boolean match = true;
      for (int i = 0; i < MAGIC.length; i++) {
        if (r.peek(off + i) != (MAGIC[i] & 0xff)) {
          match = false;
          break;
        }
      }
      if (match) {
        return start + off;
      }
    }
    throw new NotGoBinaryException(elf.path() + ": no Go build info magic in the data segment");
  }

  private static ByteBuffer readToSegmentEnd(ElfFile elf, long addr) throws GoBinaryException {
    ElfSegment seg = elf.loadSegmentFor(addr).orElseThrow(() -> new CorruptBinaryException(
        elf.path() + ": build info strings outside the file"));
    return elf.readAddress(addr, seg.vaddr() + seg.filesz() - addr);
  }

  private static String inlineString(ByteReader r) throws GoBinaryException {
    long len = r.uleb();
    if (len < 0 || len > r.remaining()) {
      throw new CorruptBinaryException(r.what() + ": string length " + Long.toUnsignedString(len)
          + " runs past the segment");
    }
    return new String(r.bytes(len), StandardCharsets.UTF_8);
  }

  private static String pointedString(ElfFile elf, int ptrSize, long addr) throws GoBinaryException {
    ByteReader h = new ByteReader(elf.readAddress(addr, 2L * ptrSize), elf.path() + ": build info string");
    long data = h.unsigned(ptrSize);
    long len = h.unsigned(ptrSize);
    if (len == 0) {
      return "";
    }
    ByteBuffer b = elf.readAddress(data, len);
    byte[] bytes = new byte[b.limit()];
    b.get(0, bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * Parses module info text like Go's runtime/debug.ParseBuildInfo (go1.26): lines {@code path}, {@code mod},
   * {@code dep}, {@code =>} (replacement of the module on the previous line) and {@code build key=value}.
   *
   * @throws CorruptBinaryException a line breaks the format
   */
  public static BuildInfo parse(String goVersion, String modinfo, String where) throws CorruptBinaryException {
    String path = "";
    Module main = null;
    List<Module> deps = new ArrayList<>();
    List<BuildSetting> settings = new ArrayList<>();
    // Index of the module a "=>" line replaces: -1 main, >= 0 a dep, MIN_VALUE none.
    int last = Integer.MIN_VALUE;
    int lineNum = 0;
    int pos = 0;
    while (pos < modinfo.length()) {
      int nl = modinfo.indexOf('\n', pos);
      if (nl < 0) {
        break; // as Go: a final line without newline is ignored
      }
      String line = modinfo.substring(pos, nl);
      pos = nl + 1;
      lineNum++;
      if (line.startsWith("path\t")) {
        path = line.substring(5);
      } else if (line.startsWith("mod\t")) {
        main = moduleLine(line.substring(4), where, lineNum);
        last = -1;
      } else if (line.startsWith("dep\t")) {
        deps.add(moduleLine(line.substring(4), where, lineNum));
        last = deps.size() - 1;
      } else if (line.startsWith("=>\t")) {
        String[] e = line.substring(3).split("\t", -1);
        if (e.length != 3) {
          throw bad(where, lineNum, "expected 3 columns for replacement; got " + e.length);
        }
        Module rep = new Module(e[0], e[1], e[2], Optional.empty());
        if (last == -1) {
          main = new Module(main.path(), main.version(), main.sum(), Optional.of(rep));
        } else if (last >= 0) {
          Module m = deps.get(last);
          deps.set(last, new Module(m.path(), m.version(), m.sum(), Optional.of(rep)));
        } else {
          throw bad(where, lineNum, "replacement with no module on previous line");
        }
        last = Integer.MIN_VALUE;
      } else if (line.startsWith("build\t")) {
        settings.add(setting(line.substring(6), where, lineNum));
      }
    }
    return new BuildInfo(goVersion, path, Optional.ofNullable(main), List.copyOf(deps), List.copyOf(settings));
  }

  private static Module moduleLine(String s, String where, int lineNum) throws CorruptBinaryException {
    String[] e = s.split("\t", -1);
    if (e.length != 2 && e.length != 3) {
      throw bad(where, lineNum, "expected 2 or 3 columns; got " + e.length);
    }
    return new Module(e[0], e[1], e.length == 3 ? e[2] : "", Optional.empty());
  }

  private static BuildSetting setting(String kv, String where, int lineNum) throws CorruptBinaryException {
    if (kv.isEmpty()) {
      throw bad(where, lineNum, "build line missing '='");
    }
    String key;
    String raw;
    char c = kv.charAt(0);
    if (c == '=') {
      throw bad(where, lineNum, "build line with missing key");
    } else if (c == '"' || c == '`') {
      int end = GoStrings.quotedPrefixLength(kv);
      if (end < 0 || end >= kv.length() || kv.charAt(end) != '=') {
        throw bad(where, lineNum, "invalid quoted key in build line");
      }
      key = GoStrings.unquote(kv.substring(0, end));
      raw = kv.substring(end + 1);
    } else {
      int eq = kv.indexOf('=');
      if (eq < 0) {
        throw bad(where, lineNum, "build line missing '=' after key");
      }
      key = kv.substring(0, eq);
      raw = kv.substring(eq + 1);
    }
    String value = raw;
    if (!raw.isEmpty() && (raw.charAt(0) == '"' || raw.charAt(0) == '`')) {
      value = GoStrings.unquote(raw);
      if (value == null) {
        throw bad(where, lineNum, "invalid quoted value in build line");
      }
    }
    if (key == null) {
      throw bad(where, lineNum, "invalid quoted key in build line");
    }
    return new BuildSetting(key, value);
  }

  private static CorruptBinaryException bad(String where, int lineNum, String msg) {
    return new CorruptBinaryException(where + ": could not parse Go build info: line " + lineNum + ": " + msg);
  }
}
