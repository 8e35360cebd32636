package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.GoRegisterAbi.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Go's amd64 argument layout on hand-made types (abi-internal.md's rules one by one); GoTruthIT
 * checks the same code against real binaries through DwarfData.
 */
class GoRegisterAbiTest {

  /** Type graph by offset: kind, size, array count/element, struct fields. */
  static final class FakeTypes implements GoRegisterAbi.Types {
    record T(int kind, long size, long count, int element, List<Integer> fields) {}

    final Map<Integer, T> types = new HashMap<>();

    int add(int kind, long size) {
      return put(new T(kind, size, -1, -1, List.of()));
    }

    int array(int element, long count) {
      return put(new T(KIND_ARRAY, count * types.get(element).size(), count, element, List.of()));
    }

    int struct(long size, Integer... fields) {
      return put(new T(KIND_STRUCT, size, -1, -1, new ArrayList<>(List.of(fields))));
    }

    int put(T t) {
      int off = 100 + types.size();
      types.put(off, t);
      return off;
    }

    @Override
    public int[] goKind(int typeOff) {
      return new int[] {types.get(typeOff).kind(), typeOff};
    }

    @Override
    public long size(int typeOff) {
      return types.get(typeOff).size();
    }

    @Override
    public long arrayCount(int arrayOff) {
      return types.get(arrayOff).count();
    }

    @Override
    public int arrayElement(int arrayOff) {
      return types.get(arrayOff).element();
    }

    @Override
    public List<Integer> fieldTypes(int structOff) {
      return types.get(structOff).fields();
    }
  }

  final FakeTypes t = new FakeTypes();
  final int ptr = t.add(KIND_POINTER, 8);
  final int str = t.add(KIND_STRING, 16);
  final int slice = t.add(KIND_SLICE, 24);
  final int int64 = t.add(6, 8);
  final int int32 = t.add(5, 4);
  final int bool = t.add(KIND_BOOL, 1);
  final int float64 = t.add(KIND_FLOAT64, 8);
  final int complex128 = t.add(KIND_COMPLEX128, 16);

  static String where(List<Piece> pieces) {
    return pieces.stream()
        .map(p -> p.kind() == Piece.Kind.STACK ? "SP+" + p.stackOffset() + ":" + p.size() : p.registerName() + ":" + p.size())
        .collect(Collectors.joining(" "));
  }

  List<Piece> next(GoRegisterAbi abi, int type) throws Exception {
    return abi.next(type, t.size(type));
  }

  @Test
  void integerWordsFillRaxRbxRcxRdiRsiR8ToR11InOrder() throws Exception {
    GoRegisterAbi abi = new GoRegisterAbi(t, "test", true);
    assertThat(where(next(abi, ptr))).isEqualTo("RAX:8");
    assertThat(where(next(abi, str))).isEqualTo("RBX:8 RCX:8");
    assertThat(where(next(abi, slice))).isEqualTo("RDI:8 RSI:8 R8:8");
    assertThat(where(next(abi, int32))).isEqualTo("R9:4");
    assertThat(where(next(abi, float64))).isEqualTo("X0:8");
    assertThat(where(next(abi, complex128))).isEqualTo("X1:8 X2:8");
  }

  @Test
  void aParameterThatDoesNotFitWholeGoesToTheStackAndGivesItsRegistersBack() throws Exception {
    GoRegisterAbi abi = new GoRegisterAbi(t, "test", true);
    for (int i = 0; i < 4; i++) {
      next(abi, str); // 8 integer registers
    }
    assertThat(where(next(abi, slice))).isEqualTo("SP+8:24"); // needs 3, 1 left
    assertThat(where(next(abi, bool))).isEqualTo("R11:1"); // the one left
    assertThat(where(next(abi, int32))).isEqualTo("SP+32:4");
  }

  @Test
  void structsAreTheirFieldsArraysOfOneTheirElementLongerArraysTheStack() throws Exception {
    int s = t.struct(16, int32, float64);
    int one = t.array(str, 1);
    int two = t.array(int64, 2);
    int empty = t.array(int64, 0);
    GoRegisterAbi abi = new GoRegisterAbi(t, "test", true);
    assertThat(where(next(abi, s))).isEqualTo("RAX:4 X0:8");
    assertThat(where(next(abi, one))).isEqualTo("RBX:8 RCX:8");
    assertThat(where(next(abi, two))).isEqualTo("SP+8:16");
    assertThat(next(abi, empty)).isEmpty();
    assertThat(where(next(abi, ptr))).isEqualTo("RDI:8");
  }

  @Test
  void stackAbiPutsEveryParameterInTheArgumentAreaAlignedToItsType() throws Exception {
    GoRegisterAbi abi = new GoRegisterAbi(t, "test", false);
    assertThat(where(next(abi, bool))).isEqualTo("SP+8:1");
    assertThat(where(next(abi, int32))).isEqualTo("SP+12:4");
    assertThat(where(next(abi, str))).isEqualTo("SP+16:16");
    assertThat(where(next(abi, bool))).isEqualTo("SP+32:1");
    assertThat(where(next(abi, t.struct(16, bool, int64)))).isEqualTo("SP+40:16"); // aligned to its int64
  }

  @Test
  void hostileTypesFailWithAClearException() {
    int self = t.struct(8);
    t.types.get(self).fields().add(self); // a struct containing itself
    assertThatThrownBy(() -> new GoRegisterAbi(t, "bin", true).next(self, 8))
        .isInstanceOf(CorruptBinaryException.class)
        .hasMessageContaining("bin: type nesting too deep");
    int unknown = t.add(99, 8);
    assertThatThrownBy(() -> new GoRegisterAbi(t, "bin", true).next(unknown, 8))
        .isInstanceOf(UnsupportedDwarfFormException.class)
        .hasMessageContaining("Go kind 99");
  }
}
