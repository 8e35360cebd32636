package io.gospan.offsets.code;

/**
 * One decoded x86-64 instruction, as the decoder prints it in Intel syntax.
 *
 * @param address virtual address of its first byte
 * @param length encoded length in bytes (1 to 15)
 * @param mnemonic lower-case mnemonic with any prefix words, e.g. {@code cmp}, {@code jbe}, {@code ret}
 * @param operands operands in Intel syntax, e.g. {@code rsp, qword ptr [r14 + 0x10]}; empty when none
 */
public record Instruction(long address, int length, String mnemonic, String operands) {
  /** The address just after this instruction. */
  public long end() {
    return address + length;
  }

  /** A near return ({@code ret}, {@code ret imm16}), with or without prefixes. */
  public boolean isReturn() {
    String m = mnemonic;
    int sp = m.lastIndexOf(' ');
    String last = sp < 0 ? m : m.substring(sp + 1);
    return last.equals("ret") || last.equals("retq");
  }

  @Override
  public String toString() {
    return "0x" + Long.toHexString(address) + ": " + mnemonic + (operands.isEmpty() ? "" : " " + operands);
  }
}
