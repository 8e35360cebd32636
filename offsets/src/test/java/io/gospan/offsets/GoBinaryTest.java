package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Rejections that need no Go toolchain: synthetic ELF headers and the system's own (C) executables. */
class GoBinaryTest {
  private static final Path NAME = Path.of("synthetic");

  /** A 64-byte ELF64 header with no program or section headers. */
  private static ByteBuffer header(int elfClass, int data, int machine) {
    ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
    b.put(0, (byte) 0x7f).put(1, (byte) 'E').put(2, (byte) 'L').put(3, (byte) 'F');
    b.put(4, (byte) elfClass).put(5, (byte) data).put(6, (byte) 1);
    b.putShort(0x10, (short) 2).putShort(0x12, (short) machine);
    b.putShort(0x34, (short) 64).putShort(0x36, (short) 56).putShort(0x3a, (short) 64);
    return b;
  }

  @Test
  void rejectsANonElfFile() {
    ByteBuffer text = ByteBuffer.wrap("#!/bin/sh\necho not a binary\n".getBytes());
    assertThatThrownBy(() -> GoBinary.of(NAME, text)).isInstanceOf(NotElfException.class)
        .hasMessageContaining("not an ELF file");
    assertThatThrownBy(() -> GoBinary.of(NAME, ByteBuffer.allocate(0))).isInstanceOf(NotElfException.class);
  }

  @Test
  void rejectsOtherArchitectures() {
    assertThatThrownBy(() -> GoBinary.of(NAME, header(2, 1, 183))).isInstanceOf(UnsupportedArchitectureException.class)
        .hasMessageContaining("e_machine 183");
    assertThatThrownBy(() -> GoBinary.of(NAME, header(1, 1, 3))).isInstanceOf(UnsupportedArchitectureException.class)
        .hasMessageContaining("class 1");
    assertThatThrownBy(() -> GoBinary.of(NAME, header(2, 2, 62))).isInstanceOf(UnsupportedArchitectureException.class);
  }

  @Test
  void rejectsATruncatedHeader() {
    ByteBuffer h = header(2, 1, 62);
    assertThatThrownBy(() -> GoBinary.of(NAME, h.slice(0, 40))).isInstanceOf(NotElfException.class)
        .hasMessageContaining("truncated");
  }

  @Test
  void rejectsSectionHeadersOutsideTheFile() {
    ByteBuffer h = header(2, 1, 62);
    h.putLong(0x28, 1 << 20).putShort(0x3c, (short) 3);
    assertThatThrownBy(() -> GoBinary.of(NAME, h)).isInstanceOf(CorruptBinaryException.class)
        .hasMessageContaining("outside the file");
  }

  @Test
  void anX86ElfWithoutGoTablesIsNotGo() {
    assertThatThrownBy(() -> GoBinary.of(NAME, header(2, 1, 62))).isInstanceOf(NotGoBinaryException.class);
  }

  @Test
  void aSystemCExecutableIsNotGo() throws Exception {
    Path ls = Path.of("/bin/ls");
    assertThat(Files.isReadable(ls)).as("/bin/ls exists (Debian)").isTrue();
    assertThatThrownBy(() -> GoBinary.open(ls)).isInstanceOf(NotGoBinaryException.class);
  }

  @Test
  void aMissingFileIsAnIoErrorNotAFormatError() {
    assertThatThrownBy(() -> GoBinary.open(Path.of("/nonexistent/gospan")))
        .isInstanceOf(java.io.IOException.class).isNotInstanceOf(GoBinaryException.class);
  }
}
