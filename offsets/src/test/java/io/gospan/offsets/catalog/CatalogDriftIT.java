package io.gospan.offsets.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Drift check: rebuilds a sample of the catalog's matrix (two grpc-go releases with the Go on
 * PATH) exactly as {@code generate-catalog.sh} does and fails when what the inspector reads differs
 * from the committed catalog (a changed generator, inspector or probe program, or a catalog edited
 * by hand). Regenerate with {@code offsets/generate-catalog.sh} when it fails for a good reason.
 */
class CatalogDriftIT {
  private static final List<String> SAMPLE = List.of("v1.69.4", "v1.85.0");

  @Test
  void aRebuiltSampleMatchesTheCommittedCatalog() throws Exception {
    String go = CatalogFixtures.goOnPath();
    OffsetsCatalog catalog = OffsetsCatalog.embedded();
    List<String> drift = new ArrayList<>();
    for (String grpc : SAMPLE) {
      Path probe = CatalogFixtures.probe(go, grpc);
      JsonNode o = CatalogGenerator.observe(probe, grpc + "-go" + go);
      assertThat(o.path("status").asText()).as("%s with go%s: %s", grpc, go, o.path("reason").asText()).isEqualTo("ok");
      assertThat(catalog.observed(OffsetsCatalog.GRPC)).as("the committed catalog observed grpc-go %s", grpc).contains(grpc);
      OffsetsCatalog.BinaryVersions v = new OffsetsCatalog.BinaryVersions(
          o.path("grpc").asText(), o.path("xnet").asText(), o.path("go").asText(), o.path("abi").asText().equals("register"), Map.of());
      for (ProbeField f : ProbeField.values()) {
        if (!f.catalogued()) {
          continue;
        }
        JsonNode built = o.path("fields").get(f.cName());
        OffsetsCatalog.Answer a = catalog.lookup(f, v);
        String committed = a.value() != null ? String.valueOf(OffsetsCatalog.encode(a.value())) : a.absent() ? "null" : "unknown (" + a.reason() + ")";
        String rebuilt = built == null || built.isNull() ? "null" : built.asText();
        if (!committed.equals(rebuilt)) {
          drift.add(grpc + " go" + go + " " + f.cName() + ": catalog " + committed + ", rebuilt " + rebuilt);
        }
      }
      // each probed function's argument layout (names, types, registers, slots)
      for (Probe p : Probe.values()) {
        JsonNode built = o.path("layouts").get(OffsetsCatalog.layoutField(p));
        if (built == null) {
          continue;
        }
        List<String> committed = catalog.layouts(p, v).stream().map(l -> l.layout().format()).toList();
        String rebuilt = built.isNull() ? "none (" + o.path("layouts_missing").path(OffsetsCatalog.layoutField(p)).asText() + ")" : built.asText();
        if (!committed.equals(List.of(rebuilt))) {
          drift.add(grpc + " go" + go + " " + OffsetsCatalog.layoutField(p) + ": catalog " + committed + ", rebuilt " + rebuilt);
        }
      }
    }
    assertThat(drift).as("catalog drift (regenerate with offsets/generate-catalog.sh)").isEmpty();
  }
}
