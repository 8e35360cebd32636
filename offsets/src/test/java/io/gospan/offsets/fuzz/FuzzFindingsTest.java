package io.gospan.offsets.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinary;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What fuzzing found, each written out as a test (the inputs Jazzer found are also kept under
 * {@code GoBinaryFuzzTestInputs/<target>/finding-*} and replayed by {@link GoBinaryFuzzTest}).
 */
class FuzzFindingsTest {

  /**
   * {@code rawImage}: a PT_LOAD whose file range runs past the end of the file made {@code
   * functions()} answer a file offset outside the file (a uprobe there attaches to nothing).
   */
  @Test
  void aSegmentPastTheEndOfTheFileGivesNoFileOffset() throws Exception {
    byte[] image = FuzzSeeds.all().get("rawImage").get("symtab").clone();
    ByteBuffer b = ByteBuffer.wrap(image).order(ByteOrder.LITTLE_ENDIAN);
    long phoff = b.getLong(0x20);
    int phnum = b.getShort(0x38);
    for (int i = 0; i < phnum; i++) {
      int ph = (int) phoff + 56 * i;
      if (b.getLong(ph + 16) == FuzzImage.Kind.TEXT.address()) {
        b.putLong(ph + 8, image.length + 0x100000L); // p_offset: a megabyte past the end
      }
    }
    GoBinary bin = GoBinary.of(Path.of("segment-past-eof"), ByteBuffer.wrap(image));
    assertThat(bin.elf().fileOffset(FuzzImage.Kind.TEXT.address())).isEmpty();
    assertThatThrownBy(() -> bin.functions(List.of(FuzzSeeds.WRITE_HEADER)))
        .isInstanceOf(CorruptBinaryException.class).hasMessageContaining("past the end of the file")
        .hasNoCause();
  }
}
