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
 * binary's runtime type information settles the member when it equals one of the two observed values,
 * and only then. The catalog here brackets the fixture's v1.60.1 with v1.59.0 and v1.61.0; the true
 * values (DWARF of the unstripped build) are what the settled fields must equal.
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
  void theRuntimeTypeInformationPicksOneOfTheTwoObservedValuesOrNone() throws Exception {
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
      assertThat(r.values().get(ProbeField.HTTP2_SERVER_CONN)).isEqualTo(new FieldValue(null, serverConn, FieldValue.Source.CATALOG));
      assertThat(r.notes().get(ProbeField.HTTP2_SERVER_CONN))
          .isEqualTo("between catalogued v1.59.0 (32) and v1.61.0 (" + serverConn + "): the runtime type information says " + serverConn);
      // absent in the older observation, present in the newer: the binary has it
      assertThat(r.values().get(ProbeField.LOOPY_WRITER_CONN).value()).isEqualTo(loopyConn);
      // neither observed value: not answered, and the reason says what the binary has
      assertThat(r.values()).doesNotContainKey(ProbeField.HTTP2_CLIENT_CONN);
      assertThat(r.missing().get(ProbeField.HTTP2_CLIENT_CONN))
          .contains("lies between catalogued v1.59.0 and v1.61.0")
          .contains("the binary's runtime type information says " + clientConn + ", neither observed value");
    }
  }
}
