package io.gospan.offsets.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.gospan.offsets.GoBinary;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * Coverage-guided fuzzing (Jazzer) of the readers of {@code gospan inspect} and {@code run}: ELF,
 * build info, pclntab, moduledata and runtime type information, DWARF. Each target checks {@link
 * FuzzOracle}'s rules: an answer or a {@code GoBinaryException}, never another exception; answers inside
 * the file; an allocation budget per input; at most 10 s per input.
 *
 * <p>{@code mvn test} runs every target over its committed inputs ({@code
 * src/test/resources/io/gospan/offsets/fuzz/GoBinaryFuzzTestInputs/<target>/}: the seeds of {@link
 * FuzzSeeds} and every finding kept as a regression input). {@code scripts/fuzz.sh} fuzzes each target for a
 * bounded time (docs/go-binary-inspection.md, "Fuzzing").
 *
 * <p>The section-level targets take {@link FuzzImage}'s format (a list of sections the harness lays out as
 * a valid ELF); {@link #rawImage} takes the bytes of an ELF file as they are.
 */
class GoBinaryFuzzTest {
  /** The bytes are the ELF file: header, program and section headers, symbols, compression headers. */
  @FuzzTest
  void rawImage(byte[] input) {
    GoBinary[] bin = new GoBinary[1];
    FuzzOracle.withinBudget(input.length, () -> {
      bin[0] = FuzzOracle.open(ByteBuffer.wrap(input));
      if (bin[0] != null) {
        FuzzOracle.everything(bin[0]);
      }
    });
    if (bin[0] != null) {
      // What inspect and run do with the answers; the catalog lookups allocate ~20 MB whatever the
      // input (not counted in the budget).
      FuzzOracle.resolve(bin[0]);
    }
  }

  /** {@code .go.buildinfo} (both forms, and the magic search in the data segment), grpc-go's user agent. */
  @FuzzTest
  void buildInfo(byte[] input) {
    sections(input, FuzzOracle::buildInfo);
  }

  /** {@code .gopclntab} (go1.2, go1.16, go1.18, go1.20+), {@code .symtab}, moduledata's text base. */
  @FuzzTest
  void pclntab(byte[] input) {
    sections(input, FuzzOracle::functions);
  }

  /** moduledata, itablinks, runtime type descriptors and names, struct layouts. */
  @FuzzTest
  void runtimeTypes(byte[] input) {
    sections(input, FuzzOracle::runtimeTypes);
  }

  /** DWARF 2-5: units, abbreviations, forms, location and range lists, compressed sections. */
  @FuzzTest
  void dwarf(byte[] input) {
    sections(input, FuzzOracle::dwarf);
  }

  private static void sections(byte[] input, Consumer<GoBinary> queries) {
    FuzzOracle.withinBudget(input.length, () -> {
      GoBinary bin = FuzzOracle.open(FuzzImage.elf(input));
      if (bin != null) {
        queries.accept(bin);
      }
    });
  }
}
