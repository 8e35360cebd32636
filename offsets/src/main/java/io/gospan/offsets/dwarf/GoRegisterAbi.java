package io.gospan.offsets.dwarf;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import java.util.ArrayList;
import java.util.List;

/**
 * Where Go's amd64 calling conventions put a function's input parameters at its entry pc, from
 * their types alone. One instance lays out the parameters of one function, in order (receiver
 * first).
 *
 * <p>Register ABI (ABIInternal, Go 1.17+; Go src/cmd/compile/abi-internal.md, "Function call
 * argument and result passing"): each parameter is recursively decomposed (string = ptr, len;
 * slice = ptr, len, cap; interface = 2 words; struct = its fields; array of 0 or 1 element = its
 * elements; complex = 2 floats) onto the integer registers RAX, RBX, RCX, RDI, RSI, R8–R11 and the
 * floating-point registers X0–X14 (X15 is the zero register); a parameter that does not fit whole
 * goes to the stack argument area (from SP+8 at entry), aligned to its type, and gives back the
 * registers it took. Stack ABI (ABI0, Go before 1.17): every parameter in the argument area,
 * aligned to its type. Alignments as Go src/cmd/compile/internal/types/size.go (go1.26).
 *
 * <p>The types come from {@link Types}: DWARF type DIEs by offset ({@link DwarfData}), or a binary's runtime
 * type descriptors ({@code io.gospan.offsets.resolve.ArgumentLayout}: a method's func type); a type
 * walk is bounded ({@value #MAX_TYPE_VISITS} visits per function, nesting {@value #MAX_DEPTH})
 * so a crafted type graph cannot take exponential time.
 */
public final class GoRegisterAbi {

  /** The type facts the convention needs, by type DIE offset. */
  public interface Types {
    /**
     * The Go kind ({@code reflect.Kind} numbering, DW_AT_go_kind) of a type, through typedefs
     * without one.
     *
     * @return {kind, offset of the DIE that has it}
     * @throws UnsupportedDwarfFormException the type has no Go kind
     */
    int[] goKind(int typeOff) throws GoBinaryException;

    /** Size in bytes as Go's debug/dwarf computes it; -1 when unknown. */
    long size(int typeOff) throws GoBinaryException;

    /** Element count of an array type; -1 when unknown. */
    long arrayCount(int arrayOff) throws GoBinaryException;

    /** The element type of an array type; -1 when it has none. */
    int arrayElement(int arrayOff) throws GoBinaryException;

    /** The types of a struct's fields, in order; -1 for a field without one. */
    List<Integer> fieldTypes(int structOff) throws GoBinaryException;
  }

  static final int MAX_TYPE_VISITS = 100_000;
  static final int MAX_DEPTH = 64;

  /** DWARF register numbers (System V amd64 psABI) of RAX RBX RCX RDI RSI R8 R9 R10 R11. */
  private static final int[] INT_REGISTERS = {0, 3, 2, 5, 4, 8, 9, 10, 11};
  private static final int FLOAT_REGISTER_COUNT = 15; // X0-X14
  private static final int FIRST_XMM = 17; // DWARF number of XMM0

  /** reflect.Kind numbering (Go src/internal/abi/type.go). */
  static final int KIND_BOOL = 1;
  static final int KIND_UINTPTR = 12;
  static final int KIND_FLOAT32 = 13;
  static final int KIND_FLOAT64 = 14;
  static final int KIND_COMPLEX64 = 15;
  static final int KIND_COMPLEX128 = 16;
  static final int KIND_ARRAY = 17;
  static final int KIND_CHAN = 18;
  static final int KIND_FUNC = 19;
  static final int KIND_INTERFACE = 20;
  static final int KIND_MAP = 21;
  static final int KIND_POINTER = 22;
  static final int KIND_SLICE = 23;
  static final int KIND_STRING = 24;
  static final int KIND_STRUCT = 25;
  static final int KIND_UNSAFE_POINTER = 26;

  private final Types types;
  private final String where;
  private final boolean registerAbi;
  private int[] regs = new int[2]; // integer and floating-point registers used so far
  private long stack; // next free byte of the stack argument area, relative to the CFA
  private int typeVisits;

  /**
   * @param where names the binary in error messages
   * @param registerAbi ABIInternal (Go 1.17+) when true, ABI0 otherwise
   */
  public GoRegisterAbi(Types types, String where, boolean registerAbi) {
    this.types = types;
    this.where = where;
    this.registerAbi = registerAbi;
  }

  /**
   * Lays out the next parameter.
   *
   * @param typeOff its type DIE
   * @param size its size in bytes ({@link Types#size})
   * @return its pieces: registers in order, or one stack piece
   * @throws UnsupportedDwarfFormException a type has a Go kind the convention does not cover
   * @throws CorruptBinaryException the type walk exceeds its bounds
   */
  public List<Piece> next(int typeOff, long size) throws GoBinaryException {
    List<Piece> pieces = new ArrayList<>();
    int[] saved = regs.clone();
    if (!registerAbi || !assignRegisters(typeOff, pieces, 0)) {
      regs = saved;
      pieces.clear();
      long align = alignment(typeOff, 0);
      stack = (stack + align - 1) / align * align;
      pieces.add(Piece.stack(size, stack));
      stack += size;
    }
    return List.copyOf(pieces);
  }

  private void visitType(int typeOff, int depth) throws CorruptBinaryException {
    if (++typeVisits > MAX_TYPE_VISITS) {
      throw new CorruptBinaryException(where + ": parameter types visit more than " + MAX_TYPE_VISITS
          + " type DIEs (at " + typeOff + ")");
    }
    if (depth > MAX_DEPTH) {
      throw new CorruptBinaryException(where + ": type nesting too deep at " + typeOff);
    }
  }

  private boolean intWords(List<Piece> out, long... sizes) {
    if (regs[0] + sizes.length > INT_REGISTERS.length) {
      return false;
    }
    for (long s : sizes) {
      out.add(Piece.register(s, INT_REGISTERS[regs[0]++]));
    }
    return true;
  }

  private boolean floatWords(List<Piece> out, long... sizes) {
    if (regs[1] + sizes.length > FLOAT_REGISTER_COUNT) {
      return false;
    }
    for (long s : sizes) {
      out.add(Piece.register(s, FIRST_XMM + regs[1]++));
    }
    return true;
  }

  /** Register-assigns a value of the given type (abi-internal.md "register-assign"); false when it fails. */
  private boolean assignRegisters(int typeOff, List<Piece> out, int depth) throws GoBinaryException {
    visitType(typeOff, depth);
    int[] kind = types.goKind(typeOff);
    int k = kind[0];
    if (k >= KIND_BOOL && k <= KIND_UINTPTR) {
      return intWords(out, types.size(kind[1]));
    }
    switch (k) {
      case KIND_FLOAT32:
      case KIND_FLOAT64:
        return floatWords(out, types.size(kind[1]));
      case KIND_COMPLEX64:
        return floatWords(out, 4, 4);
      case KIND_COMPLEX128:
        return floatWords(out, 8, 8);
      case KIND_CHAN:
      case KIND_FUNC:
      case KIND_MAP:
      case KIND_POINTER:
      case KIND_UNSAFE_POINTER:
        return intWords(out, 8);
      case KIND_STRING:
      case KIND_INTERFACE:
        return intWords(out, 8, 8);
      case KIND_SLICE:
        return intWords(out, 8, 8, 8);
      case KIND_ARRAY: {
        long count = types.arrayCount(kind[1]);
        if (count <= 0) {
          return true;
        }
        if (count != 1) {
          return false;
        }
        int element = types.arrayElement(kind[1]);
        return element >= 0 && assignRegisters(element, out, depth + 1);
      }
      case KIND_STRUCT: {
        for (int f : types.fieldTypes(kind[1])) {
          if (f < 0 || !assignRegisters(f, out, depth + 1)) {
            return false;
          }
        }
        return true;
      }
      default:
        throw new UnsupportedDwarfFormException(where + ": Go kind " + k + " of type DIE at " + kind[1]);
    }
  }

  /** Alignment of a Go type on amd64 (Go src/cmd/compile/internal/types/size.go). */
  private long alignment(int typeOff, int depth) throws GoBinaryException {
    visitType(typeOff, depth);
    int[] kind = types.goKind(typeOff);
    int k = kind[0];
    if ((k >= KIND_BOOL && k <= KIND_UINTPTR) || k == KIND_FLOAT32 || k == KIND_FLOAT64) {
      return Math.max(1, Math.min(8, types.size(kind[1])));
    }
    switch (k) {
      case KIND_COMPLEX64:
        return 4;
      case KIND_ARRAY: {
        int element = types.arrayElement(kind[1]);
        return element < 0 ? 1 : alignment(element, depth + 1);
      }
      case KIND_STRUCT: {
        long max = 1;
        for (int f : types.fieldTypes(kind[1])) {
          if (f >= 0) {
            max = Math.max(max, alignment(f, depth + 1));
          }
        }
        return max;
      }
      default:
        return 8;
    }
  }
}
