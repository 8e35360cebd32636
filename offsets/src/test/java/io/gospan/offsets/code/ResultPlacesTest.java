package io.gospan.offsets.code;

import static io.gospan.offsets.code.FunctionCodeTest.decoder;
import static io.gospan.offsets.code.FunctionCodeTest.hex;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link ResultPlaces} on functions assembled with GNU as (Intel syntax) in the shape Go gives grpc-go's
 * {@code (*http2Client).NewStream} (v1.41+): the new stream spilled to a stack slot across calls, reloaded
 * into RAX before a conditional jump to the return block and again on the other path; an error return of
 * nil. The real functions are covered by InProcessPropagationIT (hits per stream with the probe there).
 *
 * <pre>
 *    0: cmp rsp, qword ptr [r14 + 0x10]    10: mov rax, [rsp + 0x18]  (a: call g)
 *    4: jbe 0x48                           27: cmp byte ptr [rsp + 0x10], 0
 *    6: push rbp; mov rbp, rsp; sub rsp, 0x40                          2c: je 0x38
 *    e: call g; mov [rsp + 0x18], rax      2e: call g                 (b: mov [rsp + 0x18], rcx; c: jmp rcx)
 *   18: test rbx, rbx; jne 0x40           33: mov rax, [rsp + 0x18]
 *   1d: call g; 22: mov rax, [rsp + 0x18] 38: xor ebx, ebx; add rsp, 0x40; pop rbp; ret (0x3f)
 *   40: xor eax, eax; add rsp, 0x40; pop rbp; ret (0x47)    48: call g; jmp 0 (the morestack tail)
 * </pre>
 */
class ResultPlacesTest {
  private static final long ENTRY = 0x401000;
  private static final String A = "493b66107642554889e54883ec40e83c00000048894424184885db7523e82d000000488b442418"
      + "807c241000740ae81c000000488b44241831db4883c4405dc331c04883c4405dc3e802000000ebb1";
  /** a store into the result's slot on the path from the jump to the RET */
  private static final String B = "493b66107642554889e54883ec40e83c00000048894424184885db7523e82d000000488b442418"
      + "807c241000740a48894c2418488b44241831db4883c4405dc331c04883c4405dc3e802000000ebb1";
  /** an indirect jump */
  private static final String C = "493b6610763f554889e54883ec40e83900000048894424184885db7520e82a000000488b442418"
      + "807c2410007407ffe1488b44241831db4883c4405dc331c04883c4405dc3e802000000ebb4";

  @Test
  void theJumpToTheReturnBlockReadsTheSlot() throws Exception {
    ResultPlaces r = ResultPlaces.analyze("f", ENTRY, hex(A), decoder());
    assertThat(r.reason()).isNull();
    assertThat(r.emulated()).isTrue();
    assertThat(r.addresses()).containsExactly(ENTRY + 0x2c); // je, not the RET at 0x3f
    assertThat(r.slot()).isEqualTo(0x18);
    assertThat(r.nilReturns()).containsExactly(ENTRY + 0x47);
  }

  @Test
  void aStoreIntoTheSlotAfterEveryJumpLeavesTheRets() throws Exception {
    ResultPlaces r = ResultPlaces.analyze("f", ENTRY, hex(B), decoder());
    assertThat(r.emulated()).isFalse();
    assertThat(r.slot()).isEqualTo(-1);
    assertThat(r.addresses()).containsExactly(ENTRY + 0x3f, ENTRY + 0x47);
    assertThat(r.reason()).contains("no emulated jump before the RET at 0x40103f");
  }

  @Test
  void anIndirectJumpLeavesTheRets() throws Exception {
    ResultPlaces r = ResultPlaces.analyze("f", ENTRY, hex(C), decoder());
    assertThat(r.emulated()).isFalse();
    assertThat(r.addresses()).hasSize(2);
    assertThat(r.reason()).contains("an indirect jump at 0x40102e");
  }

  @Test
  void storesIntoTheSlotByWidthAndDisplacement() {
    assertThat(ResultPlaces.storesInto(new Instruction(0, 5, "mov", "qword ptr [rsp + 0x18], rax"), 0x18)).isTrue();
    // Go zeroes 16 bytes at a time with X15
    assertThat(ResultPlaces.storesInto(new Instruction(0, 6, "movups", "xmmword ptr [rsp + 0x10], xmm15"), 0x18)).isTrue();
    assertThat(ResultPlaces.storesInto(new Instruction(0, 5, "mov", "qword ptr [rsp + 0x20], rax"), 0x18)).isFalse();
    assertThat(ResultPlaces.storesInto(new Instruction(0, 5, "mov", "byte ptr [rsp + 0x1f], 0"), 0x18)).isTrue();
    assertThat(ResultPlaces.storesInto(new Instruction(0, 5, "cmp", "qword ptr [rsp + 0x18], 0"), 0x18)).isFalse();
    assertThat(ResultPlaces.storesInto(new Instruction(0, 5, "mov", "rax, qword ptr [rsp + 0x18]"), 0x18)).isFalse();
  }
}
