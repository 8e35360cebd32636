package io.gospan.offsets.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.resolve.ConnTypes;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The embedded catalog against patch releases of grpc-go (what people deploy): for a sample of the
 * catalog's patch releases, the generator's probe program built with {@code -s -w} resolves every catalogued
 * field through the catalog to exactly what the inspector reads from the DWARF of the same build unstripped,
 * its probes attach, and its connection types equal the unstripped twin's. The sample spans both ABIs and
 * the catalog's range; {@code -Dcatalog.patch.sample=v1.52.3@1.21.13,...} checks others, and {@code
 * offsets/generate-catalog.sh --verify-stripped} checks every build of the matrix the same way. Then each
 * release is removed from the catalog ({@link OffsetsCatalog#before}: as a release newer than the catalog):
 * every field must come out the same from the binary's own runtime type information and code, but the
 * arguments of a function whose parameters changed in that release, which are refused.
 */
class CatalogPatchReleasesIT {
  /** grpc-go release @ Go toolchain: the stack ABI, the register ABI with an older and with the newest Go. */
  private static final String SAMPLE = "v1.34.2@1.16.15,v1.63.2@1.22.12,v1.74.3@";

  @Test
  void strippedPatchReleasesResolveThroughTheCatalogToTheirDwarf() throws Exception {
    List<String> checked = new ArrayList<>();
    for (String item : System.getProperty("catalog.patch.sample", SAMPLE).split(",")) {
      String grpc = item.substring(0, item.indexOf('@'));
      String go = item.substring(item.indexOf('@') + 1);
      if (go.isEmpty()) {
        go = CatalogFixtures.goOnPath();
      }
      Path dir = CatalogFixtures.probeWithStrippedTwin(go, grpc);
      String what = "grpc-go " + grpc + " go" + go;
      assertThat(OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC)).as("the catalog observed %s", grpc).contains(grpc);
      OffsetsResolution fromDwarf;
      ConnTypes conns;
      try (GoBinary b = GoBinary.open(dir.resolve("probe"))) {
        fromDwarf = OffsetsResolver.resolve(b, OffsetsCatalog.empty(), Preference.DWARF);
        conns = ConnTypes.of(b, 32);
      }
      try (GoBinary b = GoBinary.open(dir.resolve("probe.stripped"))) {
        OffsetsResolution fromCatalog = OffsetsResolver.resolve(b);
        assertThat(fromCatalog.attachable()).as("%s: %s", what, fromCatalog.missing()).containsAll(Probe.grpcTransport());
        assertThat(ConnTypes.of(b, 32)).as("%s: connection types", what).isEqualTo(conns);
        assertThat(conns.identifiesSockets()).as(what).isTrue();
        for (ProbeField f : ProbeField.values()) {
          if (!f.catalogued()) {
            continue;
          }
          FieldValue d = fromDwarf.values().get(f);
          FieldValue c = fromCatalog.values().get(f);
          if (d == null) {
            assertThat(c).as("%s %s: not in the DWARF (%s), so not from the catalog either", what, f, fromDwarf.missing().get(f))
                .isNull();
            continue;
          }
          assertThat(c).as("%s %s: %s", what, f, fromCatalog.missing().get(f)).isNotNull();
          assertThat(c.source()).as("%s %s", what, f).isEqualTo(FieldValue.Source.CATALOG);
          assertThat(c.location()).as("%s %s", what, f).isEqualTo(d.location());
          assertThat(c.value()).as("%s %s", what, f).isEqualTo(d.value());
        }
      }
      // the generator's own check of every build (generate-catalog.sh --verify-stripped) says the same, and,
      // with the release removed from the catalog, the binary's own type information and code give every
      // field but the arguments of a function whose parameters changed in that release
      CatalogGenerator.Verification v = CatalogGenerator.verifyStripped(dir.resolve("probe.stripped"),
          CatalogGenerator.observe(dir.resolve("probe"), grpc + "-go" + go), OffsetsCatalog.embedded());
      assertThat(v.wrong()).as("%s: generate-catalog.sh --verify-stripped", what).isEmpty();
      try (GoBinary b = GoBinary.open(dir.resolve("probe.stripped"))) {
        OffsetsResolution own = OffsetsResolver.resolve(b, OffsetsCatalog.embedded().before(grpc), Preference.DWARF);
        if (b.usesRegisterAbi() && v.refused().isEmpty()) {
          assertThat(own.attachable()).as("%s without %s in the catalog: %s", what, grpc, own.missing())
              .containsAll(Probe.grpcTransport());
        }
        for (ProbeField f : ProbeField.values()) {
          FieldValue x = own.values().get(f);
          if (x != null && OffsetsCatalog.GRPC.equals(OffsetsCatalog.section(f, true))) {
            assertThat(x.source()).as("%s %s without %s in the catalog", what, f, grpc).isEqualTo(FieldValue.Source.TYPEINFO);
          }
        }
      }
      checked.add(what + (v.refused().isEmpty() ? "" : " (type information refused: " + v.refused() + ")"));
    }
    System.out.println("stripped builds resolved through the catalog, and without their release through their own type"
        + " information and code, to their DWARF: " + checked);
  }
}
