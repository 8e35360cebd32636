package io.gospan.offsets.code;

import static io.gospan.offsets.code.FunctionCodeTest.decoder;
import static io.gospan.offsets.code.FunctionCodeTest.hex;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The stack-growth tail's register saves on hand-assembled functions in the form Go's compiler emits them
 * (go1.26 {@code (*loopyWriter).writeHeader}, {@code go tool objdump}), and what is not such a tail. Real
 * binaries: {@code ArgumentSpillsIT}, and every catalogued build through the catalog generator.
 */
class ArgumentSpillsTest {
  private static final long ENTRY = 0x1000;
  /** lea r12, [rsp - 0x28]; cmp r12, [r14 + 0x10]; jbe +2 (to offset 17); push rbp; ret. */
  private static final String PROLOGUE = "4c8d6424d8 4d3b6610 0f8602000000 55 c3";

  @Test
  void everyRegisterWordWithItsSlotAndSize() throws Exception {
    // mov [rsp+8], rax; mov dword [rsp+0x10], ebx; mov byte [rsp+0x14], cl; mov [rsp+0x18], rdi;
    // movsd [rsp+0x20], xmm0; nop; call; mov rax, [rsp+8]; jmp entry
    byte[] code = hex(PROLOGUE + "4889442408 895c2410 884c2414 48897c2418 f20f11442420 90 e800000000 488b442408 e9c7ffffff");
    ArgumentSpills s = ArgumentSpills.analyze("f", ENTRY, code, decoder());
    assertThat(s.reason()).isNull();
    assertThat(s.describe()).isEqualTo("rax@0:8 rbx@8:4 rcx@12:1 rdi@16:8 xmm0@24:8");
  }

  @Test
  void noRegisterArgumentsIsAnEmptyTail() throws Exception {
    // call; jmp entry
    byte[] code = hex(PROLOGUE + "e800000000 e9e5ffffff");
    ArgumentSpills s = ArgumentSpills.analyze("f", ENTRY, code, decoder());
    assertThat(s.found()).as(s.reason()).isTrue();
    assertThat(s.spills()).isEmpty();
  }

  @Test
  void whatIsNoSpillTail() throws Exception {
    X86Decoder d = decoder();
    // no stack-check prologue (NOSPLIT): push rbp; ret
    assertThat(ArgumentSpills.analyze("f", ENTRY, hex("55 c3"), d).reason()).contains("no stack-check prologue");
    // the tail does not jump back to the entry: mov [rsp+8], rax; call; jmp elsewhere
    assertThat(ArgumentSpills.analyze("f", ENTRY, hex(PROLOGUE + "4889442408 e800000000 eb00"), d).reason())
        .contains("does not jump back to the entry");
    // something else than a save before the call: add rax, 1
    assertThat(ArgumentSpills.analyze("f", ENTRY, hex(PROLOGUE + "4883c001 e800000000 e9e3ffffff"), d).reason())
        .contains("does not save registers");
    // a save into another register's frame: mov [rbp+8], rax
    assertThat(ArgumentSpills.analyze("f", ENTRY, hex(PROLOGUE + "48894508 e800000000 e9e3ffffff"), d).reason())
        .contains("does not save registers");
    // a register saved twice
    assertThat(ArgumentSpills.analyze("f", ENTRY, hex(PROLOGUE + "4889442408 4889442410 e800000000 e9deffffff"), d)
        .reason()).contains("saved twice");
  }
}
