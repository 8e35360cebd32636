package io.gospan.receiver.probe;

import java.nio.ByteBuffer;

/**
 * Where one Go argument word lives at a function's entry ({@code struct go_loc} in
 * {@code bpf/go_abi.h}).
 *
 * @param kind {@link #NONE}, {@link #REGISTER} or {@link #STACK}
 * @param dwarfReg x86-64 DWARF register number (0 RAX, 1 RDX, 2 RCX, 3 RBX, 4 RSI, 5 RDI, 8..15
 *     R8..R15), for {@link #REGISTER}
 * @param spOffset bytes above SP at entry (SP points at the return address), for {@link #STACK}
 */
public record GoLoc(int kind, int dwarfReg, int spOffset) {
  public static final int NONE = GrpcConstants.GO_LOC_NONE;
  public static final int REGISTER = GrpcConstants.GO_LOC_REGISTER;
  public static final int STACK = GrpcConstants.GO_LOC_STACK;

  /** Not resolved: a probe needing it is not attached. */
  public static final GoLoc UNRESOLVED = new GoLoc(NONE, 0, 0);

  public static GoLoc register(int dwarfReg) {
    if (dwarfReg < 0 || dwarfReg > 15) {
      throw new IllegalArgumentException("not an x86-64 general register: DWARF " + dwarfReg);
    }
    return new GoLoc(REGISTER, dwarfReg, 0);
  }

  public static GoLoc stack(int spOffset) {
    return new GoLoc(STACK, 0, spOffset);
  }

  public boolean isResolved() {
    return kind != NONE;
  }

  /** Writes {@code struct go_loc} at {@code offset}. */
  void writeTo(ByteBuffer b, int offset) {
    GrpcStructs.GoLoc.kind(b, offset, kind);
    GrpcStructs.GoLoc.dwarfReg(b, offset, dwarfReg);
    GrpcStructs.GoLoc.spOffset(b, offset, spOffset);
  }
}
