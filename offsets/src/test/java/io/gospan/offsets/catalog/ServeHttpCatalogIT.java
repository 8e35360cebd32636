package io.gospan.offsets.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ServeHTTP path in the catalog: the generator's probe program links both HTTP/2 server copies (x/net's
 * h2c and net/http's bundled one), the generator observes their fields (members and sizes keyed by the x/net
 * and Go versions, argument locations in {@code arguments/<abi>/golang.org/x/net} and {@code
 * arguments/<abi>/std}), and a catalog merged from that observation makes a stripped ServeHTTP server (the
 * example greeter-server, same grpc-go, x/net and Go) resolve every ServeHTTP field to what its unstripped
 * twin's DWARF says: all of that path's probes attach. (The embedded catalog gets these fields when it is
 * regenerated: {@code offsets/generate-catalog.sh}.)
 */
class ServeHttpCatalogIT {

  @Test
  void aStrippedServeHttpServerResolvesBothServerCopiesThroughTheCatalog() throws Exception {
    String go = CatalogFixtures.goOnPath();
    Path probe = CatalogFixtures.probe(go, "v1.85.0");
    JsonNode o = CatalogGenerator.observe(probe, "v1.85.0-go" + go);
    assertThat(o.path("status").asText()).as(o.toString()).isEqualTo("ok");
    OffsetsCatalog catalog = OffsetsCatalog.parse(new ByteArrayInputStream(
        CatalogGenerator.render(CatalogGenerator.merge(List.of(o))).getBytes(StandardCharsets.UTF_8)));
    assertThat(catalog.observed(OffsetsCatalog.ARGUMENTS_REGISTER_XNET)).containsExactly(o.path("xnet").asText());
    assertThat(catalog.observed(OffsetsCatalog.ARGUMENTS_REGISTER_STD)).hasSize(1);

    Path plain = CatalogFixtures.examples().resolve("greeter-server");
    Path stripped = CatalogFixtures.examples("--stripped").resolve("greeter-server");
    OffsetsResolution fromDwarf;
    try (GoBinary b = GoBinary.open(plain)) {
      fromDwarf = OffsetsResolver.resolve(b, OffsetsCatalog.empty(), Preference.DWARF);
    }
    try (GoBinary b = GoBinary.open(stripped)) {
      OffsetsResolution r = OffsetsResolver.resolve(b, catalog, Preference.DWARF);
      for (Probe p : Probe.values()) {
        if (p.serveHttp()) {
          assertThat(r.refusal(p)).as("%s", p).isNull();
        }
      }
      int compared = 0;
      for (ProbeField f : ProbeField.values()) {
        if (f.server() == null) {
          continue;
        }
        FieldValue d = fromDwarf.values().get(f);
        FieldValue c = r.values().get(f);
        assertThat(d).as("%s in the unstripped twin's DWARF", f).isNotNull();
        assertThat(c).as("%s: %s", f, r.missing().get(f)).isNotNull();
        assertThat(c.source()).isEqualTo(FieldValue.Source.CATALOG);
        assertThat(c.location()).as("%s", f).isEqualTo(d.location());
        assertThat(c.value()).as("%s", f).isEqualTo(d.value());
        compared++;
      }
      assertThat(compared).as("the fields of both server copies").isEqualTo(2 * 21);
    }
  }
}
