package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.bpf.StructLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The generated accessors ({@link GrpcStructs}) against the generated layouts ({@link GrpcLayouts},
 * which GrpcLayoutsBtfIT checks against the object's BTF): every struct, every member's offset, and
 * each accessor's width.
 */
class GrpcStructsTest {

  @Test
  void everyStructAndMemberIsWhereTheLayoutSays() throws Exception {
    for (StructLayout layout : GrpcLayouts.all()) {
      Class<?> c = Class.forName(GrpcStructs.class.getName() + "$" + camel(layout.name(), true));
      assertThat(c.getField("SIZE").getInt(null)).as(layout.name()).isEqualTo(layout.size());
      for (StructLayout.Field f : layout.fields()) {
        if (!f.name().startsWith("_")) {
          assertThat(c.getField(f.name().toUpperCase(Locale.ROOT)).getInt(null)).as(layout.name() + "." + f.name())
              .isEqualTo(f.offset());
        }
      }
    }
  }

  @Test
  void accessorsReadAndWriteTheMembersWidth() {
    ByteBuffer b = ByteBuffer.allocate(2 * GrpcStructs.HeaderEvent.SIZE).order(ByteOrder.LITTLE_ENDIAN);
    int at = 7;
    GrpcStructs.HeaderEvent.probe(b, at, 0xfe);
    GrpcStructs.HeaderEvent.localPort(b, at, 0xfffe);
    GrpcStructs.HeaderEvent.streamId(b, at, 0xfffffffd);
    GrpcStructs.HeaderEvent.connId(b, at, -2L);
    assertThat(GrpcStructs.HeaderEvent.probe(b, at)).isEqualTo(0xfe); // unsigned
    assertThat(GrpcStructs.HeaderEvent.side(b, at)).isZero(); // the next byte untouched
    assertThat(GrpcStructs.HeaderEvent.localPort(b, at)).isEqualTo(0xfffe);
    assertThat(GrpcStructs.HeaderEvent.remotePort(b, at)).isZero();
    assertThat(Integer.toUnsignedLong(GrpcStructs.HeaderEvent.streamId(b, at))).isEqualTo(0xfffffffdL);
    assertThat(GrpcStructs.HeaderEvent.connId(b, at)).isEqualTo(-2L);
    assertThat(b.get(at + GrpcStructs.HeaderEvent.PROBE)).isEqualTo((byte) 0xfe);
  }

  private static String camel(String snake, boolean upper) {
    StringBuilder b = new StringBuilder();
    for (String w : snake.split("_")) {
      b.append(b.length() == 0 && !upper ? w : Character.toUpperCase(w.charAt(0)) + w.substring(1));
    }
    return b.toString();
  }
}
