package io.gospan.offsets.code;

import java.util.List;

/** An x86-64 (64-bit mode) instruction decoder. Implementations are thread-safe. */
public interface X86Decoder {
  /**
   * Decodes instructions one after another from {@code code[0]}, which is at virtual address
   * {@code address}, until the end of {@code code}, the first bytes that are no valid instruction (also an
   * instruction cut off by the end of {@code code}), or {@code maxInstructions}.
   *
   * @return the instructions decoded, in order; {@link Decoded#decodedBytes()} tells where decoding stopped
   */
  default Decoded decode(byte[] code, long address, int maxInstructions) {
    java.util.List<Instruction> out = new java.util.ArrayList<>();
    int n = decode(code, address, maxInstructions, out::add);
    return new Decoded(out, n);
  }

  /**
   * Like {@link #decode(byte[], long, int)}, handing each instruction to {@code sink} as it is decoded
   * (nothing is kept: memory does not grow with the code's size).
   *
   * @return bytes decoded: {@code code.length} when every byte was decoded
   */
  int decode(byte[] code, long address, int maxInstructions, java.util.function.Consumer<Instruction> sink);

  /**
   * Like {@link #decode(byte[], long, int, java.util.function.Consumer)}, with the registers each
   * instruction writes, explicitly or implicitly, as the decoder names them ({@code rbx}, {@code edx},
   * {@code r9d}, {@code rflags}, ...).
   *
   * @return bytes decoded (decoding stops where the decoder gives no register information)
   */
  int decodeWithWrites(byte[] code, long address, int maxInstructions,
      java.util.function.BiConsumer<Instruction, java.util.Set<String>> sink);

  /**
   * What {@link #decode} decoded.
   *
   * @param instructions in address order, contiguous from the start
   * @param decodedBytes bytes covered by {@code instructions}: equal to the input length when every byte
   *     was decoded
   */
  record Decoded(List<Instruction> instructions, int decodedBytes) {}
}
