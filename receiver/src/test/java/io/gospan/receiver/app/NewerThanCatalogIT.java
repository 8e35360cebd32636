package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.catalog.OffsetsCatalog;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import io.gospan.receiver.discovery.BinaryInspection;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A grpc-go release the offsets catalog has not observed, stripped: grpc-go's own route_guide, server and
 * client, built stripped and position-independent at the newest release the catalog observed ({@code
 * scripts/build-route-guide.sh --pie --stripped}, the build {@link RouteGuideIT} traces), inspected and traced
 * by a gospan whose catalog lacks that release (the test hook {@link OffsetsCatalog#BEFORE_PROPERTY}: as if
 * the release came out after this gospan was built). Every grpc-go offset then comes from the binaries' own
 * runtime type information (struct members, by name) and code (argument registers, named by the newest
 * catalogued layout their spills equal), equal to what the full catalog says; {@code inspect} promises client
 * and server spans linked by socket, and {@code run} delivers them with real BPF: every call of every run of
 * the short-lived client, each client span the parent of its server span.
 */
class NewerThanCatalogIT {

  @Test
  void aStrippedReleaseNewerThanTheCatalogIsTracedFromItsOwnTypeInformation() throws Exception {
    Path dir = RouteGuideIT.build("--pie", "--stripped");
    List<String> observed = OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC);
    String newest = observed.get(observed.size() - 1);
    BinaryInspection[] withCatalog = new BinaryInspection[2];
    String[] programs = {"route_guide_client", "route_guide_server"};
    for (int i = 0; i < 2; i++) {
      withCatalog[i] = BinaryInspection.inspect(dir.resolve(programs[i]), Preference.DWARF);
      assertThat(withCatalog[i].grpcVersion()).as("build-route-guide.sh builds the newest catalogued grpc-go").contains(newest);
    }
    System.setProperty(OffsetsCatalog.BEFORE_PROPERTY, newest);
    try {
      assertThat(OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC)).doesNotContain(newest);
      for (int i = 0; i < 2; i++) {
        BinaryInspection own = BinaryInspection.inspect(dir.resolve(programs[i]), Preference.DWARF);
        OffsetsResolution r = own.resolution().orElseThrow();
        OffsetsResolution c = withCatalog[i].resolution().orElseThrow();
        String what = programs[i] + " without grpc-go " + newest + " in the catalog";
        for (ProbeField f : ProbeField.values()) {
          String section = OffsetsCatalog.section(f, true);
          if (!OffsetsCatalog.GRPC.equals(section) && !OffsetsCatalog.ARGUMENTS_REGISTER.equals(section)) {
            continue; // x/net's and Go's sections are keyed by their own versions
          }
          FieldValue full = c.values().get(f);
          FieldValue v = r.values().get(f);
          if (full == null) {
            assertThat(v).as("%s %s: not in the catalog's answer either", what, f).isNull();
            continue;
          }
          assertThat(v).as("%s %s: %s", what, f, r.missing().get(f)).isNotNull();
          assertThat(v.source()).as("%s %s", what, f).isIn(FieldValue.Source.TYPEINFO, FieldValue.Source.CODE);
          assertThat(v.location()).as("%s %s", what, f).isEqualTo(full.location());
          assertThat(v.value()).as("%s %s", what, f).isEqualTo(full.value());
        }
        assertThat(own.attachable()).as("%s: %s", what, own.refused()).isEqualTo(withCatalog[i].attachable());
        assertThat(own.producesSpans()).as(what).isTrue();
        assertThat(own.socketLinking()).as(what).isTrue();
        assertThat(own.offsetsSource()).as(what).contains("typeinfo").contains("code");
      }
      assertThat(BinaryInspection.inspect(dir.resolve(programs[0]), Preference.DWARF).clientSpans()).isTrue();
      assertThat(BinaryInspection.inspect(dir.resolve(programs[1]), Preference.DWARF).serverSpans()).isTrue();
      assertThat(BinaryInspection.inspect(dir.resolve(programs[1]), Preference.DWARF).probes(BinaryInspection.Action.ATTACH))
          .containsAll(Set.of(Probe.HTTP2_SERVER_OPERATE_HEADERS, Probe.HTTP2_SERVER_WRITE_STATUS));
      // gospan run, with the same catalog: every run's calls traced, linked
      new RouteGuideIT().traceRuns(dir, List.of(), List.of());
    } finally {
      System.clearProperty(OffsetsCatalog.BEFORE_PROPERTY);
    }
  }
}
