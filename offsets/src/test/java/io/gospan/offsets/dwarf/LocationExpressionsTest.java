package io.gospan.offsets.dwarf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Expressions as Go's compiler writes them (src/cmd/compile/internal/ssa/debug.go). */
class LocationExpressionsTest {
  private static List<Piece> decode(long size, int... ops) throws Exception {
    byte[] b = new byte[ops.length];
    for (int i = 0; i < ops.length; i++) {
      b[i] = (byte) ops[i];
    }
    return LocationExpressions.decode(new ByteReader(ByteBuffer.wrap(b), "expr"), size, "test");
  }

  @Test
  void aPointerInRax() throws Exception {
    assertThat(decode(8, 0x50)).containsExactly(Piece.register(8, 0));
    assertThat(decode(8, 0x50).get(0).registerName()).isEqualTo("RAX");
  }

  @Test
  void aSliceIsThreeRegisterPieces() throws Exception {
    // hf []hpack.HeaderField at writeHeader entry, grpc-go 1.60 / Go 1.22: RDI, RSI, R8.
    List<Piece> p = decode(24, 0x55, 0x93, 8, 0x54, 0x93, 8, 0x58, 0x93, 8);
    assertThat(p).extracting(Piece::registerName).containsExactly("RDI", "RSI", "R8");
    assertThat(p).extracting(Piece::size).containsExactly(8L, 8L, 8L);
  }

  @Test
  void stackSlotsAreRelativeToTheCfaAndToSpAtEntry() throws Exception {
    Piece cfa = decode(8, 0x9c).get(0);
    assertThat(cfa.kind()).isEqualTo(Piece.Kind.STACK);
    assertThat(cfa.cfaOffset()).isZero();
    assertThat(cfa.stackOffset()).isEqualTo(8);
    Piece fbreg = decode(4, 0x91, 0x08).get(0);
    assertThat(fbreg.cfaOffset()).isEqualTo(8);
    assertThat(fbreg.stackOffset()).isEqualTo(16);
    Piece plus = decode(1, 0x9c, 0x11, 0x0c, 0x22).get(0);
    assertThat(plus.cfaOffset()).isEqualTo(12);
  }

  @Test
  void aPieceWithoutLocationIsEmptyAndRegxReachesXmm() throws Exception {
    List<Piece> p = decode(16, 0x93, 8, 0x90, 17, 0x93, 8);
    assertThat(p.get(0).kind()).isEqualTo(Piece.Kind.EMPTY);
    assertThat(p.get(1).register()).isEqualTo(X86Register.X0);
    assertThat(decode(8, 0x90, 40).get(0).registerName()).isEqualTo("DW_REG40");
  }

  @Test
  void anEmptyExpressionHasNoPieces() throws Exception {
    assertThat(decode(8)).isEmpty();
  }

  @Test
  void operationsGoDoesNotEmitAreRejected() {
    assertThatThrownBy(() -> decode(8, 0x70, 0x00)).isInstanceOf(UnsupportedDwarfFormException.class)
        .hasMessageContaining("0x70");
    assertThatThrownBy(() -> decode(8, 0x50, 0x93, 8, 0x51)).isInstanceOf(UnsupportedDwarfFormException.class);
    assertThatThrownBy(() -> decode(8, 0x91)).isInstanceOf(io.gospan.offsets.CorruptBinaryException.class);
  }
}
