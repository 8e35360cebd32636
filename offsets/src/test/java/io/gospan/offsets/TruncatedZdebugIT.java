package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.ElfSection;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real go1.16 binary (compressed {@code .zdebug_*} DWARF) whose {@code .zdebug_info} section header is
 * shrunk below the 12-byte "ZLIB" + size framing, or cut inside the zlib stream: the DWARF reader gets a
 * {@link CorruptBinaryException} naming the section, thrown by the ELF reader itself (no runtime exception
 * converted by a catch-all).
 */
class TruncatedZdebugIT {

  @TempDir Path tmp;

  @Test
  void aZdebugInfoCutShortIsCorruptAndNamed() throws Exception {
    Path original = GoFixtures.fixture("1.16.15", "v1.40.0").resolve("app");
    byte[] bytes = Files.readAllBytes(original);
    ElfFile elf = ElfFile.open(original);
    List<ElfSection> sections = elf.sections();
    int index = -1;
    for (int i = 0; i < sections.size(); i++) {
      if (sections.get(i).name().equals(".zdebug_info")) {
        index = i;
      }
    }
    assertThat(index).as("the go1.16 fixture has a .zdebug_info").isPositive();
    assertThat(elf.debugSection("info")).as("intact, it inflates").isPresent();
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    long shoff = b.getLong(0x28);
    int shSizeAt = (int) (shoff + 64L * index + 32); // Elf64_Shdr.sh_size

    for (long size : new long[] {0, 3, 4, 8, 11, 12, 40}) {
      b.putLong(shSizeAt, size);
      Path cut = tmp.resolve("app-" + size);
      Files.write(cut, bytes);
      assertThatThrownBy(() -> ElfFile.open(cut).debugSection("info")).as("sh_size %d", size)
          .isInstanceOf(CorruptBinaryException.class)
          .hasMessageContaining(".zdebug_info")
          .hasNoCause();
      try (GoBinary go = GoBinary.open(cut)) {
        assertThatThrownBy(() -> go.dwarf().typeSize("runtime.g")).as("sh_size %d", size)
            .isInstanceOf(CorruptBinaryException.class)
            .hasMessageContaining(".zdebug_info")
            .hasNoCause();
      }
    }
  }
}
