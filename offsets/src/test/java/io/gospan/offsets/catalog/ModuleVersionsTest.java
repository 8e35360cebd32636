package io.gospan.offsets.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ModuleVersionsTest {
  @Test
  void ordersReleasesPrereleasesAndPseudoVersionsLikeTheGoCommand() {
    List<String> sorted = List.of(
        "v0.0.0-20190311183353-d8887717615a",
        "v0.0.0-20200822124328-c89045814202",
        "v0.1.0",
        "v0.16.0",
        "v0.17.1-0.20231010000000-abcdefabcdef",
        "v0.17.1",
        "v1.9.0",
        "v1.10.0-rc1",
        "v1.10.0",
        "v1.10.1+incompatible");
    List<String> shuffled = new ArrayList<>(sorted);
    java.util.Collections.reverse(shuffled);
    shuffled.sort(ModuleVersions.ORDER);
    assertThat(shuffled).containsExactlyElementsOf(sorted);
    assertThat(ModuleVersions.compare("v1.60.1", "v1.60.1")).isZero();
  }

  @Test
  void prereleaseIdentifiersCompareNumericallyAndBeforeAlphanumericOnes() {
    List<String> sorted = List.of("v1.0.0-1", "v1.0.0-2", "v1.0.0-10", "v1.0.0-alpha", "v1.0.0-alpha.2", "v1.0.0-alpha.10",
        "v1.0.0-alpha.x", "v1.0.0-rc.1", "v1.0.0");
    List<String> shuffled = new ArrayList<>(sorted);
    java.util.Collections.reverse(shuffled);
    shuffled.sort(ModuleVersions.ORDER);
    assertThat(shuffled).containsExactlyElementsOf(sorted);
  }

  @Test
  void goVersionsBecomeSemanticVersions() {
    assertThat(ModuleVersions.goToSemver("go1.21.13")).isEqualTo("v1.21.13");
    assertThat(ModuleVersions.goToSemver("go1.21")).isEqualTo("v1.21.0");
    assertThat(ModuleVersions.goToSemver("go1.26rc1")).isEqualTo("v1.26.0-rc1");
    assertThat(ModuleVersions.goToSemver("devel go1.27-abcdef")).isNull();
    assertThat(ModuleVersions.compare(ModuleVersions.goToSemver("go1.26rc1"), ModuleVersions.goToSemver("go1.26.0"))).isNegative();
  }

  @Test
  void rejectsWhatIsNotAVersion() {
    assertThat(ModuleVersions.valid("(devel)")).isFalse();
    assertThat(ModuleVersions.valid("")).isFalse();
    assertThat(ModuleVersions.valid("v1.2.3")).isTrue();
  }
}
