package io.gospan.offsets.dwarf;

import java.util.Optional;

/**
 * x86-64 registers by DWARF register number (System V AMD64 psABI, "DWARF Register Number Mapping",
 * figure 3.36). Names follow Go's assembler (RAX…R15, X0…X15).
 */
public enum X86Register {
  RAX(0), RDX(1), RCX(2), RBX(3), RSI(4), RDI(5), RBP(6), RSP(7),
  R8(8), R9(9), R10(10), R11(11), R12(12), R13(13), R14(14), R15(15), RIP(16),
  X0(17), X1(18), X2(19), X3(20), X4(21), X5(22), X6(23), X7(24),
  X8(25), X9(26), X10(27), X11(28), X12(29), X13(30), X14(31), X15(32);

  private static final X86Register[] BY_NUMBER = values();

  private final int dwarfNumber;

  X86Register(int dwarfNumber) {
    this.dwarfNumber = dwarfNumber;
  }

  /** The DWARF register number. */
  public int dwarfNumber() {
    return dwarfNumber;
  }

  /** The register with DWARF number {@code n}, if x86-64 defines one this enum covers (0–32). */
  public static Optional<X86Register> ofDwarf(long n) {
    return n >= 0 && n < BY_NUMBER.length ? Optional.of(BY_NUMBER[(int) n]) : Optional.empty();
  }
}
