package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.catalog.OffsetsCatalog;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.ProbeField;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A stripped module build whose grpc-go release the catalog has not observed, between two observed
 * releases that differ on a struct member (as grpc-go v1.34.2 lay between v1.34.0 and v1.35.0): the
 * catalog cannot vouch for either value, and the binary's runtime type information gives each member by
 * name, whether it equals one of the observed values or neither. The catalog here brackets the fixture's
 * v1.60.1 with v1.59.0 and v1.61.0; the true values (DWARF of the unstripped build) are what the fields
 * must equal.
 */
class BetweenObservationsIT {
  private static final String CATALOG = """
      {"format": 1, "sections": {
        "google.golang.org/grpc": {"observed": ["v1.59.0", "v1.61.0"], "fields": {
          "http2_server_conn": [{"since": "v1.59.0", "value": 32}, {"since": "v1.61.0", "value": %d}],
          "loopy_writer_conn": [{"since": "v1.59.0", "value": null}, {"since": "v1.61.0", "value": %d}],
          "http2_client_conn": [{"since": "v1.59.0", "value": 120}, {"since": "v1.61.0", "value": 136}]}}}}
      """;

  @Test
  void theRuntimeTypeInformationGivesEachMemberBetweenTwoObservationsThatDiffer() throws Exception {
    Path dir = GoFixtures.fixture("1.22.12", "v1.60.1");
    long serverConn;
    long loopyConn;
    long clientConn;
    try (GoBinary full = GoBinary.open(dir.resolve("app"))) {
      OffsetsResolution truth = OffsetsResolver.resolve(full, OffsetsCatalog.empty(), Preference.DWARF);
      serverConn = truth.values().get(ProbeField.HTTP2_SERVER_CONN).value();
      loopyConn = truth.values().get(ProbeField.LOOPY_WRITER_CONN).value();
      clientConn = truth.values().get(ProbeField.HTTP2_CLIENT_CONN).value();
    }
    assertThat(clientConn).as("the catalog below brackets http2_client_conn with two wrong values").isNotIn(120L, 136L);
    OffsetsCatalog catalog = OffsetsCatalog.parse(new ByteArrayInputStream(
        String.format(CATALOG, serverConn, loopyConn).getBytes(StandardCharsets.UTF_8)));
    try (GoBinary stripped = GoBinary.open(dir.resolve("app.stripped"))) {
      OffsetsResolution r = OffsetsResolver.resolve(stripped, catalog, Preference.DWARF);
      // one of the two observed values, absent in the older observation and present in the newer, and neither:
      // each as the binary has it
      assertThat(r.values().get(ProbeField.HTTP2_SERVER_CONN)).isEqualTo(new FieldValue(null, serverConn, FieldValue.Source.TYPEINFO));
      assertThat(r.values().get(ProbeField.LOOPY_WRITER_CONN)).isEqualTo(new FieldValue(null, loopyConn, FieldValue.Source.TYPEINFO));
      assertThat(r.values().get(ProbeField.HTTP2_CLIENT_CONN)).isEqualTo(new FieldValue(null, clientConn, FieldValue.Source.TYPEINFO));
      // the catalog did not answer, so nothing disagreed
      assertThat(r.mismatches()).isEmpty();
    }
  }
}
