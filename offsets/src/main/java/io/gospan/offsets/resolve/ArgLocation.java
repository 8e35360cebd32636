package io.gospan.offsets.resolve;

/**
 * Where one argument word lives at a function's entry, as the BPF location descriptor needs it.
 *
 * @param register true: in DWARF register {@code dwarfRegister}; false: on the stack at
 *     {@code spOffset} bytes above SP at entry (SP points at the return address)
 * @param dwarfRegister x86-64 DWARF register number (0 RAX, 1 RDX, 2 RCX, 3 RBX, 4 RSI, 5 RDI,
 *     8..15 R8..R15), -1 for the stack
 * @param spOffset bytes, for the stack
 */
public record ArgLocation(boolean register, int dwarfRegister, int spOffset) {
  public static ArgLocation inRegister(int dwarfRegister) {
    return new ArgLocation(true, dwarfRegister, 0);
  }

  public static ArgLocation onStack(int spOffset) {
    return new ArgLocation(false, -1, spOffset);
  }

  @Override
  public String toString() {
    return register ? "DWARF register " + dwarfRegister : "SP+" + spOffset;
  }
}
