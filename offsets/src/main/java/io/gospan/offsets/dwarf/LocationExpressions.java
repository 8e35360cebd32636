package io.gospan.offsets.dwarf;

import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes the location expressions Go's compiler writes for variables (src/cmd/compile/internal/ssa/debug.go,
 * go1.16–go1.26): {@code DW_OP_reg0..31} / {@code DW_OP_regx n} for registers, {@code DW_OP_call_frame_cfa}
 * or {@code DW_OP_fbreg k} (frame base = CFA) for stack slots, optionally {@code DW_OP_call_frame_cfa
 * DW_OP_consts k DW_OP_plus}, each value part closed by {@code DW_OP_piece size}.
 */
final class LocationExpressions {
  private static final int OP_CONSTS = 0x11;
  private static final int OP_PLUS = 0x22;
  private static final int OP_REG0 = 0x50;
  private static final int OP_REG31 = 0x6f;
  private static final int OP_REGX = 0x90;
  private static final int OP_FBREG = 0x91;
  private static final int OP_PIECE = 0x93;
  private static final int OP_CALL_FRAME_CFA = 0x9c;

  private LocationExpressions() {}

  /**
   * @param typeSize size of the whole value, used when the expression has no DW_OP_piece
   * @throws UnsupportedDwarfFormException an operation outside the set above, or a trailing location after
   *     pieces
   */
  static List<Piece> decode(ByteReader r, long typeSize, String where) throws GoBinaryException {
    List<Piece> pieces = new ArrayList<>();
    Piece cur = null;
    boolean sawPiece = false;
    while (r.hasRemaining()) {
      int op = r.u8();
      if (op >= OP_REG0 && op <= OP_REG31) {
        cur = Piece.register(0, op - OP_REG0);
      } else if (op == OP_REGX) {
        cur = Piece.register(0, r.uleb());
      } else if (op == OP_CALL_FRAME_CFA) {
        cur = Piece.stack(0, 0);
        int save = r.position();
        if (r.peek(save) == OP_CONSTS && save + 1 < r.limit()) {
          r.u8();
          long k = r.sleb();
          if (r.peek(r.position()) == OP_PLUS) {
            r.u8();
            cur = Piece.stack(0, k);
          } else {
            r.seek(save);
          }
        }
      } else if (op == OP_FBREG) {
        cur = Piece.stack(0, r.sleb());
      } else if (op == OP_PIECE) {
        long size = r.uleb();
        sawPiece = true;
        pieces.add(cur == null ? Piece.empty(size) : cur.withSize(size));
        cur = null;
      } else {
        throw new UnsupportedDwarfFormException(where + ": location operation 0x" + Integer.toHexString(op)
            + " (Go emits only registers, CFA/fbreg offsets and pieces)");
      }
    }
    if (cur != null) {
      if (sawPiece) {
        throw new UnsupportedDwarfFormException(where + ": trailing location without DW_OP_piece");
      }
      pieces.add(cur.withSize(typeSize));
    }
    return List.copyOf(pieces);
  }
}
