package io.gospan.offsets;

import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.BuildInfoReader;
import io.gospan.offsets.dwarf.DwarfData;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.ElfSection;
import io.gospan.offsets.elf.ElfSymbol;
import io.gospan.offsets.pclntab.ModuleData;
import io.gospan.offsets.pclntab.Pclntab;
import io.gospan.offsets.pclntab.RuntimeTypes;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An x86-64 Linux Go executable, inspected without running it: build info, function addresses, itab
 * addresses and DWARF (struct layouts, parameter locations). Pure Java; the file is memory-mapped and every
 * part is read on first use.
 *
 * <pre>{@code
 * try (GoBinary bin = GoBinary.open(Path.of("/proc/1234/exe"))) {
 *   String grpc = bin.buildInfo().dependency("google.golang.org/grpc").map(Module::version).orElse("?");
 *   GoFunction f = bin.function("google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader")
 *       .orElseThrow();
 *   long framer = bin.dwarf().memberOffset("google.golang.org/grpc/internal/transport.loopyWriter", "framer")
 *       .orElseThrow();
 * }
 * }</pre>
 *
 * <p>Errors: every query throws only {@link GoBinaryException} subclasses ({@link CorruptBinaryException}
 * for truncated or inconsistent data, {@link DwarfUnavailableException} for stripped DWARF,
 * {@link UnsupportedDwarfFormException}); unexpected runtime exceptions from malformed input are converted to
 * {@link CorruptBinaryException}. Thread-safe.
 *
 * <p>Memory: the file is mapped, not read; DWARF sections are inflated onto the heap on first use and kept
 * until {@link #close()} (about 20 MB for a 45 MB binary with DWARF 5; a benchmark answering every probe
 * question runs in a 64 MB heap).
 */
public final class GoBinary implements AutoCloseable {
  /** {@code *net.TCPConn} as a {@code net.Conn}. */
  public static final String ITAB_TCP_CONN = "*net.TCPConn,net.Conn";
  /** {@code *crypto/tls.Conn} as a {@code net.Conn}. */
  public static final String ITAB_TLS_CONN = "*crypto/tls.Conn,net.Conn";
  /** grpc-go's {@code credentials.syscallConn} wrapper (internal/credentials since grpc-go 1.30). */
  public static final String ITAB_GRPC_SYSCALL_CONN =
      "*google.golang.org/grpc/internal/credentials.syscallConn,net.Conn";
  /** The same wrapper in grpc-go before 1.30 ({@code credentials/internal}). */
  public static final String ITAB_GRPC_SYSCALL_CONN_OLD =
      "*google.golang.org/grpc/credentials/internal.syscallConn,net.Conn";
  /** x/net's h2c wraps the hijacked connection (x/net http2/h2c/h2c.go). */
  public static final String ITAB_H2C_BUF_CONN = "*golang.org/x/net/http2/h2c.bufConn,net.Conn";
  private final ElfFile elf;
  private BuildInfo buildInfo;
  private GoBinaryException buildInfoError;
  private Pclntab pclntab;
  private Optional<ModuleData> moduleData;
  private DwarfData dwarf;
  private Optional<io.gospan.offsets.pclntab.TypeLayouts> typeLayouts;

  private GoBinary(ElfFile elf) {
    this.elf = elf;
  }

  /**
   * Opens and identifies a Go executable.
   *
   * @throws NotElfException not an ELF file
   * @throws UnsupportedArchitectureException not 64-bit little-endian x86-64
   * @throws NotGoBinaryException neither {@code .go.buildinfo}/build info magic nor {@code .gopclntab}
   * @throws CorruptBinaryException ELF header tables point outside the file
   * @throws IOException the file cannot be read
   */
  public static GoBinary open(Path path) throws IOException {
    ElfFile elf;
    try {
      elf = ElfFile.open(path);
    } catch (RuntimeException e) {
      throw new CorruptBinaryException(path + ": " + e, e);
    }
    return identify(elf);
  }

  /**
   * Inspects an executable image held in memory; {@code name} is used in messages only.
   *
   * @throws NotElfException not an ELF image
   * @throws UnsupportedArchitectureException not 64-bit little-endian x86-64
   * @throws NotGoBinaryException no Go build info and no {@code .gopclntab}
   * @throws CorruptBinaryException ELF header tables point outside the image
   */
  public static GoBinary of(Path name, java.nio.ByteBuffer contents) throws GoBinaryException {
    ElfFile elf;
    try {
      elf = ElfFile.of(name, contents);
    } catch (RuntimeException e) {
      throw new CorruptBinaryException(name + ": " + e, e);
    }
    return identify(elf);
  }

  private static GoBinary identify(ElfFile elf) throws GoBinaryException {
    GoBinary bin = new GoBinary(elf);
    if (elf.section(".gopclntab").isEmpty() && elf.section(".go.buildinfo").isEmpty()) {
      bin.buildInfo(); // the magic search is the last way to recognise Go; throws NotGoBinaryException
    }
    return bin;
  }

  public Path path() {
    return elf.path();
  }

  /** The underlying ELF file. */
  public ElfFile elf() {
    return elf;
  }

  /**
   * Build info (Go version, modules, settings), parsed once.
   *
   * @throws NotGoBinaryException no build info in the binary
   * @throws CorruptBinaryException the blob is truncated or malformed
   */
  public synchronized BuildInfo buildInfo() throws GoBinaryException {
    if (buildInfo == null && buildInfoError == null) {
      try {
        buildInfo = BuildInfoReader.read(elf);
      } catch (GoBinaryException e) {
        buildInfoError = e;
      } catch (RuntimeException e) {
        buildInfoError = corrupt("build info", e);
      }
    }
    if (buildInfoError != null) {
      throw buildInfoError;
    }
    return buildInfo;
  }

  /** The Go toolchain version, e.g. {@code go1.22.12}. */
  public String goVersion() throws GoBinaryException {
    return buildInfo().goVersion();
  }

  /**
   * Whether Go functions take arguments in registers: ABIInternal on amd64 since Go 1.17 (Go
   * src/cmd/compile/abi-internal.md). Decided by the Go version, not by DWARF: Go 1.17's location lists put
   * some register arguments in their spill slots at the entry pc. A development toolchain ({@code devel ...})
   * counts as register ABI.
   */
  public boolean usesRegisterAbi() throws GoBinaryException {
    int minor = buildInfo().goMinorVersion();
    return minor < 0 || minor >= 17;
  }

  /**
   * Entry address and file offset of one function by Go symbol name.
   *
   * @return empty when neither {@code .symtab} nor {@code .gopclntab} has it
   */
  public Optional<GoFunction> function(String name) throws GoBinaryException {
    return Optional.ofNullable(functions(List.of(name)).get(name));
  }

  /**
   * Entry addresses of several functions: from {@code .symtab} (STT_FUNC symbols) when present, else from
   * {@code .gopclntab}. One pass over each table.
   *
   * @return the functions found, by name
   * @throws CorruptBinaryException a table is truncated, or an entry lies in no PT_LOAD segment
   */
  public synchronized Map<String, GoFunction> functions(Collection<String> names) throws GoBinaryException {
    try {
      Map<String, GoFunction> out = new LinkedHashMap<>();
      List<String> missing = new ArrayList<>();
      Map<String, ElfSymbol> syms = elf.symbols(names);
      for (String n : names) {
        ElfSymbol s = syms.get(n);
        if (s != null && s.type() == ElfSymbol.STT_FUNC) {
          out.put(n, function(n, s.value(), GoFunction.Source.SYMTAB));
        } else {
          missing.add(n);
        }
      }
      if (!missing.isEmpty() && elf.section(".gopclntab").isPresent()) {
        Map<String, Long> entries = pclntab().entries(missing);
        for (String n : missing) {
          Long e = entries.get(n);
          if (e != null) {
            out.put(n, function(n, e, GoFunction.Source.PCLNTAB));
          }
        }
      }
      return out;
    } catch (RuntimeException e) {
      throw corrupt("function lookup", e);
    }
  }

  /**
   * Entry addresses straight from {@code .gopclntab}, ignoring {@code .symtab} (what a stripped binary gives).
   */
  public synchronized Map<String, GoFunction> functionsFromPclntab(Collection<String> names)
      throws GoBinaryException {
    try {
      Map<String, GoFunction> out = new LinkedHashMap<>();
      Map<String, Long> entries = pclntab().entries(names);
      for (String n : names) {
        Long e = entries.get(n);
        if (e != null) {
          out.put(n, function(n, e, GoFunction.Source.PCLNTAB));
        }
      }
      return out;
    } catch (RuntimeException e) {
      throw corrupt("pclntab", e);
    }
  }

  /**
   * The first function entry in {@code .gopclntab} after {@code address} (for a function's entry: where the
   * next function starts, its alignment padding included; for the last function, the end of the text). Used
   * to bound a function's code where {@code .symtab} gives no size.
   *
   * @return empty when there is no {@code .gopclntab} or no entry after {@code address}
   * @throws CorruptBinaryException the table is malformed
   */
  public synchronized java.util.OptionalLong nextFunctionEntry(long address) throws GoBinaryException {
    if (elf.section(".gopclntab").isEmpty()) {
      return java.util.OptionalLong.empty();
    }
    try {
      return pclntab().entryAfter(address);
    } catch (RuntimeException e) {
      throw corrupt("pclntab", e);
    }
  }

  private GoFunction function(String name, long entry, GoFunction.Source source) throws CorruptBinaryException {
    long off = elf.fileOffset(entry).orElseThrow(() -> new CorruptBinaryException(elf.path() + ": entry 0x"
        + Long.toHexString(entry) + " of " + name + " is in no PT_LOAD segment, or past the end of the file"));
    return new GoFunction(name, entry, off, source);
  }

  private Pclntab pclntab() throws GoBinaryException {
    if (pclntab == null) {
      Pclntab p = Pclntab.read(elf);
      if (p.version() >= Pclntab.GO_1_18) {
        // go1.26 writes textStart = 0: use moduledata.text, else the .text section (the same address for
        // internally linked binaries), as debug/gosym is given by its callers.
        Optional<ModuleData> md = moduleData(p);
        long text = md.isPresent() ? md.get().text()
            : elf.section(".text").map(ElfSection::addr).orElse(p.headerTextStart());
        p.setTextStart(text);
      }
      pclntab = p;
    }
    return pclntab;
  }

  private Optional<ModuleData> moduleData(Pclntab p) throws GoBinaryException {
    if (moduleData == null) {
      moduleData = ModuleData.find(elf, p);
    }
    return moduleData;
  }

  /**
   * Addresses of the named itabs ({@code "<concrete>,<interface>"}, e.g. {@link #ITAB_TCP_CONN}). With
   * {@code .symtab}: the {@code go:itab.}/{@code go.itab.} symbols. Without them (stripped, or go1.27, which
   * has no itab symbols): the itabs listed in {@code runtime.firstmoduledata.itablinks} (go1.27: laid out in
   * the type data), named from the runtime type data. When neither works the
   * result says {@link ItabAddresses.Source#UNAVAILABLE} and why.
   */
  public synchronized ItabAddresses itabs(Collection<String> names) throws GoBinaryException {
    try {
      if (elf.hasSymbols()) {
        List<String> symNames = new ArrayList<>();
        for (String n : names) {
          symNames.add("go:itab." + n);
          symNames.add("go.itab." + n);
        }
        Map<String, ElfSymbol> syms = elf.symbols(symNames);
        Map<String, Long> out = new LinkedHashMap<>();
        for (String n : names) {
          ElfSymbol s = syms.getOrDefault("go:itab." + n, syms.get("go.itab." + n));
          if (s != null) {
            out.put(n, s.value());
          }
        }
        if (!out.isEmpty()) {
          return new ItabAddresses(Map.copyOf(out), ItabAddresses.Source.SYMTAB, "");
        }
        // go1.27 links the itabs into the type data without go:itab symbols: the runtime's table names them
      }
      if (elf.section(".gopclntab").isEmpty()) {
        return unavailable("no .symtab and no .gopclntab to find moduledata");
      }
      Optional<ModuleData> md = moduleData(pclntab());
      if (md.isEmpty()) {
        return unavailable("no .symtab and runtime.firstmoduledata not found");
      }
      Optional<ModuleData.ItabTable> table = md.get().itabTable();
      if (table.isEmpty()) {
        return unavailable("moduledata has no recognisable types range and itablinks");
      }
      int minor;
      try {
        minor = buildInfo().goMinorVersion();
      } catch (GoBinaryException e) {
        return unavailable("Go version unknown (" + e.getMessage() + "), type name encoding undecidable");
      }
      if (minor < 0) {
        return unavailable("Go version " + buildInfo().goVersion() + " not a release; type name encoding undecidable");
      }
      RuntimeTypes rt = new RuntimeTypes(elf, new long[] {table.get().types(), table.get().etypes()}, minor);
      Map<String, Long> found = rt.nameItabs(table.get().itablinks(), names::contains);
      return new ItabAddresses(Map.copyOf(found), ItabAddresses.Source.ITABLINKS, "");
    } catch (RuntimeException e) {
      throw corrupt("itab lookup", e);
    }
  }

  /**
   * Struct layouts from the runtime type information ({@link io.gospan.offsets.pclntab.TypeLayouts}),
   * read once; present in stripped binaries too.
   *
   * @return empty with no moduledata, no recognisable type data, or a development Go version (the
   *     reason is not kept: callers say "not verifiable")
   * @throws CorruptBinaryException the type data points outside the file
   */
  public synchronized Optional<io.gospan.offsets.pclntab.TypeLayouts> typeLayouts() throws GoBinaryException {
    if (typeLayouts == null) {
      typeLayouts = Optional.empty();
      try {
        int minor = buildInfo().goMinorVersion();
        if (minor >= 0 && elf.section(".gopclntab").isPresent()) {
          Optional<ModuleData> md = moduleData(pclntab());
          Optional<ModuleData.ItabTable> table = md.isPresent() ? md.get().itabTable() : Optional.empty();
          if (table.isPresent()) {
            typeLayouts = Optional.of(io.gospan.offsets.pclntab.TypeLayouts.read(
                elf, new long[] {table.get().types(), table.get().etypes()}, table.get().itablinks(), minor));
          }
        }
      } catch (RuntimeException e) {
        throw corrupt("runtime type information", e);
      }
    }
    return typeLayouts;
  }

  /**
   * The runtime type data range and every itab's address ({@code moduledata.types}, {@code etypes},
   * {@code itablinks}), present in stripped binaries too.
   *
   * @return empty without {@code .gopclntab}, or when moduledata or its itab list is not recognised
   * @throws CorruptBinaryException the tables point outside the file
   */
  public synchronized Optional<ModuleData.ItabTable> itabTable() throws GoBinaryException {
    try {
      if (elf.section(".gopclntab").isEmpty()) {
        return Optional.empty();
      }
      Optional<ModuleData> md = moduleData(pclntab());
      return md.isPresent() ? md.get().itabTable() : Optional.empty();
    } catch (RuntimeException e) {
      throw corrupt("moduledata", e);
    }
  }

  private static ItabAddresses unavailable(String why) {
    return new ItabAddresses(Map.of(), ItabAddresses.Source.UNAVAILABLE, why);
  }

  /**
   * The binary's DWARF, read lazily.
   *
   * @throws DwarfUnavailableException no {@code .debug_info} (stripped / {@code -ldflags=-w})
   */
  public synchronized Dwarf dwarf() throws GoBinaryException {
    if (dwarf == null) {
      dwarf = DwarfData.open(elf);
    }
    return new Dwarf(dwarf);
  }

  /**
   * The DWARF answers, with unexpected runtime exceptions from malformed data converted to
   * {@link CorruptBinaryException}. See {@link DwarfData} for the semantics of each query.
   */
  public final class Dwarf {
    private final DwarfData data;

    private Dwarf(DwarfData data) {
      this.data = data;
    }

    /** See {@link DwarfData#struct(String)}. */
    public Optional<io.gospan.offsets.dwarf.StructType> struct(String typeName) throws GoBinaryException {
      try {
        return data.struct(typeName);
      } catch (RuntimeException e) {
        throw corrupt("DWARF struct " + typeName, e);
      }
    }

    /** See {@link DwarfData#memberOffset(String, String)}. */
    public java.util.OptionalLong memberOffset(String typeName, String memberPath) throws GoBinaryException {
      try {
        return data.memberOffset(typeName, memberPath);
      } catch (RuntimeException e) {
        throw corrupt("DWARF member " + typeName + "." + memberPath, e);
      }
    }

    /** See {@link DwarfData#typeSize(String)}. */
    public java.util.OptionalLong typeSize(String typeName) throws GoBinaryException {
      try {
        return data.typeSize(typeName);
      } catch (RuntimeException e) {
        throw corrupt("DWARF type " + typeName, e);
      }
    }

    /** See {@link DwarfData#parameters(String)}. */
    public Optional<io.gospan.offsets.dwarf.FunctionParameters> parameters(String functionName)
        throws GoBinaryException {
      try {
        return data.parameters(functionName);
      } catch (RuntimeException e) {
        throw corrupt("DWARF parameters of " + functionName, e);
      }
    }

    /**
     * Parameter locations at entry derived from Go's calling convention and the DWARF types, for this
     * binary's ABI ({@link GoBinary#usesRegisterAbi()}). Prefer this over {@link #parameters} for Go 1.17,
     * whose DWARF puts some register arguments in their spill slots at the entry pc. See
     * {@link DwarfData#parametersByAbi(String, boolean)}.
     */
    public Optional<io.gospan.offsets.dwarf.FunctionParameters> parametersByAbi(String functionName)
        throws GoBinaryException {
      try {
        return data.parametersByAbi(functionName, usesRegisterAbi());
      } catch (RuntimeException e) {
        throw corrupt("ABI parameters of " + functionName, e);
      }
    }

    /** See {@link DwarfData#compileUnits()}. */
    public List<io.gospan.offsets.dwarf.CompileUnit> compileUnits() throws GoBinaryException {
      try {
        return data.compileUnits();
      } catch (RuntimeException e) {
        throw corrupt("DWARF compile units", e);
      }
    }

    /** See {@link DwarfData#compileUnitAt(long)}. */
    public Optional<io.gospan.offsets.dwarf.CompileUnit> compileUnitAt(long pc) throws GoBinaryException {
      try {
        return data.compileUnitAt(pc);
      } catch (RuntimeException e) {
        throw corrupt("DWARF compile unit at 0x" + Long.toHexString(pc), e);
      }
    }

    /** DWARF version of the first unit (4 before Go 1.25, 5 since). */
    public int version() throws GoBinaryException {
      try {
        return data.version();
      } catch (RuntimeException e) {
        throw corrupt("DWARF", e);
      }
    }
  }

  private CorruptBinaryException corrupt(String what, RuntimeException e) {
    return new CorruptBinaryException(elf.path() + ": " + what + ": malformed data (" + e + ")", e);
  }

  /**
   * Drops the inflated DWARF sections and parsed tables (for a 45 MB binary about 20 MB of heap). The file
   * mapping itself is released by the garbage collector once this object is unreachable. A closed instance
   * still answers, re-reading what it needs; hold one only while inspecting.
   */
  @Override
  public synchronized void close() {
    dwarf = null;
    pclntab = null;
    moduleData = null;
    elf.releaseCaches();
  }
}
