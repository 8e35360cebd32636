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

  // closeStream's opening guard, `if s.swapState(streamDone) == streamDone { return }`: RAX = t,
  // RBX = s, R9 = st at entry (go tool objdump of the catalog builds)
  static final long CLOSE_STREAM = 0x7ef7a0;
  static final java.util.Set<String> ARGS = java.util.Set.of("rax", "rbx", "r9");

  @Test
  void pastTheGuardOfCloseStreamGrpc185Go126() throws Exception {
    // cmp rsp,[r14+0x10]; jbe; push rbp; mov rbp,rsp; sub rsp,0x40; mov [rsp+0x60],rcx; mov [rsp+0x68],rdi;
    // mov edx,3; xchg [rbx+0x68],edx; cmp edx,3; je early; (past the guard:) cmp [writeBarrier],0
    byte[] code = hex("493b6610 0f86ee010000 55 4889e5 4883ec40 48894c2460 48897c2468 ba03000000 875368 83fa03"
        + " 0f84b7010000 833d6cb1730000");
    FunctionCode.Guard g = FunctionCode.pastGuard("closeStream", CLOSE_STREAM, CLOSE_STREAM + 0x300, code, decoder(), "rbx", ARGS);
    assertThat(g.reason()).isNull();
    assertThat(g.address() - CLOSE_STREAM).isEqualTo(0x2d);
  }

  @Test
  void pastTheGuardMovesToTheJumpAfterTheWriteBarrierCheck() throws Exception {
    // as above, followed by the write-barrier check's je (kernel-emulated) and a mov:
    // cmp [writeBarrier],0 at +0x2d (executed out of line), je at +0x34
    byte[] code = hex("493b6610 0f86ee010000 55 4889e5 4883ec40 48894c2460 48897c2468 ba03000000 875368 83fa03"
        + " 0f84b7010000 833d6cb1730000 7405 4889c2 90 90 4889d8 c3");
    FunctionCode.Guard g = FunctionCode.pastGuard("closeStream", CLOSE_STREAM, CLOSE_STREAM + 0x300, code, decoder(), "rbx", ARGS);
    assertThat(g.reason()).isNull();
    assertThat(g.address() - CLOSE_STREAM).isEqualTo(0x34);
    // a jump from elsewhere into the je: the place stays at the comparison
    byte[] into = hex("493b6610 0f86ee010000 55 4889e5 4883ec40 48894c2460 48897c2468 ba03000000 875368 83fa03"
        + " 0f84b7010000 833d6cb1730000 7405 4889c2 90 90 ebf7 c3");
    g = FunctionCode.pastGuard("closeStream", CLOSE_STREAM, CLOSE_STREAM + 0x300, into, decoder(), "rbx", ARGS);
    assertThat(g.address() - CLOSE_STREAM).isEqualTo(0x2d);
    // a mov (not a comparison) past the guard: the place stays
    byte[] mov = hex("493b6610 0f86ee010000 55 4889e5 4883ec40 48894c2460 48897c2468 ba03000000 875368 83fa03"
        + " 0f84b7010000 4889c2 7405 90 c3");
    g = FunctionCode.pastGuard("closeStream", CLOSE_STREAM, CLOSE_STREAM + 0x300, mov, decoder(), "rbx", ARGS);
    assertThat(g.address() - CLOSE_STREAM).isEqualTo(0x2d);
  }

  @Test
  void pastTheGuardOfCloseStreamWhereClientStreamEmbedsAStreamPointer() throws Exception {
    // grpc-go v1.72 (ClientStream embeds *Stream): mov rdx,[rbx]; mov r12d,3; xchg [rdx+0x70],r12d; cmp r12d,3; je
    byte[] code = hex("493b6610 0f8601020000 55 4889e5 4883ec40 48894c2460 48897c2468 488b13 41bc03000000 44876270"
        + " 4183fc03 0f84c2010000 833d26d0700000");
    FunctionCode.Guard g = FunctionCode.pastGuard("closeStream", CLOSE_STREAM, CLOSE_STREAM + 0x300, code, decoder(), "rbx", ARGS);
    assertThat(g.reason()).isNull();
    assertThat(g.address() - CLOSE_STREAM).isEqualTo(0x33);
  }

  @Test
  void noPlacePastTheGuardWhenAnArgumentRegisterIsWrittenBeforeIt() throws Exception {
    // as grpc-go v1.85's, with mov r9d,3 / xchg [rbx+0x68],r9d: st's register is lost
    byte[] code = hex("493b6610 0f86ee010000 55 4889e5 4883ec40 41b903000000 44874b68 4183f903 0f84b7010000 90");
    FunctionCode.Guard g = FunctionCode.pastGuard("closeStream", CLOSE_STREAM, CLOSE_STREAM + 0x300, code, decoder(), "rbx", ARGS);
    assertThat(g.found()).isFalse();
    assertThat(g.reason()).contains("writes r9");
  }

  @Test
  void noPlacePastTheGuardWithoutTheSwapOrWithABranchBeforeIt() throws Exception {
    // an XCHG on another register than the stream's
    byte[] other = hex("493b6610 0f86ee010000 55 4889e5 ba03000000 875168 83fa03 0f84b7010000 90");
    assertThat(FunctionCode.pastGuard("f", CLOSE_STREAM, CLOSE_STREAM + 0x300, other, decoder(), "rbx", ARGS).reason())
        .contains("is not on the stream in rbx");
    // a call before the swap
    byte[] call = hex("493b6610 0f86ee010000 55 4889e5 e800000000 ba03000000 875368 83fa03 0f84b7010000 90");
    assertThat(FunctionCode.pastGuard("f", CLOSE_STREAM, CLOSE_STREAM + 0x300, call, decoder(), "rbx", ARGS).reason())
        .contains("comes before any XCHG");
    // jne: the place past the guard is the branch's target
    byte[] jne = hex("493b6610 0f86ee010000 55 4889e5 ba03000000 875368 83fa03 0f8510000000 90");
    FunctionCode.Guard g = FunctionCode.pastGuard("f", CLOSE_STREAM, CLOSE_STREAM + 0x300, jne, decoder(), "rbx", ARGS);
    assertThat(g.reason()).isNull();
    assertThat(g.address() - CLOSE_STREAM).isEqualTo(0x1f + 0x10); // after the 6-byte jne, + rel32
    // no swap at all
    assertThat(FunctionCode.pastGuard("f", CLOSE_STREAM, CLOSE_STREAM + 0x300, hex("55 4889e5 90 90 c3"), decoder(), "rbx", ARGS)
        .reason()).contains("comes before any XCHG");
  }

  @Test
  void registerFamilies() {
    assertThat(FunctionCode.family("ebx")).isEqualTo("rbx");
    assertThat(FunctionCode.family("bl")).isEqualTo("rbx");
    assertThat(FunctionCode.family("r9d")).isEqualTo("r9");
    assertThat(FunctionCode.family("r12b")).isEqualTo("r12");
    assertThat(FunctionCode.family("sil")).isEqualTo("rsi");
    assertThat(FunctionCode.family("rflags")).isEqualTo("rflags");
  }

  @Test
  void decoderReportsWhereItStopped() throws Exception {
    X86Decoder.Decoded r = decoder().decode(hex("55 4889e5 06 c3"), 0x500, 100);
    assertThat(r.decodedBytes()).isEqualTo(4);
    assertThat(r.instructions()).extracting(Instruction::mnemonic).containsExactly("push", "mov");
    assertThat(r.instructions()).extracting(Instruction::address).isEqualTo(List.of(0x500L, 0x501L));
    assertThat(decoder().decode(hex("90 90 90"), 0, 2).instructions()).hasSize(2);
  }

  @Test
  void entryPlaceOnTheJbeWhenTheNextInstructionIsSingleStepped() throws Exception {
    // go1.19 (*http2Server).operateHeaders: lea r12, [rsp - 0x208]; cmp r12, [r14 + 0x10]; jbe rel32; sub rsp, 0x288
    assertThat(FunctionCode.entryPlace(hex("4c8da424f8fdffff 4d3b6610 0f86a1220000 4881ec88020000 4889ac2480020000"), decoder()))
        .isEqualTo(new FunctionCode.EntryPlace(12, true));
    // go1.22: the same prologue, then push rbp (emulated): past the prologue
    assertThat(FunctionCode.entryPlace(hex("4c8da424b0fdffff 4d3b6610 0f86952a0000 55 4889e5"), decoder()))
        .isEqualTo(new FunctionCode.EntryPlace(18, false));
    // a small frame: cmp rsp, [r14 + 0x10]; jbe rel8; sub rsp, 0x10
    assertThat(FunctionCode.entryPlace(hex("493b6610 7620 4883ec10 48896c2408"), decoder()))
        .isEqualTo(new FunctionCode.EntryPlace(4, true));
    // no prologue: the entry
    assertThat(FunctionCode.entryPlace(hex("55 4889e5 4883ec10"), decoder())).isEqualTo(new FunctionCode.EntryPlace(0, false));
  }
}
