package io.gospan.offsets.code;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Prologues and returns on byte sequences taken from the example binaries ({@code go tool objdump}), and
 * what must not be taken for them. The agreement with Go's disassembler on whole binaries is FunctionCodeIT.
 */
class FunctionCodeTest {
  static byte[] hex(String s) {
    return HexFormat.of().parseHex(s.replace(" ", ""));
  }

  static X86Decoder decoder() throws DecoderUnavailableException {
    return CapstoneDecoder.get();
  }

  @Test
  void registerAbiLargerFrame() throws Exception {
    // go1.26 writeHeader: lea -0x28(%rsp),%r12; cmp 0x10(%r14),%r12; jbe rel32; push %rbp
    assertThat(FunctionCode.prologueLength(hex("4c8d6424d8 4d3b6610 0f8697030000 55"), decoder())).isEqualTo(15);
  }

  @Test
  void registerAbiSmallFrame() throws Exception {
    // cmp 0x10(%r14),%rsp; jbe rel8; push %rbp
    assertThat(FunctionCode.prologueLength(hex("493b6610 7612 55"), decoder())).isEqualTo(6);
  }

  @Test
  void stackAbiGo116() throws Exception {
    // go1.16 writeHeader: mov %fs:-8,%rcx; lea -0x50(%rsp),%rax; cmp 0x10(%rcx),%rax; jbe rel32
    assertThat(FunctionCode.prologueLength(hex("64488b0c25f8ffffff 488d4424b0 483b4110 0f864e040000 48"),
        decoder())).isEqualTo(24);
    // go1.16 small frame: mov %fs:-8,%rcx; cmp 0x10(%rcx),%rsp; jbe rel8
    assertThat(FunctionCode.prologueLength(hex("64488b0c25f8ffffff 483b6110 7620 48"), decoder())).isEqualTo(15);
  }

  @Test
  void whatIsNoPrologue() throws Exception {
    X86Decoder d = decoder();
    assertThat(FunctionCode.prologueLength(hex("55 4889e5"), d)).isZero(); // push %rbp (NOSPLIT)
    assertThat(FunctionCode.prologueLength(hex("4c8d6424d8 4d3b6610"), d)).isZero(); // truncated
    assertThat(FunctionCode.prologueLength(new byte[0], d)).isZero();
    // lea into r12, but rsp compared: not the frame check
    assertThat(FunctionCode.prologueLength(hex("4c8d6424d8 493b6610 0f8697030000"), d)).isZero();
    // g in rcx without the TLS load: rcx is some other value
    assertThat(FunctionCode.prologueLength(hex("483b6110 7620"), d)).isZero();
    // cmp against 0x18(%r14), not stackguard0
    assertThat(FunctionCode.prologueLength(hex("493b6618 7612"), d)).isZero();
    // jb instead of jbe
    assertThat(FunctionCode.prologueLength(hex("493b6610 7212"), d)).isZero();
    // jbe backwards: no morestack tail
    assertThat(FunctionCode.prologueLength(hex("493b6610 76f0"), d)).isZero();
  }

  @Test
  void returnsAndEndOfAWholeFunction() throws Exception {
    // cmp; jbe +9 (to the tail); push rbp; test rax,rax; je +2; pop rbp; ret; pop rbp; ret; tail: call; jmp entry
    byte[] code = hex("493b6610 7609 55 4885c0 7402 5d c3 5d c3 e800000000 ebe4");
    FunctionCode f = FunctionCode.analyze("f", 0x401000, code, decoder());
    assertThat(f.prologueEnd()).isEqualTo(0x401006);
    assertThat(f.hasStackCheck()).isTrue();
    assertThat(f.returns()).containsExactly(0x40100dL, 0x40100fL);
    assertThat(f.end()).isEqualTo(0x401000L + code.length);
    assertThat(f.instructions()).isEqualTo(11);
  }

  @Test
  void retsInsideOtherInstructionsAreNoReturns() throws Exception {
    // mov $0xc3c3c3c3,%eax; ret: only the last c3 is an instruction
    FunctionCode f = FunctionCode.analyze("f", 0x1000, hex("b8c3c3c3c3 c3"), decoder());
    assertThat(f.returns()).containsExactly(0x1005L);
    assertThat(f.hasStackCheck()).isFalse();
    assertThat(f.prologueEnd()).isEqualTo(0x1000);
  }

  @Test
  void jbeTargetMustBeInsideTheFunction() throws Exception {
    // cmp; jbe +0x40 (past the 7-byte function); ret
    FunctionCode f = FunctionCode.analyze("f", 0x1000, hex("493b6610 7640 c3"), decoder());
    assertThat(f.hasStackCheck()).isFalse();
    assertThat(f.returns()).containsExactly(0x1006L);
  }

  @Test
  void undecodableBytesAreATypedErrorNamingTheAddressNotTheBytes() throws Exception {
    // 0x06 (push es) does not exist in 64-bit mode
    assertThatThrownBy(() -> FunctionCode.analyze("bad", 0x2000, hex("55 06 c3"), decoder()))
        .isInstanceOf(UndecodableCodeException.class)
        .hasMessageContaining("0x2001")
        .satisfies(e -> assertThat(((UndecodableCodeException) e).address()).isEqualTo(0x2001L));
    // an instruction cut off by the function's end
    assertThatThrownBy(() -> FunctionCode.analyze("cut", 0x3000, hex("c3 4c8d64"), decoder()))
        .isInstanceOf(UndecodableCodeException.class)
        .hasMessageContaining("0x3001");
    assertThatThrownBy(() -> FunctionCode.analyze("empty", 0x3000, new byte[0], decoder()))
        .isInstanceOf(UndecodableCodeException.class);
    assertThatThrownBy(() -> FunctionCode.analyze("huge", 0x3000, new byte[FunctionCode.MAX_FUNCTION_BYTES + 1],
        decoder())).isInstanceOf(UndecodableCodeException.class).hasMessageContaining("implausible size");
  }

  @Test
  void hostileInputGivesAnAnswerOrTheTypedErrorInBoundedTime() throws Exception {
    Random random = new Random(42);
    X86Decoder d = decoder();
    long start = System.nanoTime();
    int decoded = 0;
    for (int n = 0; n < 300; n++) {
      byte[] code = new byte[1 + random.nextInt(4096)];
      random.nextBytes(code);
      try {
        FunctionCode f = FunctionCode.analyze("random", 0x10000, code, d);
        assertThat(f.end()).isEqualTo(0x10000L + code.length);
        decoded++;
      } catch (UndecodableCodeException e) {
        assertThat(e.address()).isBetween(0x10000L, 0x10000L + code.length);
      }
      FunctionCode.prologueLength(code, d); // never throws
    }
    assertThat(System.nanoTime() - start).as("300 random functions of up to 4 KiB").isLessThan(10_000_000_000L);
    // A full 1 MiB function of NOPs: the largest accepted, decoded to the end.
    byte[] nops = new byte[FunctionCode.MAX_FUNCTION_BYTES];
    java.util.Arrays.fill(nops, (byte) 0x90);
    nops[nops.length - 1] = (byte) 0xc3;
    FunctionCode f = FunctionCode.analyze("nops", 0, nops, d);
    assertThat(f.returns()).containsExactly((long) nops.length - 1);
    assertThat(decoded).isLessThanOrEqualTo(300);
  }

  @Test
  void decoderReportsWhereItStopped() throws Exception {
    X86Decoder.Decoded r = decoder().decode(hex("55 4889e5 06 c3"), 0x500, 100);
    assertThat(r.decodedBytes()).isEqualTo(4);
    assertThat(r.instructions()).extracting(Instruction::mnemonic).containsExactly("push", "mov");
    assertThat(r.instructions()).extracting(Instruction::address).isEqualTo(List.of(0x500L, 0x501L));
    assertThat(decoder().decode(hex("90 90 90"), 0, 2).instructions()).hasSize(2);
  }
}
