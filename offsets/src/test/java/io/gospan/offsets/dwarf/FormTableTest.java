package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * The form table on hand-made bytes: every form it knows is read and skipped over the length DWARF 5
 * table 7.6 gives it (written here from the standard, not from the table). {@code DwarfFormsIT} does the
 * same over every DIE of real Go binaries.
 */
class FormTableTest {
  /**
   * 0x83 0x01 (ULEB128 131; u16 0x0183), a NUL at 2, then 'A's: every form's length is distinct enough to
   * be told apart (a string ends at 2, a BLOCK1 is 131 bytes long, a BLOCK2 or BLOCK4 387).
   */
  private static final byte[] BYTES = bytes();

  private static byte[] bytes() {
    byte[] b = new byte[600];
    Arrays.fill(b, (byte) 'A');
    b[0] = (byte) 0x83;
    b[1] = 0x01;
    b[2] = 0;
    b[3] = 0;
    return b;
  }

  /** Bytes each form takes over {@link #BYTES} in a DWARF 5 unit with 8-byte addresses and 4-byte offsets. */
  private static Map<Integer, Integer> lengthsDwarf5() {
    Map<Integer, Integer> m = new TreeMap<>();
    m.put(FORM_ADDR, 8);
    m.put(FORM_BLOCK2, 2 + 0x0183);
    m.put(FORM_BLOCK4, 4 + 0x0183);
    m.put(FORM_DATA2, 2);
    m.put(FORM_DATA4, 4);
    m.put(FORM_DATA8, 8);
    m.put(FORM_STRING, 3);
    m.put(FORM_BLOCK, 2 + 131);
    m.put(FORM_BLOCK1, 1 + 0x83);
    m.put(FORM_DATA1, 1);
    m.put(FORM_FLAG, 1);
    m.put(FORM_SDATA, 2);
    m.put(FORM_STRP, 4);
    m.put(FORM_UDATA, 2);
    m.put(FORM_REF_ADDR, 4);
    m.put(FORM_REF1, 1);
    m.put(FORM_REF2, 2);
    m.put(FORM_REF4, 4);
    m.put(FORM_REF8, 8);
    m.put(FORM_REF_UDATA, 2);
    m.put(FORM_SEC_OFFSET, 4);
    m.put(FORM_EXPRLOC, 2 + 131);
    m.put(FORM_FLAG_PRESENT, 0);
    m.put(FORM_STRX, 2);
    m.put(FORM_ADDRX, 2);
    m.put(FORM_REF_SUP4, 4);
    m.put(FORM_STRP_SUP, 4);
    m.put(FORM_DATA16, 16);
    m.put(FORM_LINE_STRP, 4);
    m.put(FORM_REF_SIG8, 8);
    m.put(FORM_IMPLICIT_CONST, 0);
    m.put(FORM_LOCLISTX, 2);
    m.put(FORM_RNGLISTX, 2);
    m.put(FORM_REF_SUP8, 8);
    m.put(FORM_STRX1, 1);
    m.put(FORM_STRX2, 2);
    m.put(FORM_STRX3, 3);
    m.put(FORM_STRX4, 4);
    m.put(FORM_ADDRX1, 1);
    m.put(FORM_ADDRX2, 2);
    m.put(FORM_ADDRX3, 3);
    m.put(FORM_ADDRX4, 4);
    m.put(FORM_GNU_ADDR_INDEX, 2);
    m.put(FORM_GNU_STR_INDEX, 2);
    m.put(FORM_GNU_REF_ALT, 4);
    m.put(FORM_GNU_STRP_ALT, 4);
    return m;
  }

  private static Unit unit(int version, int addrSize, int offsetSize) {
    Unit u = new Unit();
    u.offset = 0x1000;
    u.version = version;
    u.addrSize = addrSize;
    u.offsetSize = offsetSize;
    return u;
  }

  private static ByteReader reader() {
    return new ByteReader(ByteBuffer.wrap(BYTES).order(ByteOrder.LITTLE_ENDIAN), "test");
  }

  /** Reads then skips {@code form} from the start of {@link #BYTES}; asserts both moved {@code length} bytes. */
  private static long readAndSkip(SoftAssertions soft, Unit u, int form, int length) throws Exception {
    FormTable.Encoding e = FormTable.encoding(form);
    soft.assertThat(e).as("form 0x%x", form).isNotNull();
    if (e == null) {
      return 0;
    }
    ByteReader r = reader();
    Die d = new Die();
    long v = e.read(r, u, -7, d, 0);
    soft.assertThat(r.position()).as("read of form 0x%x", form).isEqualTo(length);
    ByteReader s = reader();
    e.skip(s, u);
    soft.assertThat(s.position()).as("skip of form 0x%x", form).isEqualTo(length);
    return v;
  }

  @Test
  void everyKnownFormIsReadAndSkippedOverItsLength() throws Exception {
    Map<Integer, Integer> lengths = lengthsDwarf5();
    assertThat(Arrays.stream(FormTable.knownForms()).boxed()).as("the forms the table knows")
        .containsExactlyInAnyOrderElementsOf(lengths.keySet());
    SoftAssertions soft = new SoftAssertions();
    for (Map.Entry<Integer, Integer> e : lengths.entrySet()) {
      readAndSkip(soft, unit(5, 8, 4), e.getKey(), e.getValue());
    }
    soft.assertAll();
  }

  @Test
  void unitSizedFormsFollowTheUnit() throws Exception {
    SoftAssertions soft = new SoftAssertions();
    // 64-bit DWARF: section offsets (and DW_FORM_ref_addr since DWARF 3) take 8 bytes
    for (int form : new int[] {FORM_STRP, FORM_LINE_STRP, FORM_SEC_OFFSET, FORM_STRP_SUP, FORM_REF_ADDR}) {
      readAndSkip(soft, unit(5, 8, 8), form, 8);
    }
    // DWARF 2: DW_FORM_ref_addr has the size of an address
    readAndSkip(soft, unit(2, 4, 4), FORM_REF_ADDR, 4);
    readAndSkip(soft, unit(2, 8, 4), FORM_REF_ADDR, 8);
    readAndSkip(soft, unit(3, 8, 4), FORM_REF_ADDR, 4);
    readAndSkip(soft, unit(4, 4, 4), FORM_ADDR, 4);
    soft.assertAll();
  }

  @Test
  void valuesAreInterpretedByForm() throws Exception {
    SoftAssertions soft = new SoftAssertions();
    Unit u = unit(5, 8, 4);
    soft.assertThat(readAndSkip(soft, u, FORM_UDATA, 2)).isEqualTo(131);
    soft.assertThat(readAndSkip(soft, u, FORM_SDATA, 2)).as("SLEB128 0x83 0x01").isEqualTo(131);
    soft.assertThat(readAndSkip(soft, u, FORM_DATA2, 2)).isEqualTo(0x0183);
    soft.assertThat(readAndSkip(soft, u, FORM_STRX3, 3)).isEqualTo(0x000183);
    soft.assertThat(readAndSkip(soft, u, FORM_REF2, 2)).as("unit-relative").isEqualTo(0x1000 + 0x0183);
    soft.assertThat(readAndSkip(soft, u, FORM_REF_UDATA, 2)).as("unit-relative").isEqualTo(0x1000 + 131);
    soft.assertThat(readAndSkip(soft, u, FORM_REF_ADDR, 4)).as("absolute").isEqualTo(0x0183);
    soft.assertThat(readAndSkip(soft, u, FORM_FLAG_PRESENT, 0)).isEqualTo(1);
    soft.assertThat(readAndSkip(soft, u, FORM_IMPLICIT_CONST, 0)).isEqualTo(-7);
    soft.assertThat(readAndSkip(soft, u, FORM_DATA16, 16)).isEqualTo(0);
    soft.assertAll();

    Die d = new Die();
    ByteReader r = reader();
    assertThat(FormTable.encoding(FORM_EXPRLOC).read(r, u, 0, d, 3)).as("offset of the block's bytes").isEqualTo(2);
    assertThat(d.lens[3]).isEqualTo(131);
    r = reader();
    r.skip(1);
    assertThat(FormTable.encoding(FORM_STRING).read(r, u, 0, d, 1)).isEqualTo(1);
    assertThat(d.lens[1]).as("the string 0x01, without its NUL").isEqualTo(1);
  }

  @Test
  void aSkipPlanMergesFixedRunsAndStepsOverWhatEachValueWould() throws Exception {
    int[] forms = {FORM_DATA4, FORM_ADDR, FORM_STRING, FORM_FLAG_PRESENT, FORM_DATA1, FORM_UDATA, FORM_REF4};
    byte[] bytes = {1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 'a', 'b', 0, 9, (byte) 0x83, 0x01, 1, 2, 3, 4, 0x55};
    FormTable.Encoding[] encodings = Arrays.stream(forms).mapToObj(FormTable::encoding)
        .toArray(FormTable.Encoding[]::new);
    Unit u = unit(5, 8, 4);
    int[] plan = FormTable.skipPlan(encodings, u);
    assertThat(plan).as("4+8 bytes, the string, 0+1 bytes, the ULEB128, 4 bytes").hasSize(5);
    assertThat(plan[0]).isEqualTo(12);
    assertThat(plan[2]).isEqualTo(1);
    assertThat(plan[4]).isEqualTo(4);
    ByteReader planned = new ByteReader(ByteBuffer.wrap(bytes), "test");
    FormTable.skip(planned, plan);
    ByteReader each = new ByteReader(ByteBuffer.wrap(bytes), "test");
    for (FormTable.Encoding e : encodings) {
      e.skip(each, u);
    }
    assertThat(planned.position()).isEqualTo(each.position()).isEqualTo(bytes.length - 1);
    assertThat(FormTable.skipPlan(new FormTable.Encoding[] {FormTable.Encoding.U8, null}, u))
        .as("an indirect or unknown form has no plan").isNull();
  }

  @Test
  void theSignedFormIsReadSigned() throws Exception {
    ByteReader r = new ByteReader(ByteBuffer.wrap(new byte[] {0x7f}), "test");
    assertThat(FormTable.encoding(FORM_SDATA).read(r, unit(5, 8, 4), 0, new Die(), 0)).isEqualTo(-1);
  }

  @Test
  void indirectFormsResolveAndUnknownFormsAreNamed() throws Exception {
    assertThat(FormTable.encoding(FORM_INDIRECT)).isNull();
    ByteReader r = new ByteReader(ByteBuffer.wrap(new byte[] {FORM_INDIRECT, FORM_DATA4}), "test");
    assertThat(FormTable.direct(r, FORM_INDIRECT, 9)).isEqualTo(FORM_DATA4);
    assertThat(r.position()).isEqualTo(2);
    assertThat(FormTable.direct(r, FORM_DATA1, 9)).as("a direct form reads nothing").isEqualTo(FORM_DATA1);

    byte[] chain = new byte[6];
    Arrays.fill(chain, (byte) FORM_INDIRECT);
    assertThatThrownBy(() -> FormTable.direct(new ByteReader(ByteBuffer.wrap(chain), "test"), FORM_INDIRECT, 9))
        .isInstanceOf(CorruptBinaryException.class).hasMessageContaining("DW_FORM_indirect chain at 9");
    assertThat(FormTable.encoding(0x7f)).isNull();
    assertThatThrownBy(() -> FormTable.require(0x7f, "bin", 9)).isInstanceOf(UnsupportedDwarfFormException.class)
        .hasMessage("bin: .debug_info: unknown attribute form 0x7f in DIE at 9");
  }
}
