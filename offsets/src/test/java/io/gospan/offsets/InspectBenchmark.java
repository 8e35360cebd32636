package io.gospan.offsets;

import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.dwarf.FunctionParameters;
import io.gospan.offsets.fuzz.FuzzSeeds;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Benchmark (not a test): opens each binary given on the command line in a fresh JVM and answers every
 * question the probes ask — build info and module versions, entry/file offset of the probed functions,
 * itab addresses, parameter locations and the struct members the BPF programs read — then prints wall time
 * and peak heap. Run it through {@code offsets/bench.sh} (which pins {@code -Xmx64m}) or
 * {@code mvn -pl offsets exec:exec -Dbench.binaries=PATH}.
 */
public final class InspectBenchmark {
  static final List<String> FUNCTIONS = List.of(
      "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader",
      "google.golang.org/grpc/internal/transport.(*http2Client).operateHeaders",
      "google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders",
      "golang.org/x/net/http2/hpack.(*Encoder).WriteField");

  /** {type, member path} pairs the BPF programs read. */
  static final List<String[]> MEMBERS = List.of(
      new String[] {"google.golang.org/grpc/internal/transport.loopyWriter", "side"},
      new String[] {"google.golang.org/grpc/internal/transport.loopyWriter", "framer"},
      new String[] {"google.golang.org/grpc/internal/transport.http2Client", "conn"},
      new String[] {"google.golang.org/grpc/internal/transport.http2Server", "conn"},
      new String[] {"golang.org/x/net/http2.MetaHeadersFrame", "Fields"},
      new String[] {"golang.org/x/net/http2.MetaHeadersFrame", "HeadersFrame"},
      new String[] {"golang.org/x/net/http2.FrameHeader", "StreamID"},
      new String[] {"golang.org/x/net/http2.FrameHeader", "Flags"},
      new String[] {"golang.org/x/net/http2/hpack.HeaderField", "Name"},
      new String[] {"golang.org/x/net/http2/hpack.HeaderField", "Value"},
      new String[] {"net.TCPConn", "conn.fd"},
      new String[] {"net.netFD", "pfd"},
      new String[] {"internal/poll.FD", "Sysfd"},
      new String[] {"crypto/tls.Conn", "conn"});

  private InspectBenchmark() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println("usage: InspectBenchmark BINARY...");
      System.exit(2);
    }
    for (String a : args) {
      Path p = Path.of(a);
      resetPeaks();
      long cpu0 = processCpuNanos();
      long t0 = System.nanoTime();
      String summary = inspect(p);
      long t1 = System.nanoTime();
      long cpu1 = processCpuNanos();
      System.out.printf("%s (%.1f MB): %s%n  wall %.0f ms, process CPU %.0f ms (incl. JIT and GC threads),"
          + " peak heap %.1f MB (max heap %.0f MB)%n",
          p, Files.size(p) / 1e6, summary, (t1 - t0) / 1e6, (cpu1 - cpu0) / 1e6, peakHeap() / 1e6,
          Runtime.getRuntime().maxMemory() / 1e6);
    }
  }

  static String inspect(Path p) throws Exception {
    int answered = 0;
    int missing = 0;
    try (GoBinary bin = GoBinary.open(p)) {
      BuildInfo bi = bin.buildInfo();
      String grpc = bi.dependency("google.golang.org/grpc").map(m -> m.effectiveVersion()).orElse("none");
      String xnet = bi.dependency("golang.org/x/net").map(m -> m.effectiveVersion()).orElse("none");
      boolean registers = bin.usesRegisterAbi();
      Map<String, GoFunction> fns = bin.functions(FUNCTIONS);
      answered += fns.size();
      missing += FUNCTIONS.size() - fns.size();
      ItabAddresses itabs = bin.itabs(FuzzSeeds.CONN_ITABS);
      answered += itabs.addresses().size();
      String dwarf;
      try {
        GoBinary.Dwarf d = bin.dwarf();
        for (String f : FUNCTIONS) {
          Optional<FunctionParameters> fp = d.parameters(f);
          Optional<FunctionParameters> abi = d.parametersByAbi(f);
          if (fp.isPresent() && abi.isPresent()) {
            answered++;
          } else {
            missing++;
          }
        }
        for (String[] m : MEMBERS) {
          if (d.memberOffset(m[0], m[1]).isPresent()) {
            answered++;
          } else {
            missing++;
          }
        }
        dwarf = "DWARF " + d.version();
      } catch (DwarfUnavailableException e) {
        dwarf = "no DWARF";
      }
      return String.format("%s grpc %s x/net %s %s ABI, %s, itabs via %s; %d answers, %d absent",
          bi.goVersion(), grpc, xnet, registers ? "register" : "stack", dwarf, itabs.source(), answered, missing);
    }
  }

  private static long processCpuNanos() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
  }

  private static void resetPeaks() {
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        pool.resetPeakUsage();
      }
    }
  }

  /** Sum of the heap pools' peak usage since the last reset (an upper bound of the live peak). */
  private static long peakHeap() {
    long sum = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        sum += pool.getPeakUsage().getUsed();
      }
    }
    return sum;
  }
}
