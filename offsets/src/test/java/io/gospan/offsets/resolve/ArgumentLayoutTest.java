package io.gospan.offsets.resolve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.code.ArgumentSpills;
import io.gospan.offsets.dwarf.FunctionParameters;
import io.gospan.offsets.dwarf.Parameter;
import io.gospan.offsets.dwarf.Piece;
import io.gospan.offsets.dwarf.X86Register;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Argument layouts: the catalog's text form, a build's layout from DWARF's ABI registers and the code's
 * spills, and the check a stripped binary's spills must pass. The values are grpc-go v1.85.0's {@code
 * (*http2Client).closeStream} built with go1.26.8 (its DWARF and its code agree, as the catalog generator
 * checks on every build).
 */
class ArgumentLayoutTest {
  private static final String CLOSE_STREAM = "t *google.golang.org/grpc/internal/transport.http2Client = rax@0:8"
      + " | s *google.golang.org/grpc/internal/transport.ClientStream = rbx@8:8 | err error = rcx@16:8 rdi@24:8"
      + " | rst bool = rsi@32:1 | rstCode golang.org/x/net/http2.ErrCode = r8@36:4"
      + " | st *google.golang.org/grpc/internal/status.Status = r9@40:8 | mdata map[string][]string = r10@48:8"
      + " | eosReceived bool = r11@56:1";

  private static ArgumentSpills spills(String... words) {
    return new ArgumentSpills(java.util.Arrays.stream(words).map(w -> {
      String[] p = w.split("[@:]");
      return new ArgumentSpills.Spill(p[0], Integer.parseInt(p[1]), Integer.parseInt(p[2]));
    }).toList(), null);
  }

  private static final ArgumentSpills CLOSE_STREAM_SPILLS =
      spills("rax@0:8", "rbx@8:8", "rcx@16:8", "rdi@24:8", "rsi@32:1", "r8@36:4", "r9@40:8", "r10@48:8", "r11@56:1");

  @Test
  void theTextFormRoundTrips() {
    ArgumentLayout l = ArgumentLayout.parse(CLOSE_STREAM);
    assertThat(l.params()).hasSize(8);
    assertThat(l.param("err").orElseThrow().words()).extracting(ArgumentLayout.Word::register).containsExactly("rcx", "rdi");
    assertThat(l.param("mdata").orElseThrow().type()).isEqualTo("map[string][]string");
    assertThat(l.format()).isEqualTo(CLOSE_STREAM);
    assertThat(ArgumentLayout.parse("").params()).isEmpty();
    assertThat(ArgumentLayout.parse("x struct {} =").param("x").orElseThrow().words()).isEmpty();
    assertThatThrownBy(() -> ArgumentLayout.parse("t = rax")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ArgumentLayout.parse("t *T = rax@x:8")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aParameterIsFoundByNameWhenTheSpillsAreTheLayoutsExactly() {
    ArgumentLayout l = ArgumentLayout.parse(CLOSE_STREAM);
    assertThat(l.mismatch(CLOSE_STREAM_SPILLS)).isNull();
    assertThat(l.location("st", 0)).contains(ArgLocation.inRegister(9)); // R9
    assertThat(l.location("s", 0)).contains(ArgLocation.inRegister(3)); // RBX
    assertThat(l.location("err", 1)).contains(ArgLocation.inRegister(5)); // RDI
    assertThat(l.location("st", 1)).isEmpty();
    assertThat(l.location("nope", 0)).isEmpty();
  }

  @Test
  void anyDifferenceInTheSpillsIsAMismatch() {
    ArgumentLayout l = ArgumentLayout.parse(CLOSE_STREAM);
    // a parameter more (a pointer after s: everything after it moves)
    assertThat(l.mismatch(spills("rax@0:8", "rbx@8:8", "rcx@16:8", "rdi@24:8", "rsi@32:8", "r8@40:1", "r9@44:4",
        "r10@48:8", "r11@56:8"))).startsWith("the code saves rax@0:8 rbx@8:8 rcx@16:8");
    // the same registers, one size different
    assertThat(l.mismatch(spills("rax@0:8", "rbx@8:8", "rcx@16:8", "rdi@24:8", "rsi@32:1", "r8@36:4", "r9@40:8",
        "r10@48:8", "r11@56:8"))).isNotNull();
    // one word fewer: the last parameter gone
    assertThat(l.mismatch(spills("rax@0:8", "rbx@8:8", "rcx@16:8", "rdi@24:8", "rsi@32:1", "r8@36:4", "r9@40:8",
        "r10@48:8"))).isNotNull();
  }

  private static Piece reg(long size, int dwarf) {
    return new Piece(size, Piece.Kind.REGISTER, X86Register.ofDwarf(dwarf).orElse(null), dwarf, 0);
  }

  @Test
  void aBuildsLayoutIsDwarfsRegistersAtTheCodesSlots() {
    FunctionParameters byAbi = new FunctionParameters("f", 0x1000, List.of(
        new Parameter("l", "*T", 8, false, Parameter.LocationSource.ABI, List.of(reg(8, 0))),
        new Parameter("streamID", "uint32", 4, false, Parameter.LocationSource.ABI, List.of(reg(4, 3))),
        new Parameter("hf", "[]hpack.HeaderField", 24, false, Parameter.LocationSource.ABI,
            List.of(reg(8, 2), reg(8, 5), reg(8, 4)))), FunctionParameters.Abi.REGISTER);
    ArgumentLayout.Result r = ArgumentLayout.of(byAbi, spills("rax@0:8", "rbx@8:4", "rcx@16:8", "rdi@24:8", "rsi@32:8"));
    assertThat(r.reason()).isNull();
    assertThat(r.layout().format())
        .isEqualTo("l *T = rax@0:8 | streamID uint32 = rbx@8:4 | hf []hpack.HeaderField = rcx@16:8 rdi@24:8 rsi@32:8");
    // DWARF's ABI and the code disagree: no layout, and why
    assertThat(ArgumentLayout.of(byAbi, spills("rax@0:8", "rbx@8:8", "rcx@16:8", "rdi@24:8", "rsi@32:8")).reason())
        .contains("streamID has a 4-byte word in rbx, the code saves 8");
    assertThat(ArgumentLayout.of(byAbi, spills("rax@0:8", "rbx@8:4", "rcx@16:8", "rdi@24:8")).reason())
        .contains("hf is in rsi by the ABI, which the code does not save");
    assertThat(ArgumentLayout.of(byAbi, spills("rax@0:8", "rbx@8:4", "rcx@16:8", "rdi@24:8", "rsi@32:8", "r8@40:8")).reason())
        .contains("the code saves [r8@40:8], which no parameter holds");
    assertThat(ArgumentLayout.of(byAbi, new ArgumentSpills(List.of(), "no stack-check prologue")).reason())
        .isEqualTo("no stack-check prologue");
  }

  @Test
  void importPathsAreCutToPackageNamesAsTheRuntimeSpellsThem() {
    assertThat(ArgumentLayout.packageNames("*google.golang.org/grpc/internal/transport.ServerStream"))
        .isEqualTo("*transport.ServerStream");
    assertThat(ArgumentLayout.packageNames("func(*google.golang.org/grpc/internal/transport.ServerStream)"))
        .isEqualTo("func(*transport.ServerStream)");
    assertThat(ArgumentLayout.packageNames("vendor/golang.org/x/net/http2/hpack.HeaderField")).isEqualTo("hpack.HeaderField");
    assertThat(ArgumentLayout.packageNames("map[string][]string")).isEqualTo("map[string][]string");
    assertThat(ArgumentLayout.packageNames("error")).isEqualTo("error");
  }
}
