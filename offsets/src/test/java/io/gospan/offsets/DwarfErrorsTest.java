package io.gospan.offsets;

import static io.gospan.offsets.SyntheticElf.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.dwarf.StructType;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.zip.Deflater;
import org.junit.jupiter.api.Test;

/** DWARF error paths on hand-built units: unknown forms and versions, truncation, compression framing. */
class DwarfErrorsTest {
  private static final byte[] PCLNTAB = bytes(0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8, 0, 0, 0, 0, 0, 0, 0, 0);

  /** compile_unit(name string) with children; structure_type(name string, byte_size {@code sizeForm}). */
  private static byte[] abbrev(int sizeForm) {
    return bytes(1, 0x11, 1, 0x03, 0x08, 0, 0,
        2, 0x13, 0, 0x03, 0x08, 0x0b, sizeForm, 0, 0,
        0);
  }

  /** A DWARF 4 unit: CU "cu" with one struct "T" of 16 bytes. */
  private static byte[] info(int version, int extraLength) {
    byte[] dies = bytes(1, 'c', 'u', 0, 2, 'T', 0, 16, 0);
    ByteBuffer b = ByteBuffer.allocate(4 + 2 + 4 + 1 + dies.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(2 + 4 + 1 + dies.length + extraLength).putShort((short) version).putInt(0).put((byte) 8).put(dies);
    return b.array();
  }

  private static GoBinary.Dwarf dwarf(SyntheticElf elf) throws GoBinaryException {
    return GoBinary.of(Path.of("synthetic"), elf.build()).dwarf();
  }

  private static SyntheticElf elf(byte[] abbrev, byte[] info) {
    return new SyntheticElf().section(".gopclntab", PCLNTAB).section(".debug_abbrev", abbrev)
        .section(".debug_info", info);
  }

  @Test
  void aWellFormedUnitAnswers() throws Exception {
    GoBinary.Dwarf d = dwarf(elf(abbrev(0x0b), info(4, 0)));
    assertThat(d.struct("T")).contains(new StructType("T", 16, java.util.List.of()));
    assertThat(d.typeSize("T")).isEqualTo(OptionalLong.of(16));
    assertThat(d.version()).isEqualTo(4);
    assertThat(d.compileUnits()).extracting(u -> u.name()).containsExactly("cu");
  }

  @Test
  void anUnknownFormIsUnsupported() {
    assertThatThrownBy(() -> dwarf(elf(abbrev(0x7f), info(4, 0))).struct("T"))
        .isInstanceOf(UnsupportedDwarfFormException.class).hasMessageContaining("unknown attribute form 0x7f");
  }

  @Test
  void anUnknownVersionIsUnsupported() {
    assertThatThrownBy(() -> dwarf(elf(abbrev(0x0b), info(6, 0))).struct("T"))
        .isInstanceOf(UnsupportedDwarfFormException.class).hasMessageContaining("DWARF version 6");
  }

  @Test
  void aUnitLongerThanItsSectionIsCorrupt() {
    assertThatThrownBy(() -> dwarf(elf(abbrev(0x0b), info(4, 100))).struct("T"))
        .isInstanceOf(CorruptBinaryException.class).hasMessageContaining("runs past the end");
  }

  @Test
  void anUndefinedAbbreviationIsCorrupt() {
    byte[] info = info(4, 0);
    info[11 + 4] = 9; // the struct DIE's abbreviation code
    assertThatThrownBy(() -> dwarf(elf(abbrev(0x0b), info)).struct("T"))
        .isInstanceOf(CorruptBinaryException.class).hasMessageContaining("undefined abbreviation 9");
  }

  @Test
  void noDebugInfoMeansDwarfUnavailable() {
    SyntheticElf e = new SyntheticElf().section(".gopclntab", PCLNTAB);
    assertThatThrownBy(() -> dwarf(e)).isInstanceOf(DwarfUnavailableException.class);
  }

  @Test
  void zdebugSectionsAreInflated() throws Exception {
    byte[] info = info(4, 0);
    ByteArrayOutputStream z = new ByteArrayOutputStream();
    z.writeBytes("ZLIB".getBytes());
    z.writeBytes(ByteBuffer.allocate(8).putLong(info.length).array()); // big-endian size
    z.writeBytes(deflate(info));
    SyntheticElf e = new SyntheticElf().section(".gopclntab", PCLNTAB).section(".zdebug_abbrev", zlibFramed(abbrev(0x0b)))
        .section(".zdebug_info", z.toByteArray());
    assertThat(dwarf(e).typeSize("T")).isEqualTo(OptionalLong.of(16));
  }

  @Test
  void shfCompressedSectionsAreInflatedAndBadStreamsAreCorrupt() throws Exception {
    SyntheticElf good = new SyntheticElf().section(".gopclntab", PCLNTAB).section(".debug_abbrev", abbrev(0x0b))
        .section(".debug_info", chdr(info(4, 0), deflate(info(4, 0))), 0x800);
    assertThat(dwarf(good).typeSize("T")).isEqualTo(OptionalLong.of(16));
    byte[] garbage = bytes(1, 2, 3, 4, 5, 6, 7, 8);
    SyntheticElf bad = new SyntheticElf().section(".gopclntab", PCLNTAB).section(".debug_abbrev", abbrev(0x0b))
        .section(".debug_info", chdr(info(4, 0), garbage), 0x800);
    assertThatThrownBy(() -> dwarf(bad).struct("T")).isInstanceOf(CorruptBinaryException.class)
        .hasMessageContaining("zlib");
    SyntheticElf huge = new SyntheticElf().section(".gopclntab", PCLNTAB).section(".debug_abbrev", abbrev(0x0b))
        .section(".debug_info", chdr(new byte[0], deflate(info(4, 0)), 1L << 40), 0x800);
    assertThatThrownBy(() -> dwarf(huge).struct("T")).isInstanceOf(CorruptBinaryException.class)
        .hasMessageContaining("implausible uncompressed size");
  }

  private static byte[] zlibFramed(byte[] data) {
    ByteArrayOutputStream z = new ByteArrayOutputStream();
    z.writeBytes("ZLIB".getBytes());
    z.writeBytes(ByteBuffer.allocate(8).putLong(data.length).array());
    z.writeBytes(deflate(data));
    return z.toByteArray();
  }

  private static byte[] chdr(byte[] plain, byte[] compressed) {
    return chdr(plain, compressed, plain.length);
  }

  /** ELF64_Chdr (ch_type 1 = zlib, ch_size, ch_addralign) followed by the stream. */
  private static byte[] chdr(byte[] plain, byte[] compressed, long size) {
    ByteBuffer b = ByteBuffer.allocate(24 + compressed.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(1).putInt(0).putLong(size).putLong(1).put(compressed);
    return b.array();
  }

  private static byte[] deflate(byte[] data) {
    Deflater d = new Deflater();
    d.setInput(data);
    d.finish();
    byte[] buf = new byte[data.length + 64];
    int n = d.deflate(buf);
    d.end();
    return java.util.Arrays.copyOf(buf, n);
  }
}
