package io.gospan.offsets.dwarf;

/**
 * One piece of a parameter's location at a function's entry (DWARF 5 section 2.6.1.2, DW_OP_piece). A value
 * without DW_OP_piece is a single piece the size of its type; a Go string is two pieces (ptr, len), a slice
 * three (ptr, len, cap), an interface two (itab/type, data).
 *
 * @param size bytes of the value held by this piece
 * @param kind where the piece is
 * @param register the register for {@link Kind#REGISTER}, null otherwise
 * @param dwarfRegister the DWARF register number for {@link Kind#REGISTER} (also when beyond
 *     {@link X86Register}: then {@code register} is null), -1 otherwise
 * @param cfaOffset for {@link Kind#STACK}: byte offset from the canonical frame address (Go's frame base is
 *     DW_OP_call_frame_cfa); 0 otherwise
 */
public record Piece(long size, Kind kind, X86Register register, long dwarfRegister, long cfaOffset) {
  /** Where a piece lives at the function's entry. */
  public enum Kind {
    /** In a register. */
    REGISTER,
    /** In the caller-allocated argument area on the stack. */
    STACK,
    /** Optimized out / not available at this pc (DW_OP_piece with no location). */
    EMPTY
  }

  /** Return address size on x86-64: at a function's first instruction SP = CFA - 8. */
  public static final long RETURN_ADDRESS_SIZE = 8;

  static Piece register(long size, long dwarfRegister) {
    return new Piece(size, Kind.REGISTER, X86Register.ofDwarf(dwarfRegister).orElse(null), dwarfRegister, 0);
  }

  static Piece stack(long size, long cfaOffset) {
    return new Piece(size, Kind.STACK, null, -1, cfaOffset);
  }

  static Piece empty(long size) {
    return new Piece(size, Kind.EMPTY, null, -1, 0);
  }

  Piece withSize(long newSize) {
    return new Piece(newSize, kind, register, dwarfRegister, cfaOffset);
  }

  /**
   * For {@link Kind#STACK}: byte offset from the stack pointer at the function's entry (the uprobe's SP),
   * {@code cfaOffset + 8}.
   */
  public long stackOffset() {
    return cfaOffset + RETURN_ADDRESS_SIZE;
  }

  /** Register name ({@code RAX}) or {@code DW_REG<n>} when outside {@link X86Register}; null if not a register. */
  public String registerName() {
    if (kind != Kind.REGISTER) {
      return null;
    }
    return register != null ? register.name() : "DW_REG" + dwarfRegister;
  }
}
