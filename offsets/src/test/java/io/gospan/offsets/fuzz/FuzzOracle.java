package io.gospan.offsets.fuzz;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.ItabAddresses;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.GrpcUserAgent;
import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.dwarf.CompileUnit;
import io.gospan.offsets.dwarf.DwarfData;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.pclntab.TypeLayouts;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Probe;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the fuzz targets check on every input: each reader answers or throws a
 * {@link GoBinaryException} (a runtime exception that {@link GoBinary}'s catch-all turned into a
 * {@code CorruptBinaryException} counts as a finding: the parser itself let it through), every answer
 * lies inside the file where it names a place in it, and one input allocates at most
 * {@link #ALLOCATION_BUDGET_BASE} plus {@link #ALLOCATION_BUDGET_PER_BYTE} per input byte on the calling
 * thread, within {@link #TIME_BUDGET_SECONDS}.
 */
final class FuzzOracle {
  /** Bytes any input may allocate (the DWARF name indexes start at 150 KB; the seeds stay under 2 MB). */
  static final long ALLOCATION_BUDGET_BASE = 8L << 20;
  /** Bytes per input byte beyond the base: what a parser may build per byte it reads. */
  static final long ALLOCATION_BUDGET_PER_BYTE = 256;

  /** Seconds any input may take (an input is at most 64 KiB; the seeds take milliseconds). */
  static final long TIME_BUDGET_SECONDS = 10;

  /** The functions the probes attach to, and two every Go binary has. */
  static final List<String> FUNCTIONS;

  static {
    List<String> f = new ArrayList<>();
    for (Probe p : Probe.values()) {
      if (!f.contains(p.function())) {
        f.add(p.function());
      }
    }
    f.add("main.main");
    f.add("runtime.goexit");
    FUNCTIONS = List.copyOf(f);
  }

  /** Struct types the probes read members of (DWARF and runtime type information). */
  static final List<String> STRUCTS = List.of(
      "google.golang.org/grpc/internal/transport.loopyWriter",
      "google.golang.org/grpc/internal/transport.http2Client",
      "google.golang.org/grpc/internal/transport.http2Server",
      "golang.org/x/net/http2.MetaHeadersFrame",
      "golang.org/x/net/http2/hpack.HeaderField",
      "net.TCPConn",
      "net.conn",
      "net.netFD",
      "internal/poll.FD",
      "crypto/tls.Conn",
      "runtime.g");

  private static final Path NAME = Path.of("fuzz-input");
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private FuzzOracle() {}

  /** A query that may throw the readers' exceptions. */
  interface Query {
    void run() throws GoBinaryException;
  }

  /** The parsers let a runtime exception through: a finding. */
  static final class UntypedException extends RuntimeException {
    UntypedException(String what, Throwable cause) {
      super(what + ": a runtime exception escaped the reader (GoBinary's catch-all caught it): " + cause, cause);
    }
  }

  /** An answer that names a place outside the file, or breaks another invariant. */
  static final class BadAnswer extends RuntimeException {
    BadAnswer(String message) {
      super(message);
    }
  }

  /** One input took more than {@link #TIME_BUDGET_SECONDS}. */
  static final class TimeBudgetExceeded extends RuntimeException {
    TimeBudgetExceeded(String message) {
      super(message);
    }
  }

  /** One input allocated more than its budget. */
  static final class MemoryBudgetExceeded extends RuntimeException {
    MemoryBudgetExceeded(String message) {
      super(message);
    }
  }

  /**
   * Runs {@code body} on an input of {@code inputLength} bytes within the time and allocation budgets, on a
   * worker thread (so a hang is reported, whichever mode Jazzer runs in). An input over the allocation
   * budget is run once more and judged by that run: the first inputs of a JVM also load classes and the
   * embedded catalog, which the thread's allocation counter includes.
   */
  static void withinBudget(int inputLength, Query body) {
    long budget = ALLOCATION_BUDGET_BASE + ALLOCATION_BUDGET_PER_BYTE * inputLength;
    long used = allocatedBy(body);
    if (used > budget) {
      used = allocatedBy(body);
    }
    if (Boolean.getBoolean("gospan.fuzz.printAllocation")) {
      System.out.println("fuzz input of " + inputLength + " bytes allocated " + used + " bytes");
    }
    if (used > budget) {
      throw new MemoryBudgetExceeded("an input of " + inputLength + " bytes allocated " + used
          + " bytes, over its budget of " + budget);
    }
  }

  private static ExecutorService worker = newWorker();

  private static ExecutorService newWorker() {
    return Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "fuzz-input");
      t.setDaemon(true);
      return t;
    });
  }

  /** Bytes {@code body} allocated on the worker thread; a finding when it takes over the time budget. */
  private static synchronized long allocatedBy(Query body) {
    Future<Long> f = worker.submit(() -> {
      long before = THREADS.getCurrentThreadAllocatedBytes();
      try {
        body.run();
      } catch (GoBinaryException e) {
        checkTyped("open", e);
      }
      return THREADS.getCurrentThreadAllocatedBytes() - before;
    });
    try {
      return f.get(TIME_BUDGET_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      f.cancel(true);
      worker.shutdownNow();
      worker = newWorker(); // the stuck thread is left behind (a daemon); the next input gets a fresh one
      throw new TimeBudgetExceeded("no answer within " + TIME_BUDGET_SECONDS + " s");
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException re) {
        throw re;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(c);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Runs one query: typed exceptions are answers, a converted runtime exception is a finding. */
  static void check(String what, Query q) {
    try {
      q.run();
    } catch (GoBinaryException e) {
      checkTyped(what, e);
    }
  }

  private static void checkTyped(String what, GoBinaryException e) {
    if (e.getCause() instanceof RuntimeException || e.getCause() instanceof Error) {
      throw new UntypedException(what, e.getCause());
    }
    // Messages are printed by inspect and logged by run: they must be printable once escaped.
    String m = Printable.escape(e.getMessage());
    if (m != null && !Printable.isPrintable(m)) {
      throw new BadAnswer("message not printable after escaping: " + m);
    }
  }

  /** Opens an ELF image; null when it is not one gospan reads (a typed refusal). */
  static GoBinary open(ByteBuffer image) {
    try {
      return GoBinary.of(NAME, image);
    } catch (GoBinaryException e) {
      checkTyped("open", e);
      return null;
    }
  }

  static void buildInfo(GoBinary bin) {
    check("build info", () -> {
      BuildInfo bi = bin.buildInfo();
      bi.goMinorVersion();
      bi.hasModuleInfo();
      bi.dependency("google.golang.org/grpc").ifPresent(m -> m.effectiveVersion());
      bi.dependency("golang.org/x/net");
      bi.setting("-compiler");
      bin.usesRegisterAbi();
      printable(bi.goVersion());
      printable(bi.path());
    });
    check("grpc user agent", () -> GrpcUserAgent.find(bin.elf()));
  }

  static void functions(GoBinary bin) {
    check("functions", () -> {
      for (GoFunction f : bin.functions(FUNCTIONS).values()) {
        inFile(bin, f);
        bin.nextFunctionEntry(f.entry());
      }
    });
    check("functions from pclntab", () -> {
      for (GoFunction f : bin.functionsFromPclntab(FUNCTIONS).values()) {
        inFile(bin, f);
        bin.nextFunctionEntry(f.entry());
        bin.nextFunctionEntry(f.entry() - 1);
      }
      bin.nextFunctionEntry(0);
      bin.nextFunctionEntry(-1);
    });
  }

  static void runtimeTypes(GoBinary bin) {
    check("itabs", () -> {
      ItabAddresses itabs = bin.itabs(FuzzSeeds.CONN_ITABS);
      itabs.available();
      printable(itabs.detail());
    });
    check("type layouts", () -> {
      Optional<TypeLayouts> layouts = bin.typeLayouts();
      if (layouts.isPresent()) {
        for (String s : STRUCTS) {
          layouts.get().struct(s);
        }
        layouts.get().memberOffset(List.of("net.TCPConn", "conn", "net.conn", "fd"));
        layouts.get().memberOffset(List.of("net.netFD", "pfd", "internal/poll.FD", "Sysfd"));
      }
    });
  }

  static void dwarf(GoBinary bin) {
    check("dwarf", () -> {
      GoBinary.Dwarf d = bin.dwarf();
      d.version();
      for (CompileUnit cu : d.compileUnits()) {
        printable(cu.name());
      }
      d.compileUnitAt(FuzzImage.Kind.TEXT.address());
      for (String s : STRUCTS) {
        d.struct(s);
        d.typeSize(s);
      }
      d.typeSize("int");
      d.typeSize("*net.netFD");
      d.memberOffset("net.TCPConn", "conn.fd");
      d.memberOffset("net.TCPConn", "conn.fd.pfd.Sysfd");
      d.memberOffset("google.golang.org/grpc/internal/transport.loopyWriter", "framer");
    });
    // Both conventions on every binary: a bad type graph must fail typed whichever ABI the version says.
    check("dwarf parameters", () -> {
      DwarfData d = DwarfData.open(bin.elf());
      for (String f : FUNCTIONS) {
        d.parameters(f);
        d.parametersByAbi(f, true);
        d.parametersByAbi(f, false);
      }
    });
  }

  /** Everything {@code gospan inspect} and {@code run} ask of the readers. */
  static void everything(GoBinary bin) {
    check("elf", () -> {
      ElfFile elf = bin.elf();
      elf.sections();
      elf.segments();
      elf.readOnlyData();
      Map<String, ?> syms = elf.symbols(FUNCTIONS);
      syms.size();
      elf.symbolsWithPrefix("go:itab.", n -> n.contains("net.Conn"));
      for (String base : List.of("info", "abbrev", "str", "loclists", "loc", "addr", "ranges", "rnglists")) {
        elf.debugSection(base);
      }
    });
    buildInfo(bin);
    functions(bin);
    runtimeTypes(bin);
    dwarf(bin);
  }

  /** The offsets resolution {@code inspect} and {@code run} make from a binary. */
  static void resolve(GoBinary bin) {
    check("resolver", () -> OffsetsResolver.resolve(bin));
  }

  private static void inFile(GoBinary bin, GoFunction f) {
    if (f.fileOffset() < 0 || f.fileOffset() >= bin.elf().size()) {
      throw new BadAnswer(f.name() + " at file offset " + f.fileOffset() + ", outside the file of "
          + bin.elf().size() + " bytes");
    }
  }

  private static void printable(String s) {
    if (s != null && !Printable.isPrintable(Printable.escape(s))) {
      throw new BadAnswer("not printable after escaping: " + Printable.escape(s));
    }
  }
}
