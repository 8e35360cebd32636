package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The prologues seen in the example binaries (objdump), and what must not be taken for one. */
class StackCheckPrologueTest {

  static byte[] hex(String s) {
    return HexFormat.of().parseHex(s.replace(" ", ""));
  }

  @Test
  void registerAbiWithFrame() {
    // go1.26 writeHeader: lea -0x28(%rsp),%r12; cmp 0x10(%r14),%r12; jbe rel32; push %rbp
    assertThat(StackCheckPrologue.length(hex("4c8d6424d8 4d3b6610 0f8697030000 55"))).isEqualTo(15);
  }

  @Test
  void registerAbiSmallFrame() {
    // cmp 0x10(%r14),%rsp; jbe rel8
    assertThat(StackCheckPrologue.length(hex("493b6610 7612 55"))).isEqualTo(6);
  }

  @Test
  void stackAbiGo116() {
    // go1.16 writeHeader: mov %fs:-8,%rcx; lea -0x50(%rsp),%rax; cmp 0x10(%rcx),%rax; jbe rel32
    assertThat(StackCheckPrologue.length(hex("64488b0c25f8ffffff 488d4424b0 483b4110 0f864e040000 48")))
        .isEqualTo(24);
  }

  @Test
  void noPrologueMeansTheEntry() {
    assertThat(StackCheckPrologue.length(hex("55 4889e5"))).isZero(); // push %rbp (NOSPLIT)
    assertThat(StackCheckPrologue.length(hex("4c8d6424d8 4d3b6610"))).isZero(); // truncated
    assertThat(StackCheckPrologue.length(new byte[0])).isZero();
  }

  @Test
  void instructionsThatOnlyLookLikeAPrologue() {
    // lea into r12 but rsp compared: r12 is not what the frame check compares
    assertThat(StackCheckPrologue.length(hex("4c8d6424d8 493b6610 0f8697030000 55"))).isZero();
    // g in rcx without the TLS load that puts it there
    assertThat(StackCheckPrologue.length(hex("483b6110 7620 55"))).isZero();
    // the same bytes shifted by one: decoding from the entry sees other instructions
    assertThat(StackCheckPrologue.length(hex("90 493b6610 7612 55"))).isZero();
  }
}
