package io.gospan.offsets.elf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.CorruptBinaryException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class ByteReaderTest {
  private static ByteReader of(int... bytes) {
    byte[] b = new byte[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      b[i] = (byte) bytes[i];
    }
    return new ByteReader(ByteBuffer.wrap(b), "test");
  }

  @Test
  void decodesLeb128AsInDwarfSpecExamples() throws Exception {
    // DWARF 5 section 7.6, figures 22 and 23.
    assertThat(of(0x02).uleb()).isEqualTo(2);
    assertThat(of(0x7f).uleb()).isEqualTo(127);
    assertThat(of(0x80, 0x01).uleb()).isEqualTo(128);
    assertThat(of(0xb9, 0x64).uleb()).isEqualTo(12857);
    assertThat(of(0x7e).sleb()).isEqualTo(-2);
    assertThat(of(0xff, 0x7e).sleb()).isEqualTo(-129);
    assertThat(of(0x80, 0x7f).sleb()).isEqualTo(-128);
  }

  @Test
  void readsLittleEndianIntegers() throws Exception {
    ByteReader r = of(0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
    assertThat(r.u16()).isEqualTo(0x1234);
    assertThat(r.u32()).isEqualTo(0x12345678L);
    assertThat(r.u64()).isEqualTo(-1L);
    assertThat(r.hasRemaining()).isFalse();
  }

  @Test
  void everyReadPastTheEndIsACorruptBinaryException() throws Exception {
    assertThatThrownBy(() -> of(0x01).u16()).isInstanceOf(CorruptBinaryException.class)
        .hasMessageContaining("test: truncated");
    assertThatThrownBy(() -> of(0x80, 0x80).uleb()).isInstanceOf(CorruptBinaryException.class);
    assertThatThrownBy(() -> of('a', 'b').cstring()).isInstanceOf(CorruptBinaryException.class)
        .hasMessageContaining("unterminated");
    assertThatThrownBy(() -> of(1, 2).seek(3)).isInstanceOf(CorruptBinaryException.class);
    assertThatThrownBy(() -> of(1, 2).skip(-1)).isInstanceOf(CorruptBinaryException.class);
    assertThatThrownBy(() -> of(1, 2).slice(3)).isInstanceOf(CorruptBinaryException.class);
  }

  @Test
  void overlongLeb128KeepsTheLow64Bits() throws Exception {
    assertThat(of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01).uleb()).isEqualTo(-1L);
  }

  @Test
  void comparesCStringsInPlace() throws Exception {
    ByteReader r = of('g', 'o', 0, 'x', 0);
    assertThat(r.cstringEquals(0, "go".getBytes())).isTrue();
    assertThat(r.cstringEquals(0, "g".getBytes())).isFalse();
    assertThat(r.cstringLength(3)).isEqualTo(1);
    assertThat(r.cstringLength(9)).isEqualTo(-1);
    assertThat(r.cstring()).isEqualTo("go");
  }
}
