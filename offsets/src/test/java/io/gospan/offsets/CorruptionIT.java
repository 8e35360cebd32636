package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.ElfSection;
import io.gospan.offsets.fuzz.FuzzSeeds;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Hundreds of truncated and bit-flipped copies of real Go binaries (fixed seeds): every query must give an
 * answer or a {@link GoBinaryException}, within a time bound, never another exception, a hang or an
 * OutOfMemoryError. Flips are aimed at the structures the parsers walk (ELF tables, build info, pclntab,
 * moduledata, symbols, DWARF) — the base binaries carry uncompressed DWARF so flips reach the DWARF parser
 * rather than a zlib checksum — plus one base with compressed {@code .zdebug_*} sections.
 */
class CorruptionIT {
  private static final int CASES_PER_BINARY = 200;
  private static final long TIME_BOUND_SECONDS = 10;
  private static final List<String> TARGETS = List.of(".go.buildinfo", ".gopclntab", ".go.module", ".noptrdata",
      ".symtab", ".strtab", ".debug_info", ".debug_abbrev", ".debug_loc", ".debug_loclists", ".debug_addr",
      ".zdebug_info", ".zdebug_abbrev", ".zdebug_loc", ".itablink", ".rodata");

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"1.22.12, v1.60.1, app.plaindwarf, 1", "1.26.8, v1.85.0, app.plaindwarf, 2",
      "1.16.15, v1.40.0, app, 3"})
  void corruptCopiesGiveAnAnswerOrTheDocumentedException(String go, String grpc, String file, long seed)
      throws Exception {
    Path path = GoFixtures.fixture(go, grpc).resolve(file);
    byte[] original = Files.readAllBytes(path);
    List<long[]> regions = regions(path);
    Random rnd = new Random(seed);
    byte[] work = original.clone();
    Map<String, Integer> outcomes = new TreeMap<>();
    List<String> failures = new ArrayList<>();
    ExecutorService exec = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "corruption");
      t.setDaemon(true);
      return t;
    });
    try {
      for (int i = 0; i < CASES_PER_BINARY; i++) {
        String what;
        ByteBuffer image;
        int[] flipped = new int[0];
        int[] wiped = null;
        int kind = rnd.nextInt(4);
        if (kind == 0) {
          int len = rnd.nextInt(original.length);
          what = "truncated to " + len;
          image = ByteBuffer.wrap(original, 0, len).slice();
        } else if (kind == 1) {
          // A section cut short inside an intact file: its tail reads as zeros or 0xff.
          long[] reg = regions.get(rnd.nextInt(regions.size()));
          int from = (int) Math.min(original.length, reg[0] + (long) (rnd.nextDouble() * reg[1]));
          int to = (int) Math.min(original.length, reg[0] + reg[1]);
          byte fill = rnd.nextBoolean() ? 0 : (byte) 0xff;
          java.util.Arrays.fill(work, from, to, fill);
          wiped = new int[] {from, to};
          what = "section tail [" + from + ", " + to + ") filled with " + (fill & 0xff);
          image = ByteBuffer.wrap(work);
        } else {
          long[] reg = kind == 2 ? regions.get(rnd.nextInt(regions.size())) : new long[] {0, original.length};
          int flips = 1 + rnd.nextInt(8);
          flipped = new int[flips];
          StringBuilder sb = new StringBuilder("bits flipped at");
          for (int f = 0; f < flips; f++) {
            int at = (int) (reg[0] + (long) (rnd.nextDouble() * reg[1]));
            at = Math.min(at, original.length - 1);
            flipped[f] = at;
            work[at] ^= (byte) (1 << rnd.nextInt(8));
            sb.append(' ').append(at);
          }
          what = sb.toString();
          image = ByteBuffer.wrap(work);
        }
        String label = "case " + i + " (" + what + ")";
        Future<String> result = exec.submit(() -> inspectEverything(path, image));
        try {
          String outcome = result.get(TIME_BOUND_SECONDS, TimeUnit.SECONDS);
          outcomes.merge(outcome, 1, Integer::sum);
        } catch (TimeoutException e) {
          result.cancel(true);
          failures.add(label + ": no result within " + TIME_BOUND_SECONDS + " s");
          break; // the worker thread may be stuck; later cases would only queue behind it
        } catch (java.util.concurrent.ExecutionException e) {
          failures.add(label + ": " + e.getCause());
        }
        for (int at : flipped) {
          work[at] = original[at];
        }
        if (wiped != null) {
          System.arraycopy(original, wiped[0], work, wiped[0], wiped[1] - wiped[0]);
        }
      }
    } finally {
      exec.shutdownNow();
    }
    System.out.println("corruption outcomes for " + path + ": " + outcomes);
    assertThat(failures).as("cases that threw something undocumented or hung").isEmpty();
    assertThat(outcomes.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(CASES_PER_BINARY);
  }

  /** File ranges {offset, size} of the sections the parsers read. */
  private static List<long[]> regions(Path path) throws Exception {
    ElfFile elf = ElfFile.open(path);
    List<long[]> out = new ArrayList<>();
    out.add(new long[] {0, 64 + 56L * elf.segments().size()});
    out.add(new long[] {elf.size() - 64L * elf.sections().size(), 64L * elf.sections().size()}); // Go puts them last
    for (ElfSection s : elf.sections()) {
      if (TARGETS.contains(s.name()) && s.type() != ElfSection.SHT_NOBITS && s.size() > 0) {
        out.add(new long[] {s.offset(), s.size()});
        out.add(new long[] {s.offset(), Math.min(s.size(), 512)}); // headers weigh more
      }
    }
    return out;
  }

  /**
   * Asks every question the probes ask; each part separately so one failure does not hide the next.
   *
   * @return a summary of the outcome: "ok" parts and exception class names
   */
  private static String inspectEverything(Path name, ByteBuffer image) {
    StringBuilder outcome = new StringBuilder();
    GoBinary bin;
    try {
      bin = GoBinary.of(name, image);
    } catch (GoBinaryException e) {
      return "open:" + e.getClass().getSimpleName();
    }
    outcome.append(part("buildinfo", () -> bin.buildInfo()));
    outcome.append(part("functions", () -> bin.functions(GoFixtures.FUNCTIONS)));
    outcome.append(part("pclntab", () -> bin.functionsFromPclntab(GoFixtures.FUNCTIONS)));
    outcome.append(part("itabs", () -> bin.itabs(FuzzSeeds.CONN_ITABS)));
    outcome.append(part("dwarf", () -> {
      GoBinary.Dwarf d = bin.dwarf();
      for (String f : GoFixtures.FUNCTIONS) {
        d.parameters(f);
        d.parametersByAbi(f);
      }
      for (String s : GoFixtures.STRUCTS) {
        d.struct(s);
        d.typeSize(s);
      }
      d.memberOffset("google.golang.org/grpc/internal/transport.loopyWriter", "framer");
      d.memberOffset("net.TCPConn", "conn.fd");
      d.compileUnits();
      return null;
    }));
    return outcome.toString().contains(":") ? outcome.toString().trim() : "all ok";
  }

  private interface Query {
    Object run() throws GoBinaryException;
  }

  private static String part(String what, Query q) {
    try {
      q.run();
      return "";
    } catch (GoBinaryException e) {
      // "(runtime)": a parser let a runtime exception through and GoBinary's guard converted it.
      return " " + what + ":" + e.getClass().getSimpleName()
          + (e.getCause() instanceof RuntimeException ? "(runtime " + e.getCause() + ")" : "");
    }
  }
}
