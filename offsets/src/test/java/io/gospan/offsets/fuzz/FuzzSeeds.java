package io.gospan.offsets.fuzz;

import static io.gospan.offsets.fuzz.DwarfWriter.a;
import static io.gospan.offsets.fuzz.DwarfWriter.implicit;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.fuzz.FuzzImage.Kind;
import io.gospan.offsets.fuzz.FuzzImage.Section;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.Deflater;

/**
 * The seed corpus of {@link GoBinaryFuzzTest}: small images that reach deep into each reader, written
 * from the formats' definitions rather than cut from real binaries (a Go binary is megabytes; each seed
 * here is a few hundred bytes to a few KB). Each seed answers the probes' questions ({@link
 * FuzzSeedsTest} checks the answers, and that the committed files are what this class writes).
 *
 * <p>Formats: build info as Go src/debug/buildinfo/buildinfo.go (go1.26) reads it, inline (go1.18+) and
 * pointer (before) forms; {@code .gopclntab} headers and function tables of go1.2, go1.16, go1.18 and
 * go1.20+ (src/debug/gosym/pclntab.go); {@code runtime.firstmoduledata}, runtime type descriptors, names
 * and itabs (src/internal/abi/type.go, iface.go, go1.26; src/runtime/type.go before go1.21; go1.27's itabs
 * inside the type data, src/runtime/symtab.go); DWARF 4 and 5
 * as Go's linker writes them (src/cmd/internal/dwarf/dwarf.go), plain, SHF_COMPRESSED and
 * {@code .zdebug_*}.
 *
 * <p>Regenerate the committed files with {@code mvn -pl offsets test -Dtest=FuzzSeedsTest
 * -Dgospan.fuzz.writeSeeds=true}.
 */
public final class FuzzSeeds {
  static final String WRITE_HEADER = "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader";
  static final String CLIENT_OPERATE = "google.golang.org/grpc/internal/transport.(*http2Client).operateHeaders";
  static final String SERVER_OPERATE = "google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders";
  static final long TEXT = Kind.TEXT.address();
  /** Each function of a seed's function table takes this many bytes of {@code .text}. */
  static final int FUNCTION_SIZE = 0x40;

  private static final String MOD_START = "0w\u00af\u000c\u0092t\u0008\u0002A\u00e1\u00c1\u0007\u00e6\u00d6\u0018\u00e6";
  private static final String MOD_END = "\u00f92C1\u0086\u0018 r\u0000\u0082B\u0010A\u0016\u00d8\u00f2";

  /** The connection itabs {@link io.gospan.offsets.GoBinary} names, as the tests ask for them. */
  public static final List<String> CONN_ITABS = List.of(GoBinary.ITAB_TCP_CONN, GoBinary.ITAB_TLS_CONN,
      GoBinary.ITAB_GRPC_SYSCALL_CONN, GoBinary.ITAB_GRPC_SYSCALL_CONN_OLD, GoBinary.ITAB_H2C_BUF_CONN);

  private FuzzSeeds() {}

  /** Seeds by fuzz test method name, then by file name. */
  static Map<String, Map<String, byte[]>> all() {
    Map<String, Map<String, byte[]>> out = new LinkedHashMap<>();
    Map<String, List<Section>> buildInfo = buildInfoSeeds();
    Map<String, List<Section>> pclntab = pclntabSeeds();
    Map<String, List<Section>> types = runtimeTypeSeeds();
    Map<String, List<Section>> dwarf = dwarfSeeds();
    out.put("buildInfo", encode(buildInfo));
    out.put("pclntab", encode(pclntab));
    out.put("runtimeTypes", encode(types));
    out.put("dwarf", encode(dwarf));
    Map<String, byte[]> raw = new LinkedHashMap<>();
    for (Map<String, List<Section>> m : List.of(buildInfo, pclntab, types, dwarf)) {
      m.forEach((name, sections) -> raw.put(name, image(sections)));
    }
    out.put("rawImage", raw);
    return out;
  }

  private static Map<String, byte[]> encode(Map<String, List<Section>> seeds) {
    Map<String, byte[]> out = new LinkedHashMap<>();
    seeds.forEach((name, sections) -> out.put(name, FuzzImage.encode(sections)));
    return out;
  }

  static byte[] image(List<Section> sections) {
    ByteBuffer b = FuzzImage.elf(sections);
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  /** Writes the seed files under {@code resources} (the test resources root). */
  public static void write(Path resources) throws IOException {
    Path dir = resources.resolve("io/gospan/offsets/fuzz/GoBinaryFuzzTestInputs");
    for (Map.Entry<String, Map<String, byte[]>> m : all().entrySet()) {
      Path d = dir.resolve(m.getKey());
      Files.createDirectories(d);
      for (Map.Entry<String, byte[]> s : m.getValue().entrySet()) {
        Files.write(d.resolve("seed-" + s.getKey()), s.getValue());
      }
    }
  }

  static Section s(Kind kind, byte[] data) {
    return new Section(kind, false, data);
  }

  // ---------------------------------------------------------------------------------------------
  // Build info

  /** A module info text with every kind of line runtime/debug.ParseBuildInfo knows. */
  static String modinfo(String grpcVersion) {
    return "path\tgithub.com/example/app\n"
        + "mod\tgithub.com/example/app\t(devel)\t\n"
        + "dep\tgolang.org/x/net\tv0.60.0\th1:Zm9vYmFy=\n"
        + "dep\tgoogle.golang.org/grpc\t" + grpcVersion + "\th1:YmF6cXV4=\n"
        + "=>\tgithub.com/example/grpc\tv1.0.0\th1:cXV1eA==\n"
        + "build\t-compiler=gc\n"
        + "build\t\"-ldflags\"=\"-s -X \\\"main.v=\\x41\\u00e9\\\"\"\n"
        + "build\tCGO_ENABLED=0\n"
        + "build\tGOARCH=amd64\n";
  }

  private static byte[] header(int flags) {
    Bytes b = new Bytes().bytes("\u00ff Go buildinf:".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    return b.u8(8).u8(flags).zeros(16).toArray();
  }

  /** The go1.18+ blob: header with flags bit 1, then the version and the framed module info, each uvarint-prefixed. */
  static byte[] inlineBuildInfo(String goVersion, String modinfo) {
    byte[] mod = modinfo.isEmpty() ? new byte[0]
        : (MOD_START + modinfo + MOD_END).getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    byte[] vers = goVersion.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] text = modinfo.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    if (!modinfo.isEmpty()) { // the text between the sentinels is UTF-8, the sentinels raw bytes
      Bytes m = new Bytes().bytes(MOD_START.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)).bytes(text)
          .bytes(MOD_END.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
      mod = m.toArray();
    }
    return new Bytes().bytes(header(2)).uleb(vers.length).bytes(vers).uleb(mod.length).bytes(mod).toArray();
  }

  /** The pre-go1.18 blob at {@code addr}: header with two pointers to Go string headers, the strings after it. */
  static byte[] pointerBuildInfo(long addr, String goVersion, String modinfo) {
    byte[] vers = goVersion.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    Bytes m = new Bytes();
    if (!modinfo.isEmpty()) {
      m.bytes(MOD_START.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1))
          .bytes(modinfo.getBytes(java.nio.charset.StandardCharsets.UTF_8))
          .bytes(MOD_END.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    }
    byte[] mod = m.toArray();
    Bytes b = new Bytes().bytes(header(0));
    b.putU64(16, addr + 32).putU64(24, addr + 48);
    b.u64(addr + 64).u64(vers.length);
    b.u64(addr + 64 + vers.length).u64(mod.length);
    return b.bytes(vers).bytes(mod).toArray();
  }

  static Map<String, List<Section>> buildInfoSeeds() {
    Map<String, List<Section>> out = new LinkedHashMap<>();
    out.put("inline-go1.26", List.of(s(Kind.GO_BUILDINFO, inlineBuildInfo("go1.26.8", modinfo("v1.85.0"))),
        s(Kind.GOPCLNTAB, pclntab(120, List.of("main.main"), TEXT, 0))));
    out.put("pointer-go1.16", List.of(
        s(Kind.GO_BUILDINFO, pointerBuildInfo(Kind.GO_BUILDINFO.address(), "go1.16.15", modinfo("v1.40.0"))),
        s(Kind.GOPCLNTAB, pclntab(116, List.of("main.main"), TEXT, 0))));
    // No .go.buildinfo section: the blob is found by its magic in the first writable segment, 16-aligned.
    Bytes data = new Bytes().zeros(48).bytes(inlineBuildInfo("go1.22.12", modinfo("v1.60.1")));
    out.put("magic-search", List.of(s(Kind.DATA, data.toArray())));
    // A GOPATH build: no module info; grpc-go's version from its user agent in .rodata.
    Bytes ro = new Bytes().ascii("grpc-go/1.33.3grpc-go/1.33.3x").zeros(3).ascii("grpc-go/1.33.").zeros(5);
    out.put("gopath-user-agent", List.of(s(Kind.GO_BUILDINFO, inlineBuildInfo("go1.19.8", "")),
        s(Kind.RODATA, ro.toArray()), s(Kind.GOPCLNTAB, pclntab(118, List.of("main.main"), TEXT, 0))));
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // pclntab and symbols

  /**
   * A {@code .gopclntab} of format {@code format} (12, 116, 118, 120) listing {@code names} at
   * {@code TEXT + i * FUNCTION_SIZE}; go1.18+ entries are offsets from {@code textStart}, the header
   * says {@code headerTextStart}.
   */
  static byte[] pclntab(int format, List<String> names, long textStart, long headerTextStart) {
    if (format == 12) { // go1.2: the function table follows the 16-byte header
      return pclntab12(names);
    }
    int n = names.size();
    long magic = format == 12 ? 0xfffffffbL : format == 116 ? 0xfffffffaL : format == 118 ? 0xfffffff0L : 0xfffffff1L;
    int headerSize = format == 12 ? 16 : format == 116 ? 64 : 72;
    Bytes b = new Bytes().u32(magic).u16(0).u8(1).u8(8).u64(n);
    b.zeros(headerSize - 16);
    // funcnametab
    int funcnameOffset = format == 12 ? 0 : b.size();
    int[] nameOff = new int[n];
    for (int i = 0; i < n; i++) {
      nameOff[i] = b.size() - funcnameOffset;
      b.cstring(names.get(i));
    }
    b.align(8);
    int pclnOffset = b.size();
    boolean small = format >= 118;
    int entrySize = small ? 8 : 16;
    int funcStart = pclnOffset + entrySize * (n + 1);
    int funcSize = 40;
    for (int i = 0; i <= n; i++) {
      long entry = TEXT + (long) i * FUNCTION_SIZE;
      long funcoff = i < n ? funcStart + (long) i * funcSize - pclnOffset : 0;
      if (small) {
        b.u32(entry - textStart).u32(funcoff);
      } else {
        b.u64(entry).u64(funcoff);
      }
    }
    for (int i = 0; i < n; i++) {
      long entry = TEXT + (long) i * FUNCTION_SIZE;
      int start = b.size();
      if (small) {
        b.u32(entry - textStart).u32(nameOff[i]);
      } else {
        b.u64(entry).u32(nameOff[i]);
      }
      b.zeros(funcSize - (b.size() - start));
    }
    b.putU64(16, 1); // nfiles
    if (format == 116) {
      b.putU64(24, funcnameOffset).putU64(32, pclnOffset).putU64(40, pclnOffset).putU64(48, pclnOffset)
          .putU64(56, pclnOffset);
    } else {
      b.putU64(24, headerTextStart).putU64(32, funcnameOffset).putU64(40, pclnOffset).putU64(48, pclnOffset)
          .putU64(56, pclnOffset).putU64(64, pclnOffset);
    }
    return b.toArray();
  }

  /** go1.2–1.15: nfunc at 8, (entry, funcoff) pairs from 16, records and names relative to the table start. */
  private static byte[] pclntab12(List<String> names) {
    int n = names.size();
    Bytes b = new Bytes().u32(0xfffffffbL).u16(0).u8(1).u8(8).u64(n);
    int funcStart = 16 + 16 * (n + 1);
    int funcSize = 40;
    int nameStart = funcStart + funcSize * n;
    int[] nameOff = new int[n];
    int p = nameStart;
    for (int i = 0; i < n; i++) {
      nameOff[i] = p;
      p += names.get(i).getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 1;
    }
    for (int i = 0; i <= n; i++) {
      b.u64(TEXT + (long) i * FUNCTION_SIZE).u64(i < n ? funcStart + (long) i * funcSize : 0);
    }
    for (int i = 0; i < n; i++) {
      int start = b.size();
      b.u64(TEXT + (long) i * FUNCTION_SIZE).u32(nameOff[i]);
      b.zeros(funcSize - (b.size() - start));
    }
    for (String name : names) {
      b.cstring(name);
    }
    return b.toArray();
  }

  static byte[] text(int functions) {
    byte[] t = new byte[FUNCTION_SIZE * (functions + 1)];
    java.util.Arrays.fill(t, (byte) 0xcc);
    return t;
  }

  /** {@code .symtab} and {@code .strtab}: STT_FUNC symbols for {@code functions}, STT_OBJECT for {@code objects}. */
  static List<Section> symtab(Map<String, Long> functions, Map<String, Long> objects) {
    Bytes strtab = new Bytes().u8(0);
    Bytes symtab = new Bytes().zeros(24);
    Map<String, Long> all = new LinkedHashMap<>();
    all.putAll(functions);
    all.putAll(objects);
    for (Map.Entry<String, Long> e : all.entrySet()) {
      int name = strtab.size();
      strtab.cstring(e.getKey());
      int type = functions.containsKey(e.getKey()) ? 2 : 1;
      symtab.u32(name).u8(0x10 | type).u8(0).u16(1).u64(e.getValue()).u64(FUNCTION_SIZE);
    }
    return List.of(s(Kind.SYMTAB, symtab.toArray()), s(Kind.STRTAB, strtab.toArray()));
  }

  static Map<String, List<Section>> pclntabSeeds() {
    List<String> names = FuzzOracle.FUNCTIONS;
    Map<String, List<Section>> out = new LinkedHashMap<>();
    for (int format : new int[] {12, 116, 118}) {
      out.put("go1." + (format == 12 ? "2" : String.valueOf(format - 100)), List.of(
          s(Kind.TEXT, text(names.size())), s(Kind.GOPCLNTAB, pclntab(format, names, TEXT, TEXT))));
    }
    // go1.26: the header's textStart is 0, moduledata.text gives the base.
    byte[] pcln = pclntab(120, names, TEXT, 0);
    out.put("go1.26-moduledata", List.of(s(Kind.TEXT, text(names.size())), s(Kind.GOPCLNTAB, pcln),
        s(Kind.GO_MODULE, moduledata(pcln, 296, 0, 0, 400, 0, 0))));
    Map<String, Long> fns = new LinkedHashMap<>();
    for (int i = 0; i < names.size(); i++) {
      fns.put(names.get(i), TEXT + (long) i * FUNCTION_SIZE);
    }
    List<Section> sym = new ArrayList<>();
    sym.add(s(Kind.TEXT, text(names.size())));
    Map<String, Long> itabs = new LinkedHashMap<>(); // ordered: the seed's bytes must not vary between runs
    itabs.put("go:itab.*net.TCPConn,net.Conn", Kind.RODATA.address());
    itabs.put("go.itab.*crypto/tls.Conn,net.Conn", Kind.RODATA.address() + 32);
    sym.addAll(symtab(fns, itabs));
    sym.add(s(Kind.GOPCLNTAB, pclntab(120, names.subList(0, 2), TEXT, TEXT)));
    out.put("symtab", sym);
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // moduledata and runtime type information

  /**
   * A {@code .go.module}/{@code .noptrdata} payload: 8 bytes, then {@code runtime.firstmoduledata} (448
   * bytes read): pcHeader, funcnametab, text/etext, types/etypes at {@code typesOff}, the itablinks slice
   * at {@code itablinksOff}.
   */
  static byte[] moduledata(byte[] pclntab, int typesOff, long types, long etypes, int itablinksOff,
      long itablinks, long nitabs) {
    ByteBuffer p = ByteBuffer.wrap(pclntab).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    long magic = p.getInt(0) & 0xffffffffL;
    long funcnameOffset = magic == 0xfffffffaL ? p.getLong(24)
        : magic == 0xfffffff0L || magic == 0xfffffff1L ? p.getLong(32) : 0;
    long pcln = Kind.GOPCLNTAB.address();
    Bytes b = new Bytes().zeros(8 + 448);
    int m = 8;
    b.putU64(m, pcln).putU64(m + 8, pcln + funcnameOffset).putU64(m + 16, 100).putU64(m + 24, 100);
    b.putU64(m + 176, TEXT).putU64(m + 184, TEXT + 0x1000);
    if (types != 0) {
      b.putU64(m + typesOff, types).putU64(m + typesOff + 8, etypes);
      b.putU64(m + itablinksOff, itablinks).putU64(m + itablinksOff + 8, nitabs).putU64(m + itablinksOff + 16, nitabs);
    }
    return b.toArray();
  }

  /** Runtime type data at a base address: names, type descriptors, struct fields, itabs. */
  static final class TypeData {
    final long base;
    final boolean varintNames;
    final boolean plainFieldOffsets;
    final Bytes b = new Bytes();
    private final Map<String, Integer> names = new HashMap<>();
    private final Map<String, Integer> types = new HashMap<>();
    private final List<Object[]> patches = new ArrayList<>();

    TypeData(long base, int goMinor) {
      this.base = base;
      this.varintNames = goMinor >= 17;
      this.plainFieldOffsets = goMinor >= 19;
    }

    /** A name: flag byte, length (uvarint, or big-endian uint16 before go1.17), bytes. */
    int name(String s) {
      Integer have = names.get(s);
      if (have != null) {
        return have;
      }
      byte[] bytes = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      int off = b.size();
      b.u8(0);
      if (varintNames) {
        b.uleb(bytes.length);
      } else {
        b.u16be(bytes.length);
      }
      b.bytes(bytes);
      names.put(s, off);
      return off;
    }

    /** The {@code _type} header (48 bytes): size, ptrdata, hash, tflag, align, fieldAlign, kind, equal, gcdata, str, ptrToThis. */
    private int type(String label, long size, int tflag, int kind, String str) {
      int str0 = name(str);
      b.align(8);
      int off = b.size();
      types.put(label, off);
      b.u64(size).u64(0).u32(0x1234).u8(tflag).u8(8).u8(8).u8(kind).u64(0).u64(0).u32(str0).u32(0);
      return off;
    }

    private void pointerTo(String label) {
      patches.add(new Object[] {b.size(), label});
      b.u64(0);
    }

    private void uncommon(String pkg) {
      b.u32(name(pkg)).u16(0).u16(0).u32(0).u32(0);
    }

    void basic(String label, long size, int kind) {
      type(label, size, 4 | 2, kind, "*" + label);
    }

    /** A pointer type {@code *pkgName.T} with its package path in an uncommontype. */
    void pointer(String label, String typeString, String elem, String pkgPath) {
      int pkg = name(pkgPath);
      type(label, 8, 1, 22, typeString);
      pointerTo(elem);
      b.u32(pkg).u16(0).u16(0).u32(0).u32(0);
    }

    /** A named struct; {@code fields} are (name, type label, offset, embedded?) entries. */
    void struct(String label, String typeString, String pkgPath, long size, Object[]... fields) {
      for (Object[] f : fields) {
        name((String) f[0]);
      }
      name(pkgPath);
      b.align(8);
      int fieldsAt = b.size();
      for (Object[] f : fields) {
        b.u64(base + name((String) f[0]));
        pointerTo((String) f[1]);
        long off = (Long) f[2];
        b.u64(plainFieldOffsets ? off : off << 1 | ((Boolean) f[3] ? 1 : 0));
      }
      type(label, size, 1 | 2 | 4, 25, "*" + typeString);
      b.u64(base + name(pkgPath)).u64(base + fieldsAt).u64(fields.length).u64(fields.length);
      uncommon(pkgPath);
    }

    void iface(String label, String typeString, String pkgPath) {
      int pkg = name(pkgPath);
      type(label, 16, 2 | 4, 20, "*" + typeString);
      b.u64(base + pkg).u64(0).u64(0).u64(0);
    }

    /** An interface type with one method (imethod: name, type offsets): its itabs have one {@code fun} word. */
    void ifaceWithOneMethod(String label, String typeString, String pkgPath, String method) {
      int pkg = name(pkgPath);
      int m = name(method);
      b.align(8);
      int methods = b.size();
      b.u32(m).u32(0);
      type(label, 16, 2 | 4, 20, "*" + typeString);
      b.u64(base + pkg).u64(base + methods).u64(1).u64(1);
    }

    /** An itab (inter, _type, hash, fun[0]); returns its address. */
    long itab(String inter, String type) {
      b.align(8);
      int off = b.size();
      pointerTo(inter);
      pointerTo(type);
      b.u32(0x1234).u32(0).u64(TEXT);
      return base + off;
    }

    byte[] finish() {
      for (Object[] p : patches) {
        Integer t = types.get((String) p[1]);
        if (t == null) {
          throw new IllegalStateException("no type " + p[1]);
        }
        b.putU64((Integer) p[0], base + t);
      }
      return b.toArray();
    }
  }

  static Object[] field(String name, String type, long offset, boolean embedded) {
    return new Object[] {name, type, offset, embedded};
  }

  /** The types behind the probes' itabs and struct layouts, as a program linking grpc-go has them. */
  static List<Section> runtimeTypes(String goVersion, int goMinor, int typesOff, int itablinksOff, Kind moduleSection) {
    long base = Kind.RODATA.address();
    TypeData t = new TypeData(base, goMinor);
    t.basic("int", 8, 2);
    t.basic("bool", 1, 1);
    if (goMinor >= 27) {
      t.ifaceWithOneMethod("net.Conn", "net.Conn", "net", "Read"); // an inline itab's size follows its methods
    } else {
      t.iface("net.Conn", "net.Conn", "net");
    }
    t.struct("poll.FD", "poll.FD", "internal/poll", 64, field("fdmu", "int", 0, false),
        field("Sysfd", "int", 16, false));
    t.struct("net.netFD", "net.netFD", "net", 80, field("pfd", "poll.FD", 0, false), field("family", "int", 64, false));
    t.pointer("*net.netFD", "*net.netFD", "net.netFD", "net");
    t.struct("net.conn", "net.conn", "net", 8, field("fd", "*net.netFD", 0, false));
    t.struct("net.TCPConn", "net.TCPConn", "net", 8, field("conn", "net.conn", 0, true));
    t.pointer("*net.TCPConn", "*net.TCPConn", "net.TCPConn", "net");
    t.struct("tls.Conn", "tls.Conn", "crypto/tls", 32, field("conn", "net.Conn", 0, false),
        field("isClient", "bool", 16, false));
    t.pointer("*tls.Conn", "*tls.Conn", "tls.Conn", "crypto/tls");
    t.struct("credentials.syscallConn", "credentials.syscallConn", "google.golang.org/grpc/internal/credentials", 32,
        field("Conn", "net.Conn", 0, true), field("sysConn", "net.Conn", 16, false));
    t.pointer("*credentials.syscallConn", "*credentials.syscallConn", "credentials.syscallConn",
        "google.golang.org/grpc/internal/credentials");
    int typesEnd = t.b.size();
    long[] itabs = {t.itab("net.Conn", "*net.TCPConn"), t.itab("net.Conn", "*tls.Conn"),
        t.itab("net.Conn", "*credentials.syscallConn")};
    byte[] rodata = t.finish();
    Bytes links = new Bytes();
    for (long i : itabs) {
      links.u64(i);
    }
    byte[] pcln = pclntab(goMinor >= 20 ? 120 : goMinor >= 18 ? 118 : 116, List.of("main.main", "runtime.goexit"),
        TEXT, goMinor >= 26 ? 0 : TEXT);
    byte[] md = goMinor >= 27
        // go1.27: types, typedesclen, etypes, itaboffset, itabsize; the itabs inside the type data, after the types
        ? moduledataInlineItabs(pcln, base, typesEnd, base + rodata.length, itabs[0] - base, base + rodata.length - itabs[0])
        : moduledata(pcln, typesOff, base, base + typesEnd, itablinksOff, Kind.ITABLINK.address(), itabs.length);
    byte[] bi = goMinor >= 18 ? inlineBuildInfo(goVersion, modinfo("v1.60.1"))
        : pointerBuildInfo(Kind.GO_BUILDINFO.address(), goVersion, modinfo("v1.40.0"));
    if (goMinor >= 27) {
      return List.of(s(Kind.GO_BUILDINFO, bi), s(Kind.TEXT, text(2)), s(Kind.GOPCLNTAB, pcln), s(Kind.RODATA, rodata),
          s(moduleSection, md));
    }
    return List.of(s(Kind.GO_BUILDINFO, bi), s(Kind.TEXT, text(2)), s(Kind.GOPCLNTAB, pcln), s(Kind.RODATA, rodata),
        s(Kind.ITABLINK, links.toArray()), s(moduleSection, md));
  }

  /** go1.27's moduledata: {@code types, typedesclen, etypes, itaboffset, itabsize} at 296, no itablinks slice. */
  static byte[] moduledataInlineItabs(byte[] pclntab, long types, long typedesclen, long etypes, long itabOffset, long itabSize) {
    byte[] md = moduledata(pclntab, 296, 0, 0, 0, 0, 0);
    ByteBuffer b = ByteBuffer.wrap(md).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    b.putLong(8 + 296, types).putLong(8 + 304, typedesclen).putLong(8 + 312, etypes).putLong(8 + 320, itabOffset)
        .putLong(8 + 328, itabSize);
    return md;
  }

  static Map<String, List<Section>> runtimeTypeSeeds() {
    Map<String, List<Section>> out = new LinkedHashMap<>();
    out.put("go1.16", runtimeTypes("go1.16.15", 16, 280, 344, Kind.NOPTRDATA));
    out.put("go1.18", runtimeTypes("go1.18.10", 18, 280, 368, Kind.NOPTRDATA));
    out.put("go1.22", runtimeTypes("go1.22.12", 22, 296, 392, Kind.NOPTRDATA));
    out.put("go1.26", runtimeTypes("go1.26.8", 26, 296, 400, Kind.GO_MODULE));
    out.put("go1.27", runtimeTypes("go1.27.4", 27, 296, 0, Kind.GO_MODULE));
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // DWARF

  // tags, attributes, forms (DWARF 5 section 7; Go's DW_AT_go_kind 0x2900, DW_AT_go_embedded_field 0x2903)
  private static final int CU = 0x11;
  private static final int BASE = 0x24;
  private static final int PTR = 0x0f;
  private static final int STRUCT = 0x13;
  private static final int MEMBER = 0x0d;
  private static final int TYPEDEF = 0x16;
  private static final int ARRAY = 0x01;
  private static final int SUBRANGE = 0x21;
  private static final int SUBPROGRAM = 0x2e;
  private static final int PARAM = 0x05;
  private static final int CONST = 0x26;
  private static final int AT_NAME = 0x03;
  private static final int AT_LOCATION = 0x02;
  private static final int AT_BYTE_SIZE = 0x0b;
  private static final int AT_LOW_PC = 0x11;
  private static final int AT_HIGH_PC = 0x12;
  private static final int AT_LANGUAGE = 0x13;
  private static final int AT_UPPER_BOUND = 0x2f;
  private static final int AT_ABSTRACT_ORIGIN = 0x31;
  private static final int AT_COUNT = 0x37;
  private static final int AT_MEMBER_LOCATION = 0x38;
  private static final int AT_DECLARATION = 0x3c;
  private static final int AT_ENCODING = 0x3e;
  private static final int AT_EXTERNAL = 0x3f;
  private static final int AT_FRAME_BASE = 0x40;
  private static final int AT_TYPE = 0x49;
  private static final int AT_VARIABLE_PARAMETER = 0x4b;
  private static final int AT_RANGES = 0x55;
  private static final int AT_INLINE = 0x20;
  private static final int AT_STR_OFFSETS_BASE = 0x72;
  private static final int AT_ADDR_BASE = 0x73;
  private static final int AT_RNGLISTS_BASE = 0x74;
  private static final int AT_LOCLISTS_BASE = 0x8c;
  private static final int AT_GO_KIND = 0x2900;
  private static final int AT_GO_EMBEDDED = 0x2903;
  private static final int AT_GO_RUNTIME_TYPE = 0x2904;
  private static final int FORM_ADDR = 0x01;
  private static final int FORM_DATA2 = 0x05;
  private static final int FORM_DATA4 = 0x06;
  private static final int FORM_DATA8 = 0x07;
  private static final int FORM_STRING = 0x08;
  private static final int FORM_BLOCK1 = 0x0a;
  private static final int FORM_DATA1 = 0x0b;
  private static final int FORM_FLAG = 0x0c;
  private static final int FORM_SDATA = 0x0d;
  private static final int FORM_STRP = 0x0e;
  private static final int FORM_UDATA = 0x0f;
  private static final int FORM_REF_ADDR = 0x10;
  private static final int FORM_REF4 = 0x13;
  private static final int FORM_SEC_OFFSET = 0x17;
  private static final int FORM_EXPRLOC = 0x18;
  private static final int FORM_FLAG_PRESENT = 0x19;
  private static final int FORM_STRX = 0x1a;
  private static final int FORM_DATA16 = 0x1e;
  private static final int FORM_LINE_STRP = 0x1f;
  private static final int FORM_LOCLISTX = 0x22;
  private static final int FORM_RNGLISTX = 0x23;
  private static final int FORM_STRX1 = 0x25;
  private static final int FORM_ADDRX1 = 0x29;

  /** DWARF 4 as Go before 1.25 writes it: inline names, DW_FORM_ref_addr types, .debug_loc and .debug_ranges. */
  static Map<Kind, byte[]> dwarf4() {
    DwarfWriter w = new DwarfWriter();
    w.declare(1, CU, true, a(AT_NAME, FORM_STRING), a(AT_LANGUAGE, FORM_DATA1), a(AT_LOW_PC, FORM_ADDR),
        a(AT_RANGES, FORM_SEC_OFFSET));
    w.declare(2, BASE, false, a(AT_NAME, FORM_STRING), a(AT_ENCODING, FORM_DATA1), a(AT_BYTE_SIZE, FORM_DATA1),
        a(AT_GO_KIND, FORM_DATA1), a(AT_GO_RUNTIME_TYPE, FORM_ADDR));
    w.declare(3, PTR, false, a(AT_NAME, FORM_STRING), a(AT_TYPE, FORM_REF_ADDR), a(AT_GO_KIND, FORM_DATA1));
    w.declare(4, STRUCT, true, a(AT_NAME, FORM_STRING), a(AT_BYTE_SIZE, FORM_UDATA), a(AT_GO_KIND, FORM_DATA1));
    w.declare(5, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_UDATA),
        a(AT_TYPE, FORM_REF_ADDR), a(AT_GO_EMBEDDED, FORM_FLAG));
    w.declare(6, TYPEDEF, false, a(AT_NAME, FORM_STRING), a(AT_TYPE, FORM_REF_ADDR), a(AT_GO_KIND, FORM_DATA1));
    w.declare(7, ARRAY, true, a(AT_NAME, FORM_STRING), a(AT_TYPE, FORM_REF_ADDR), a(AT_BYTE_SIZE, FORM_UDATA),
        a(AT_GO_KIND, FORM_DATA1));
    w.declare(8, SUBRANGE, false, a(AT_TYPE, FORM_REF_ADDR), a(AT_COUNT, FORM_UDATA));
    w.declare(9, SUBPROGRAM, true, a(AT_NAME, FORM_STRING), a(AT_LOW_PC, FORM_ADDR), a(AT_HIGH_PC, FORM_ADDR),
        a(AT_FRAME_BASE, FORM_BLOCK1), a(AT_EXTERNAL, FORM_FLAG));
    w.declare(10, PARAM, false, a(AT_NAME, FORM_STRING), a(AT_VARIABLE_PARAMETER, FORM_FLAG),
        a(AT_TYPE, FORM_REF_ADDR), a(AT_LOCATION, FORM_SEC_OFFSET));
    w.declare(11, PARAM, false, a(AT_NAME, FORM_STRING), a(AT_VARIABLE_PARAMETER, FORM_FLAG),
        a(AT_TYPE, FORM_REF_ADDR), a(AT_LOCATION, FORM_EXPRLOC));
    w.declare(12, SUBPROGRAM, true, a(AT_NAME, FORM_STRING), a(AT_INLINE, FORM_DATA1), a(AT_EXTERNAL, FORM_FLAG));
    w.declare(13, SUBPROGRAM, true, a(AT_ABSTRACT_ORIGIN, FORM_REF_ADDR), a(AT_LOW_PC, FORM_ADDR),
        a(AT_HIGH_PC, FORM_ADDR));
    w.declare(14, PARAM, false, a(AT_ABSTRACT_ORIGIN, FORM_REF_ADDR), a(AT_LOCATION, FORM_EXPRLOC));
    w.declare(15, PARAM, false, a(AT_NAME, FORM_STRING), a(AT_VARIABLE_PARAMETER, FORM_FLAG),
        a(AT_TYPE, FORM_REF_ADDR));
    w.declare(16, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_BLOCK1),
        a(AT_TYPE, FORM_REF_ADDR));
    w.declare(17, STRUCT, false, a(AT_NAME, FORM_STRING), a(AT_DECLARATION, FORM_FLAG_PRESENT));
    w.declare(18, CONST, false, a(AT_TYPE, FORM_REF_ADDR));
    w.declare(19, SUBRANGE, false, a(AT_TYPE, FORM_REF_ADDR), a(AT_UPPER_BOUND, FORM_SDATA));
    w.declare(20, CU, true, a(AT_NAME, FORM_STRING), a(AT_LOW_PC, FORM_ADDR), a(AT_HIGH_PC, FORM_DATA8));
    w.declare(21, CU, true, a(AT_NAME, FORM_STRP), a(AT_LOW_PC, FORM_ADDR), a(AT_HIGH_PC, FORM_DATA4));
    w.endAbbrevs();
    Bytes str = new Bytes().u8(0);
    int mainName = str.size();
    str.cstring("main");

    w.unit(4).die(20).string("runtime").info.u64(TEXT + 0x800).u64(0x100);
    types4(w);
    w.end().endUnit();

    w.unit(4).die(1).string("google.golang.org/grpc/internal/transport").info.u8(22).u64(TEXT).u32(0);
    w.label("writeHeader").die(9).string(WRITE_HEADER).info.u64(TEXT).u64(TEXT + 0x40).u8(1).u8(0x9c).u8(1);
    w.die(11).string("l").info.u8(0);
    w.ref("*loopyWriter").info.u8(1).u8(0x50);
    w.die(10).string("streamID").info.u8(0);
    w.ref("uint32").info.u32(0); // .debug_loc offset 0
    w.die(11).string("endStream").info.u8(0);
    w.ref("bool").info.u8(1).u8(0x52);
    w.die(11).string("hf").info.u8(0);
    w.ref("[]hpack.HeaderField").info.bytes(new byte[] {9, 0x55, (byte) 0x93, 8, 0x54, (byte) 0x93, 8, 0x58,
        (byte) 0x93, 8});
    w.die(11).string("onWrite").info.u8(0);
    w.ref("func()").info.bytes(new byte[] {4, (byte) 0x9c, 0x11, 0x08, 0x22});
    w.die(11).string("f").info.u8(0);
    w.ref("[1]float64").info.bytes(new byte[] {2, (byte) 0x90, 17});
    w.die(11).string("~r0").info.u8(1);
    w.ref("error").info.bytes(new byte[] {2, (byte) 0x91, 0x10});
    w.end();
    w.label("abstract").die(12).string(CLIENT_OPERATE).info.u8(1).u8(1);
    w.label("abstract.t").die(15).string("t").info.u8(0);
    w.ref("*uint8");
    w.label("abstract.frame").die(15).string("frame").info.u8(0);
    w.ref("*hpack.HeaderField");
    w.end();
    w.die(13).ref("abstract").info.u64(TEXT + FUNCTION_SIZE).u64(TEXT + 2 * FUNCTION_SIZE);
    w.die(14).ref("abstract.t").info.u8(1).u8(0x50);
    w.die(14).ref("abstract.frame").info.u8(1).u8(0x53);
    w.end();
    w.die(9).string(SERVER_OPERATE).info.u64(TEXT + 2 * FUNCTION_SIZE).u64(TEXT + 3 * FUNCTION_SIZE).u8(1)
        .u8(0x9c).u8(1);
    w.die(11).string("t").info.u8(0);
    w.ref("*uint8").info.u8(1).u8(0x50);
    w.die(11).string("frame").info.u8(0);
    w.ref("*hpack.HeaderField").info.u8(1).u8(0x53);
    w.die(11).string("handle").info.u8(0);
    w.ref("func()").info.u8(1).u8(0x51);
    w.die(11).string("s").info.u8(0);
    w.ref("string").info.bytes(new byte[] {5, 0x52, (byte) 0x93, 8, (byte) 0x93, 8});
    w.end();
    w.end().endUnit();

    w.unit(4).die(21).info.u32(mainName).u64(TEXT + 3 * FUNCTION_SIZE).u32(FUNCTION_SIZE);
    w.die(9).string("main.main").info.u64(TEXT + 3 * FUNCTION_SIZE).u64(TEXT + 4 * FUNCTION_SIZE).u8(1).u8(0x9c)
        .u8(1);
    w.end();
    w.end().endUnit();
    w.finish();

    // .debug_loc: [0, 0x10) RBX, then a base selection and [0, 0x30) fbreg 8, then the end
    Bytes loc = new Bytes().u64(0).u64(0x10).u16(1).u8(0x53)
        .u64(-1L).u64(TEXT + 0x10).u64(0).u64(0x30).u16(2).u8(0x91).u8(0x08)
        .u64(0).u64(0);
    Bytes ranges = new Bytes().u64(0).u64(3 * FUNCTION_SIZE).u64(-1L).u64(TEXT + 0x1000).u64(0).u64(0x10)
        .u64(0).u64(0);
    Map<Kind, byte[]> out = new LinkedHashMap<>();
    out.put(Kind.DEBUG_ABBREV, w.abbrev.toArray());
    out.put(Kind.DEBUG_INFO, w.info.toArray());
    out.put(Kind.DEBUG_STR, str.toArray());
    out.put(Kind.DEBUG_LOC, loc.toArray());
    out.put(Kind.DEBUG_RANGES, ranges.toArray());
    return out;
  }

  /** The type DIEs of the DWARF 4 seed (Go puts every type in the runtime unit). */
  private static void types4(DwarfWriter w) {
    w.label("int").die(2).string("int").info.u8(5).u8(8).u8(2).u64(0);
    w.label("uint32").die(2).string("uint32").info.u8(8).u8(4).u8(10).u64(0);
    w.label("bool").die(2).string("bool").info.u8(2).u8(1).u8(1).u64(0);
    w.label("uint8").die(2).string("uint8").info.u8(8).u8(1).u8(8).u64(0);
    w.label("float64").die(2).string("float64").info.u8(4).u8(8).u8(14).u64(0);
    w.label("*uint8").die(3).string("*uint8").ref("uint8").info.u8(22);
    w.label("string").die(4).string("string").info.uleb(16).u8(24);
    member(w, "str", 0, "*uint8", false);
    member(w, "len", 8, "int", false);
    w.end();
    w.label("poll.FD").die(4).string("internal/poll.FD").info.uleb(64).u8(25);
    member(w, "fdmu", 0, "int", false);
    member(w, "Sysfd", 16, "int", false);
    w.die(16).string("isFile").info.u8(2).u8(0x23).u8(24);
    w.ref("bool");
    w.end();
    w.label("net.netFD").die(4).string("net.netFD").info.uleb(80).u8(25);
    member(w, "pfd", 0, "poll.FD", false);
    member(w, "family", 64, "int", false);
    w.end();
    w.label("*net.netFD").die(3).string("*net.netFD").ref("net.netFD").info.u8(22);
    w.label("net.conn").die(4).string("net.conn").info.uleb(8).u8(25);
    member(w, "fd", 0, "*net.netFD", false);
    w.end();
    w.label("net.TCPConn").die(4).string("net.TCPConn").info.uleb(8).u8(25);
    member(w, "conn", 0, "net.conn", true);
    w.end();
    w.label("hpack.HeaderField").die(4).string("golang.org/x/net/http2/hpack.HeaderField").info.uleb(40).u8(25);
    member(w, "Name", 0, "string", false);
    member(w, "Value", 16, "string", false);
    member(w, "Sensitive", 32, "bool", false);
    w.end();
    w.label("*hpack.HeaderField").die(3).string("*golang.org/x/net/http2/hpack.HeaderField")
        .ref("hpack.HeaderField").info.u8(22);
    w.label("[]hpack.HeaderField").die(4).string("[]golang.org/x/net/http2/hpack.HeaderField").info.uleb(24).u8(23);
    member(w, "array", 0, "*hpack.HeaderField", false);
    member(w, "len", 8, "int", false);
    member(w, "cap", 16, "int", false);
    w.end();
    w.label("loopyWriter").die(4).string("google.golang.org/grpc/internal/transport.loopyWriter").info.uleb(64)
        .u8(25);
    member(w, "side", 0, "int", false);
    member(w, "framer", 8, "*uint8", false);
    member(w, "hBuf", 16, "[2]int", false);
    w.end();
    w.label("*loopyWriter").die(3).string("*google.golang.org/grpc/internal/transport.loopyWriter")
        .ref("loopyWriter").info.u8(22);
    w.label("[2]int").die(7).string("[2]int").ref("int").info.uleb(16).u8(17);
    w.die(8).ref("int").info.uleb(2);
    w.end();
    w.label("[1]float64").die(7).string("[1]float64").ref("float64").info.uleb(8).u8(17);
    w.die(19).ref("int").info.sleb(0);
    w.end();
    w.label("func()").die(3).string("func()").ref("uint8").info.u8(19);
    w.label("runtime.iface").die(4).string("runtime.iface").info.uleb(16).u8(25);
    member(w, "tab", 0, "*uint8", false);
    member(w, "data", 8, "*uint8", false);
    w.end();
    w.label("error").die(6).string("error").ref("runtime.iface").info.u8(20);
    w.label("net.Conn").die(6).string("net.Conn").ref("runtime.iface").info.u8(20);
    w.label("tls.Conn").die(4).string("crypto/tls.Conn").info.uleb(24).u8(25);
    member(w, "conn", 0, "net.Conn", false);
    member(w, "isClient", 16, "bool", false);
    w.end();
    w.die(17).string("runtime.g");
    w.label("const int").die(18).ref("int");
    w.label("myint").die(6).string("main.myint").ref("const int").info.u8(2);
  }

  private static void member(DwarfWriter w, String name, long offset, String type, boolean embedded) {
    w.die(5).string(name).info.uleb(offset);
    w.ref(type).info.u8(embedded ? 1 : 0);
  }

  /**
   * DWARF 5 as Go 1.25+ writes it, and the indexed forms Go does not use but other linkers do: strx,
   * line_strp, addrx, loclistx, rnglistx, implicit_const, data16, unit-relative references.
   */
  static Map<Kind, byte[]> dwarf5() {
    DwarfWriter w = new DwarfWriter();
    w.declare(1, CU, true, a(AT_NAME, FORM_STRX1), a(AT_STR_OFFSETS_BASE, FORM_SEC_OFFSET),
        a(AT_ADDR_BASE, FORM_SEC_OFFSET), a(AT_LOCLISTS_BASE, FORM_SEC_OFFSET),
        a(AT_RNGLISTS_BASE, FORM_SEC_OFFSET), a(AT_LOW_PC, FORM_ADDRX1), a(AT_RANGES, FORM_RNGLISTX));
    w.declare(2, BASE, false, a(AT_NAME, FORM_STRX1), a(AT_BYTE_SIZE, FORM_DATA1), a(AT_GO_KIND, FORM_DATA1),
        a(0x2905, FORM_DATA16));
    w.declare(3, PTR, false, a(AT_NAME, FORM_STRX), a(AT_TYPE, FORM_REF_ADDR), implicit(AT_GO_KIND, 22));
    w.declare(4, STRUCT, true, a(AT_NAME, FORM_STRP), a(AT_BYTE_SIZE, FORM_UDATA), implicit(AT_GO_KIND, 25));
    w.declare(5, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_DATA2),
        a(AT_TYPE, FORM_REF4), a(AT_GO_EMBEDDED, FORM_FLAG_PRESENT));
    w.declare(6, MEMBER, false, a(AT_NAME, FORM_LINE_STRP), a(AT_MEMBER_LOCATION, FORM_UDATA),
        a(AT_TYPE, FORM_REF_ADDR));
    w.declare(7, SUBPROGRAM, true, a(AT_NAME, FORM_STRP), a(AT_LOW_PC, FORM_ADDRX1), a(AT_HIGH_PC, FORM_DATA4),
        a(AT_FRAME_BASE, FORM_EXPRLOC));
    w.declare(8, PARAM, false, a(AT_NAME, FORM_STRX1), a(AT_TYPE, FORM_REF_ADDR), a(AT_LOCATION, FORM_LOCLISTX));
    w.declare(9, PARAM, false, a(AT_NAME, FORM_STRING), a(AT_TYPE, FORM_REF_ADDR), a(AT_LOCATION, FORM_EXPRLOC));
    w.declare(10, PARAM, false, a(AT_NAME, FORM_STRING), a(AT_TYPE, FORM_REF_ADDR),
        a(AT_LOCATION, FORM_SEC_OFFSET));
    w.declare(11, TYPEDEF, false, a(AT_NAME, FORM_STRING), a(AT_TYPE, FORM_REF_ADDR), a(AT_GO_KIND, FORM_DATA1));
    w.endAbbrevs();

    Bytes str = new Bytes().u8(0);
    Bytes lineStr = new Bytes().u8(0);
    List<Integer> strOffsets = new ArrayList<>();
    Map<String, Integer> strx = new LinkedHashMap<>();
    java.util.function.Function<String, Integer> index = s -> strx.computeIfAbsent(s, k -> {
      strOffsets.add(str.size());
      str.cstring(k);
      return strOffsets.size() - 1;
    });
    java.util.function.Function<String, Integer> strp = s -> {
      int at = str.size();
      str.cstring(s);
      return at;
    };
    for (String s : List.of("runtime", "google.golang.org/grpc/internal/transport", "int", "bool", "uint8",
        "*uint8", "*net.netFD", "l", "streamID", "*google.golang.org/grpc/internal/transport.loopyWriter")) {
      index.apply(s);
    }
    int fdName = lineStr.size();
    lineStr.cstring("fd");
    Bytes addr = new Bytes().u32(0).u16(5).u8(8).u8(0);
    for (int i = 0; i < 4; i++) {
      addr.u64(TEXT + (long) i * FUNCTION_SIZE);
    }
    addr.putU32(0, addr.size() - 4);

    // unit 1: runtime types
    w.unit(5).die(1).info.u8(index.apply("runtime")).u32(8).u32(8).u32(12).u32(12).u8(3).uleb(0);
    w.label("int").die(2).info.u8(index.apply("int")).u8(8).u8(2).zeros(16);
    w.label("bool").die(2).info.u8(index.apply("bool")).u8(1).u8(1).zeros(16);
    w.label("uint8").die(2).info.u8(index.apply("uint8")).u8(1).u8(8).zeros(16);
    w.label("*uint8").die(3).info.uleb(index.apply("*uint8"));
    w.ref("uint8");
    w.label("poll.FD").die(4).info.u32(strp.apply("internal/poll.FD")).uleb(64);
    w.die(6).info.u32(lineStr.size());
    lineStr.cstring("Sysfd");
    w.info.uleb(16);
    w.ref("int");
    w.end();
    w.label("net.netFD").die(4).info.u32(strp.apply("net.netFD")).uleb(80);
    w.die(6).info.u32(lineStr.size());
    lineStr.cstring("pfd");
    w.info.uleb(0);
    w.ref("poll.FD");
    w.end();
    w.label("*net.netFD").die(3).info.uleb(index.apply("*net.netFD"));
    w.ref("net.netFD");
    w.label("net.conn").die(4).info.u32(strp.apply("net.conn")).uleb(8);
    w.die(6).info.u32(fdName).uleb(0);
    w.ref("*net.netFD");
    w.end();
    w.label("net.TCPConn").die(4).info.u32(strp.apply("net.TCPConn")).uleb(8);
    int tcpConnMember = w.info.size();
    w.die(5).string("conn").info.u16(0).u32(0); // unit-relative reference, patched below
    w.end();
    w.label("loopyWriter").die(4).info.u32(strp.apply("google.golang.org/grpc/internal/transport.loopyWriter"))
        .uleb(24);
    w.die(6).info.u32(lineStr.size());
    lineStr.cstring("framer");
    w.info.uleb(8);
    w.ref("*uint8");
    w.end();
    w.label("*loopyWriter").die(3).info.uleb(index.apply("*google.golang.org/grpc/internal/transport.loopyWriter"));
    w.ref("loopyWriter");
    w.label("error").die(11).string("error").ref("*uint8").info.u8(20);
    w.end().endUnit();
    int unitStart = 0;
    w.info.putU32(tcpConnMember + 1 + 5 + 2, w.offset("net.conn") - unitStart);

    // unit 2: the probed function, its parameters through a location list index and a section offset
    w.unit(5).die(1).info.u8(index.apply("google.golang.org/grpc/internal/transport")).u32(8).u32(8).u32(12)
        .u32(12).u8(0).uleb(0);
    w.die(7).info.u32(strp.apply(WRITE_HEADER)).u8(0).u32(FUNCTION_SIZE).u8(1).u8(0x9c);
    w.die(8).info.u8(index.apply("l"));
    w.ref("*loopyWriter").info.uleb(0);
    w.die(8).info.u8(index.apply("streamID"));
    w.ref("int").info.uleb(1);
    w.die(9).string("endStream").ref("bool").info.u8(1).u8(0x52);
    w.die(10).string("onWrite").ref("*uint8").info.u32(0); // patched: a direct .debug_loclists offset
    int onWriteLoc = w.info.size() - 4;
    w.die(9).string("~r0").ref("error").info.u8(2).u8(0x91).sleb(-8);
    w.end();
    w.end().endUnit();
    w.finish();

    Bytes strOff = new Bytes().u32(0).u16(5).u16(0);
    for (int o : strOffsets) {
      strOff.u32(o);
    }
    strOff.putU32(0, strOff.size() - 4);

    // .debug_loclists: header, 2 offsets, list 0 (offset pair: RAX), list 1 (base addressx, startx_length,
    // default: RBX), list 2 (start_length, start_end, startx_endx: fbreg 8) used by the direct offset
    Bytes loclists = new Bytes().u32(0).u16(5).u8(8).u8(0).u32(2);
    int offsets = loclists.size();
    loclists.u32(0).u32(0);
    int list0 = loclists.size();
    loclists.u8(0x04).uleb(0).uleb(0x10).uleb(1).u8(0x50).u8(0x00);
    int list1 = loclists.size();
    loclists.u8(0x01).uleb(0).u8(0x03).uleb(1).uleb(0x10).uleb(1).u8(0x51).u8(0x05).uleb(1).u8(0x53).u8(0x00);
    int list2 = loclists.size();
    loclists.u8(0x08).u64(TEXT + 0x20).uleb(0x10).uleb(1).u8(0x54)
        .u8(0x07).u64(TEXT + 0x100).u64(TEXT + 0x140).uleb(1).u8(0x58)
        .u8(0x02).uleb(0).uleb(1).uleb(2).u8(0x91).u8(0x08).u8(0x00);
    loclists.putU32(offsets, list0 - 12).putU32(offsets + 4, list1 - 12).putU32(0, loclists.size() - 4);
    w.info.putU32(onWriteLoc, list2);

    Bytes rnglists = new Bytes().u32(0).u16(5).u8(8).u8(0).u32(1);
    int r0 = rnglists.size() + 4;
    rnglists.u32(r0 - 12);
    rnglists.u8(0x01).uleb(0).u8(0x04).uleb(0).uleb(0x40).u8(0x02).uleb(1).uleb(2).u8(0x03).uleb(2).uleb(0x10)
        .u8(0x05).u64(TEXT).u8(0x06).u64(TEXT + 0x80).u64(TEXT + 0x90).u8(0x07).u64(TEXT + 0xa0).uleb(8).u8(0x00);
    rnglists.putU32(0, rnglists.size() - 4);

    Map<Kind, byte[]> out = new LinkedHashMap<>();
    out.put(Kind.DEBUG_ABBREV, w.abbrev.toArray());
    out.put(Kind.DEBUG_INFO, w.info.toArray());
    out.put(Kind.DEBUG_STR, str.toArray());
    out.put(Kind.DEBUG_LINE_STR, lineStr.toArray());
    out.put(Kind.DEBUG_STR_OFFSETS, strOff.toArray());
    out.put(Kind.DEBUG_ADDR, addr.toArray());
    out.put(Kind.DEBUG_LOCLISTS, loclists.toArray());
    out.put(Kind.DEBUG_RNGLISTS, rnglists.toArray());
    return out;
  }

  // forms the seeds above do not use
  private static final int FORM_BLOCK2 = 0x03;
  private static final int FORM_BLOCK4 = 0x04;
  private static final int FORM_BLOCK = 0x09;
  private static final int FORM_REF1 = 0x11;
  private static final int FORM_REF2 = 0x12;
  private static final int FORM_REF8 = 0x14;
  private static final int FORM_REF_UDATA = 0x15;
  private static final int FORM_INDIRECT = 0x16;
  private static final int FORM_REF_SUP4 = 0x1c;
  private static final int FORM_STRP_SUP = 0x1d;
  private static final int FORM_REF_SIG8 = 0x20;
  private static final int FORM_REF_SUP8 = 0x24;
  private static final int FORM_STRX2 = 0x26;
  private static final int FORM_STRX3 = 0x27;
  private static final int FORM_STRX4 = 0x28;
  private static final int FORM_ADDRX2 = 0x2a;
  private static final int FORM_ADDRX3 = 0x2b;
  private static final int FORM_ADDRX4 = 0x2c;
  private static final int FORM_GNU_ADDR_INDEX = 0x1f01;
  private static final int FORM_GNU_STR_INDEX = 0x1f02;
  private static final int FORM_GNU_REF_ALT = 0x1f20;
  private static final int FORM_GNU_STRP_ALT = 0x1f21;

  /**
   * Every DWARF form and unit kind the reader knows, on struct members the probes read: DWARF 2
   * (address-sized {@code ref_addr}), 3 in 64-bit DWARF, 4, and 5 type and partial units; every
   * reference, constant, block and string-index form, {@code DW_FORM_indirect}, the GNU and
   * supplementary-file forms (skipped), DWARF 2 style member locations ({@code DW_OP_plus_uconst}).
   */
  static Map<Kind, byte[]> dwarfForms() {
    DwarfWriter w = new DwarfWriter();
    w.declare(1, CU, true, a(AT_NAME, FORM_STRING));
    w.declare(2, BASE, false, a(AT_NAME, FORM_STRING), a(AT_BYTE_SIZE, FORM_DATA1), a(AT_GO_KIND, FORM_DATA1));
    w.declare(3, STRUCT, true, a(AT_NAME, FORM_STRING), a(AT_BYTE_SIZE, FORM_DATA2), a(AT_GO_KIND, FORM_DATA1));
    w.declare(4, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_DATA1), a(AT_TYPE, FORM_REF1));
    w.declare(5, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_DATA2), a(AT_TYPE, FORM_REF2));
    w.declare(6, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_DATA4), a(AT_TYPE, FORM_REF4));
    w.declare(7, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_DATA8), a(AT_TYPE, FORM_REF8));
    w.declare(8, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_SDATA), a(AT_TYPE, FORM_REF_UDATA));
    w.declare(9, MEMBER, false, a(AT_NAME, FORM_STRING), a(AT_MEMBER_LOCATION, FORM_UDATA), a(AT_TYPE, FORM_REF_ADDR),
        a(AT_GO_EMBEDDED, FORM_FLAG));
    w.declare(10, MEMBER, false, a(AT_NAME, FORM_INDIRECT), a(AT_MEMBER_LOCATION, FORM_INDIRECT), a(AT_TYPE, FORM_INDIRECT));
    w.declare(11, MEMBER, false, a(AT_NAME, FORM_STRX2), a(AT_MEMBER_LOCATION, FORM_BLOCK2), a(AT_TYPE, FORM_REF4));
    w.declare(12, MEMBER, false, a(AT_NAME, FORM_STRX3), a(AT_MEMBER_LOCATION, FORM_BLOCK4), a(AT_TYPE, FORM_REF4));
    w.declare(13, MEMBER, false, a(AT_NAME, FORM_STRX4), a(AT_MEMBER_LOCATION, FORM_BLOCK), a(AT_TYPE, FORM_REF4));
    w.declare(14, MEMBER, false, a(AT_NAME, FORM_GNU_STR_INDEX), a(AT_MEMBER_LOCATION, FORM_EXPRLOC), a(AT_TYPE, FORM_REF4));
    w.declare(15, BASE, false, a(AT_NAME, FORM_STRING), a(AT_BYTE_SIZE, FORM_UDATA), a(AT_GO_KIND, FORM_DATA1),
        a(0x3f00, FORM_REF_SIG8), a(0x3f01, FORM_REF_SUP4), a(0x3f02, FORM_REF_SUP8), a(0x3f03, FORM_STRP_SUP),
        a(0x3f04, FORM_GNU_REF_ALT), a(0x3f05, FORM_GNU_STRP_ALT), a(0x3f06, FORM_DATA16), a(0x3f07, FORM_FLAG),
        a(0x3f08, FORM_FLAG_PRESENT), implicit(0x3f09, -5), a(0x3f0a, FORM_ADDRX1), a(0x3f0b, FORM_ADDRX2),
        a(0x3f0c, FORM_ADDRX3), a(0x3f0d, FORM_ADDRX4), a(0x3f0e, FORM_GNU_ADDR_INDEX), a(0x3f0f, FORM_LOCLISTX),
        a(0x3f10, FORM_RNGLISTX), a(0x3f11, FORM_LINE_STRP), a(0x3f12, FORM_SEC_OFFSET), a(0x3f13, FORM_ADDR));
    w.declare(16, PTR, false, a(AT_NAME, FORM_STRING), a(AT_TYPE, FORM_REF_ADDR), a(AT_GO_KIND, FORM_DATA1));
    w.declare(17, TYPEDEF, false, a(AT_NAME, FORM_STRING), a(AT_TYPE, FORM_REF4));
    w.endAbbrevs();
    // .debug_str and its offsets without a header: a DWARF 4 unit has no str_offsets_base, so 0
    Bytes str = new Bytes().u8(0);
    Bytes strOffsets = new Bytes();
    for (String n : List.of("fdmu", "Sysfd", "isFile", "pd")) {
      strOffsets.u32(str.size());
      str.cstring(n);
    }

    // unit 1, DWARF 4: the runtime types, members of every constant and reference form
    int u1 = w.info.size();
    w.unit(4).die(1).string("runtime");
    int intAt = w.info.size() - u1;
    w.label("int").die(2).string("int").info.u8(8).u8(2);
    w.label("netFD").die(3).string("net.netFD").info.u16(80).u8(25);
    int pfdRef = w.info.size() + 1 + 4 + 4; // the next DIE's ref4 (after its code, name, data4), patched below
    w.die(6).string("pfd").info.u32(0).u32(0);
    w.die(5).string("family").info.u16(64).u16(intAt);
    w.die(4).string("sotype").info.u8(68).u8(intAt);
    w.die(7).string("isConnected").info.u64(72).u64(intAt);
    w.die(8).string("net").info.sleb(76).uleb(intAt);
    w.die(9).string("laddr").info.uleb(40);
    w.ref("int").info.u8(0);
    w.die(10).info.uleb(FORM_STRING).cstring("raddr").uleb(FORM_UDATA).uleb(48).uleb(FORM_REF4).u32(intAt);
    w.end();
    int pollAt = w.info.size() - u1;
    w.info.putU32(pfdRef, pollAt);
    w.label("pollFD").die(3).string("internal/poll.FD").info.u16(64).u8(25);
    w.die(11).info.u16(0).u16(2).u8(0x23).u8(0).u32(intAt);
    w.die(12).info.u16(1).u8(0).u32(2).u8(0x23).u8(16).u32(intAt);
    w.die(13).info.u32(2).uleb(2).u8(0x23).u8(24).u32(intAt);
    w.die(14).info.uleb(3).uleb(2).u8(0x23).u8(32).u32(intAt);
    w.end();
    w.die(15).string("uintptr").info.uleb(8).u8(12).u64(0x1234).u32(1).u64(2).u32(3).u32(4).u32(5).zeros(16).u8(1)
        .u8(0).u16(1).u16(2).u8(3).u32(4).uleb(5).uleb(0).uleb(0).u32(0).u32(0).u64(TEXT);
    w.label("*netFD").die(16).string("*net.netFD").ref("netFD").info.u8(22);
    w.die(17).string("main.fd").info.u32(w.offset("*netFD") - u1);
    w.end().endUnit();

    // unit 2, DWARF 2: DW_FORM_ref_addr is address-sized (8 bytes) before DWARF 3
    int u2 = w.info.size();
    w.info.u32(0).u16(2).u32(0).u8(8);
    w.die(1).string("google.golang.org/grpc/internal/transport");
    w.die(3).string("golang.org/x/net/http2.MetaHeadersFrame").info.u16(32).u8(25);
    w.die(9).string("HeadersFrame").info.uleb(0).u64(w.offset("int")).u8(1);
    w.die(9).string("Fields").info.uleb(8).u64(w.offset("int")).u8(0);
    w.end().end();
    w.info.putU32(u2, w.info.size() - u2 - 4);

    // unit 3, DWARF 3 in 64-bit DWARF: 0xffffffff, an 8-byte length, 8-byte offsets and ref_addr
    int u3 = w.info.size();
    w.info.u32(0xffffffffL).u64(0).u16(3).u64(0).u8(8);
    w.die(1).string("crypto/tls");
    w.die(3).string("crypto/tls.Conn").info.u16(24).u8(25);
    w.die(9).string("conn").info.uleb(0).u64(w.offset("int")).u8(0);
    w.die(9).string("isClient").info.uleb(16).u64(w.offset("int")).u8(0);
    w.end().end();
    w.info.putU64(u3 + 4, w.info.size() - u3 - 12);

    // unit 4, a DWARF 5 type unit (signature, type offset); unit 5, a partial unit
    int u4 = w.info.size();
    w.info.u32(0).u16(5).u8(2).u8(8).u32(0).u64(0x1122334455667788L).u32(0);
    int typeOffsetAt = w.info.size() - 4;
    w.die(1).string("types");
    w.info.putU32(typeOffsetAt, w.info.size() - u4);
    w.die(3).string("runtime.g").info.u16(400).u8(25);
    w.die(9).string("goid").info.uleb(152).u32(w.offset("int")).u8(0);
    w.end().end();
    w.info.putU32(u4, w.info.size() - u4 - 4);
    int u5 = w.info.size();
    w.info.u32(0).u16(5).u8(3).u8(8).u32(0);
    w.die(1).string("partial").end();
    w.info.putU32(u5, w.info.size() - u5 - 4);
    w.finish();

    Map<Kind, byte[]> out = new LinkedHashMap<>();
    out.put(Kind.DEBUG_ABBREV, w.abbrev.toArray());
    out.put(Kind.DEBUG_INFO, w.info.toArray());
    out.put(Kind.DEBUG_STR, str.toArray());
    out.put(Kind.DEBUG_STR_OFFSETS, strOffsets.toArray());
    return out;
  }

  /** ELF64_Chdr (zlib) and the deflated bytes: an SHF_COMPRESSED section's contents. */
  static byte[] chdr(byte[] plain) {
    return new Bytes().u32(1).u32(0).u64(plain.length).u64(1).bytes(deflate(plain)).toArray();
  }

  /** "ZLIB", the size big-endian, the deflated bytes: a {@code .zdebug_*} section's contents. */
  static byte[] zdebug(byte[] plain) {
    Bytes b = new Bytes().ascii("ZLIB");
    for (int i = 7; i >= 0; i--) {
      b.u8((int) ((long) plain.length >>> (8 * i)));
    }
    return b.bytes(deflate(plain)).toArray();
  }

  static byte[] deflate(byte[] data) {
    Deflater d = new Deflater(Deflater.BEST_COMPRESSION);
    d.setInput(data);
    d.finish();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[4096];
    while (!d.finished()) {
      out.write(buf, 0, d.deflate(buf));
    }
    d.end();
    return out.toByteArray();
  }

  static Map<String, List<Section>> dwarfSeeds() {
    List<String> fns = List.of(WRITE_HEADER, CLIENT_OPERATE, SERVER_OPERATE, "main.main");
    Map<String, List<Section>> out = new LinkedHashMap<>();
    List<Section> d4 = new ArrayList<>();
    d4.add(s(Kind.GO_BUILDINFO, inlineBuildInfo("go1.22.12", modinfo("v1.60.1"))));
    d4.add(s(Kind.TEXT, text(fns.size())));
    d4.add(s(Kind.GOPCLNTAB, pclntab(120, fns, TEXT, TEXT)));
    dwarf4().forEach((k, v) -> d4.add(s(k, v)));
    out.put("dwarf4", d4);

    List<Section> z = new ArrayList<>();
    z.add(s(Kind.GO_BUILDINFO, pointerBuildInfo(Kind.GO_BUILDINFO.address(), "go1.16.15", modinfo("v1.40.0"))));
    z.add(s(Kind.GOPCLNTAB, pclntab(116, fns, TEXT, TEXT)));
    Map<Kind, Kind> zname = Map.of(Kind.DEBUG_INFO, Kind.ZDEBUG_INFO, Kind.DEBUG_ABBREV, Kind.ZDEBUG_ABBREV,
        Kind.DEBUG_LOC, Kind.ZDEBUG_LOC, Kind.DEBUG_RANGES, Kind.ZDEBUG_RANGES, Kind.DEBUG_STR, Kind.ZDEBUG_STR);
    dwarf4().forEach((k, v) -> z.add(s(zname.get(k), zdebug(v))));
    out.put("dwarf4-zdebug", z);

    List<Section> d5 = new ArrayList<>();
    d5.add(s(Kind.GO_BUILDINFO, inlineBuildInfo("go1.26.8", modinfo("v1.85.0"))));
    d5.add(s(Kind.GOPCLNTAB, pclntab(120, fns, TEXT, 0)));
    dwarf5().forEach((k, v) -> d5.add(s(k, v)));
    out.put("dwarf5", d5);

    List<Section> forms = new ArrayList<>();
    forms.add(s(Kind.GO_BUILDINFO, inlineBuildInfo("go1.24.9", "")));
    forms.add(s(Kind.GOPCLNTAB, pclntab(120, fns, TEXT, TEXT)));
    dwarfForms().forEach((k, v) -> forms.add(s(k, v)));
    out.put("dwarf-forms", forms);

    List<Section> c5 = new ArrayList<>();
    c5.add(s(Kind.GO_BUILDINFO, inlineBuildInfo("go1.25.1", "")));
    c5.add(s(Kind.GOPCLNTAB, pclntab(120, fns, TEXT, 0)));
    dwarf5().forEach((k, v) -> c5.add(k == Kind.DEBUG_INFO || k == Kind.DEBUG_LOCLISTS
        ? new Section(k, true, chdr(v)) : s(k, v)));
    out.put("dwarf5-compressed", c5);
    return out;
  }
}
