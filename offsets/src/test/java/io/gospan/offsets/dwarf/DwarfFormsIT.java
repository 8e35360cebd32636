package io.gospan.offsets.dwarf;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.GoFixtures;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.elf.ElfFile;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The form table against real DWARF: every DIE of Go binaries built by the test fixtures (DWARF 4 as
 * {@code .zdebug_*} from Go 1.16, SHF_COMPRESSED from Go 1.19, plain from Go 1.22, DWARF 5 from Go 1.26) is
 * decoded ({@link DebugInfo#readDie}) and stepped over ({@link DebugInfo#skipAttributes}); both must end
 * at the same byte, and the DIEs of each unit must end exactly at the unit's end.
 */
class DwarfFormsIT {
  record Binary(String label, String go, String grpc, String file) {
    @Override
    public String toString() {
      return label;
    }
  }

  static Stream<Binary> binaries() {
    return Stream.of(
        new Binary("go1.16 DWARF 4 .zdebug", "1.16.15", "v1.40.0", "app"),
        new Binary("go1.19 DWARF 4 SHF_COMPRESSED", "1.19.13", "v1.50.1", "app"),
        new Binary("go1.22 DWARF 4 plain", "1.22.12", "v1.60.1", "app.plaindwarf"),
        new Binary("go1.26 DWARF 5", "1.26.8", "v1.85.0", "app"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("binaries")
  void everyDieIsReadAndSkippedOverTheSameBytes(Binary b) throws Exception {
    Path path = GoFixtures.fixture(b.go(), b.grpc()).resolve(b.file());
    DebugInfo dies = new DebugInfo(ElfFile.open(path));
    List<Unit> units = dies.units();
    assertThat(units).as("units of %s", path).hasSizeGreaterThan(10);
    ByteReader info = dies.info();
    Die d = new Die();
    TreeSet<Integer> formsSeen = new TreeSet<>();
    long count = 0;
    long mismatches = 0;
    String firstMismatch = null;
    for (Unit u : units) {
      int pos = u.dieStart;
      while (pos < u.end) {
        dies.readDie(pos, u, d);
        for (int i = 0; i < d.count; i++) {
          formsSeen.add(d.forms[i]);
        }
        info.seek(pos);
        long code = info.uleb();
        if (code != 0) {
          dies.skipAttributes(dies.abbrev(u, code, pos), u, pos);
        }
        if (info.position() != d.next) {
          mismatches++;
          if (firstMismatch == null) {
            firstMismatch = "DIE at " + pos + " (tag 0x" + Integer.toHexString(d.tag) + "): read ends at " + d.next
                + ", skip at " + info.position();
          }
        }
        pos = d.next;
        count++;
      }
      assertThat(pos).as("DIEs of the unit at %d end at its end", u.offset).isEqualTo(u.end);
    }
    assertThat(firstMismatch).as("%d of %d DIEs", mismatches, count).isNull();
    assertThat(count).as("DIEs walked").isGreaterThan(10_000);
    String forms = formsSeen.stream().map(f -> "0x" + Integer.toHexString(f)).collect(Collectors.joining(" "));
    System.out.printf("%s: %d DIEs in %d units, forms %s%n", b, count, units.size(), forms);
    assertThat(formsSeen).as("forms used by %s", b).isNotEmpty()
        .allMatch(f -> Arrays.stream(FormTable.knownForms()).anyMatch(k -> k == f));
  }
}
