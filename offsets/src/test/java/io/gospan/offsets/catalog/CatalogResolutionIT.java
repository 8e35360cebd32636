package io.gospan.offsets.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The embedded catalog against real builds of the examples: a stripped binary (no DWARF) resolves
 * every field through the catalog to exactly what the inspector reads from its unstripped twin's
 * DWARF, for the register ABI (Go 1.26 + grpc-go 1.85, Go 1.22 + grpc-go 1.60) and the stack ABI
 * (Go 1.16 + grpc-go 1.40); a grpc-go the catalog does not know falls back to DWARF, and stripped
 * as well is reported unsupported with the reason while everything else still resolves.
 */
class CatalogResolutionIT {

  private static void strippedMatchesUnstrippedTwin(String... buildArgs) throws Exception {
    Path plain = CatalogFixtures.examples(buildArgs);
    String[] strippedArgs = java.util.Arrays.copyOf(buildArgs, buildArgs.length + 1);
    strippedArgs[buildArgs.length] = "--stripped";
    Path stripped = CatalogFixtures.examples(strippedArgs);
    for (String program : new String[] {"greeter-server", "greeter-client"}) {
      OffsetsResolution fromDwarf;
      try (GoBinary b = GoBinary.open(plain.resolve(program))) {
        fromDwarf = OffsetsResolver.resolve(b, OffsetsCatalog.empty(), Preference.DWARF);
      }
      OffsetsResolution fromCatalog;
      try (GoBinary b = GoBinary.open(stripped.resolve(program))) {
        fromCatalog = OffsetsResolver.resolve(b);
      }
      String what = stripped.resolve(program).toString();
      assertThat(fromCatalog.attachable()).as("%s: %s", what, fromCatalog.missing()).containsAll(Probe.grpcTransport());
      assertThat(fromCatalog.socketIdentity()).as("socket identity of %s", what).isTrue();
      assertThat(fromCatalog.attachable()).as("%s: the probes the DWARF of its twin attaches, the ServeHTTP path's too", what)
          .containsAll(fromDwarf.attachable());
      for (ProbeField f : ProbeField.values()) {
        if (!f.catalogued()) {
          continue;
        }
        FieldValue d = fromDwarf.values().get(f);
        FieldValue c = fromCatalog.values().get(f);
        if (d == null) {
          assertThat(c).as("%s %s: not in the DWARF of the twin (%s), so not in the catalog either", what, f, fromDwarf.missing().get(f))
              .isNull();
          assertThat(fromCatalog.missing().get(f)).as("%s %s: missing, with the reason", what, f).isNotBlank();
          continue;
        }
        assertThat(c).as("%s %s: %s", what, f, fromCatalog.missing().get(f)).isNotNull();
        assertThat(c.source()).as("%s %s", what, f).isEqualTo(FieldValue.Source.CATALOG);
        assertThat(c.location()).as("%s %s", what, f).isEqualTo(d.location());
        assertThat(c.value()).as("%s %s", what, f).isEqualTo(d.value());
      }
      // The unstripped twin with the catalog: DWARF wins and agrees with the catalog.
      try (GoBinary b = GoBinary.open(plain.resolve(program))) {
        OffsetsResolution both = OffsetsResolver.resolve(b);
        assertThat(both.mismatches()).as("catalog vs DWARF of %s", plain.resolve(program)).isEmpty();
        assertThat(both.values()).isEqualTo(fromDwarf.values());
      }
    }
  }

  @Test
  void go126WithGrpc185StrippedResolvesThroughTheCatalog() throws Exception {
    strippedMatchesUnstrippedTwin();
  }

  @Test
  void go122WithGrpc160StrippedResolvesThroughTheCatalog() throws Exception {
    strippedMatchesUnstrippedTwin("--go", "1.22.12", "--grpc", "v1.60.1");
  }

  @Test
  void go116StackAbiWithGrpc140StrippedResolvesThroughTheCatalog() throws Exception {
    strippedMatchesUnstrippedTwin("--go", "1.16.15", "--grpc", "v1.40.0");
  }

  /** The embedded catalog without grpc-go versions from {@code from} on (as if they were released after it). */
  private static OffsetsCatalog catalogBefore(String from) throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode root;
    try (InputStream in = OffsetsCatalog.class.getResourceAsStream(OffsetsCatalog.RESOURCE)) {
      root = (ObjectNode) json.readTree(in);
    }
    for (String section : new String[] {OffsetsCatalog.GRPC, OffsetsCatalog.ARGUMENTS_REGISTER, OffsetsCatalog.ARGUMENTS_STACK}) {
      ObjectNode s = (ObjectNode) root.path("sections").path(section);
      ArrayNode observed = (ArrayNode) s.path("observed");
      for (Iterator<com.fasterxml.jackson.databind.JsonNode> it = observed.iterator(); it.hasNext(); ) {
        if (ModuleVersions.compare(it.next().asText(), from) >= 0) {
          it.remove();
        }
      }
      for (Iterator<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> fi = s.path("fields").fields(); fi.hasNext(); ) {
        ArrayNode entries = (ArrayNode) fi.next().getValue();
        for (Iterator<com.fasterxml.jackson.databind.JsonNode> it = entries.iterator(); it.hasNext(); ) {
          if (ModuleVersions.compare(it.next().path("since").asText(), from) >= 0) {
            it.remove();
          }
        }
      }
    }
    return OffsetsCatalog.parse(new ByteArrayInputStream(json.writeValueAsBytes(root)));
  }

  @Test
  void aGrpcNewerThanTheCatalogFallsBackToDwarfAndStrippedIsUnsupported() throws Exception {
    OffsetsCatalog old = catalogBefore("v1.60.0");
    Path plain = CatalogFixtures.examples("--go", "1.22.12", "--grpc", "v1.60.1").resolve("greeter-server");
    Path stripped = CatalogFixtures.examples("--go", "1.22.12", "--grpc", "v1.60.1", "--stripped").resolve("greeter-server");

    try (GoBinary b = GoBinary.open(plain)) {
      OffsetsResolution r = OffsetsResolver.resolve(b, old, Preference.DWARF);
      assertThat(r.attachable()).as("%s", r.missing()).containsAll(Probe.grpcTransport());
      assertThat(r.values().get(ProbeField.SERVER_OPERATE_HEADERS_FRAME).source()).isEqualTo(FieldValue.Source.DWARF);
      // Preferring the catalog still takes what it cannot answer from DWARF.
      OffsetsResolution c = OffsetsResolver.resolve(b, old, Preference.CATALOG);
      assertThat(c.attachable()).containsAll(Probe.grpcTransport());
      assertThat(c.values().get(ProbeField.SERVER_OPERATE_HEADERS_FRAME).source()).isEqualTo(FieldValue.Source.DWARF);
      assertThat(c.values().get(ProbeField.NET_FD_SYSFD).source()).isEqualTo(FieldValue.Source.CATALOG);
      assertThat(c.values()).hasSameSizeAs(r.values());
    }

    try (GoBinary b = GoBinary.open(stripped)) {
      OffsetsResolution r = OffsetsResolver.resolve(b, old, Preference.DWARF);
      // grpc-go's transport probes need grpc-go's offsets; the ServeHTTP path's come from x/net's and Go's
      // sections, which a newer grpc-go does not change
      assertThat(r.attachable()).as("%s", r.missing())
          .containsExactlyInAnyOrderElementsOf(java.util.Arrays.stream(Probe.values()).filter(Probe::serveHttp).toList());
      assertThat(r.unsupported()).hasValueSatisfying(u -> assertThat(u)
          .startsWith("unsupported: grpc-go v1.60.1 is newer than the catalog")
          .contains("no DWARF"));
      assertThat(r.refusal(Probe.HTTP2_SERVER_OPERATE_HEADERS)).contains("unsupported: grpc-go v1.60.1").contains("no DWARF");
      // Nothing else breaks: functions from pclntab, connection types from the runtime type information, Go
      // and x/net fields from the catalog.
      assertThat(r.functions()).containsOnlyKeys(Probe.values());
      assertThat(io.gospan.offsets.resolve.ConnTypes.of(b, 32).netConn("*net.TCPConn")).isPresent();
      assertThat(r.values().get(ProbeField.NET_FD_SYSFD).source()).isEqualTo(FieldValue.Source.CATALOG);
      assertThat(r.values().get(ProbeField.HEADER_FIELD_SIZE).source()).isEqualTo(FieldValue.Source.CATALOG);
      assertThat(r.missing()).containsKey(ProbeField.LOOPY_WRITER_SIDE);
    }
  }

  @Test
  void aDisagreementIsReportedAndThePreferenceDecides() throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode root;
    try (InputStream in = OffsetsCatalog.class.getResourceAsStream(OffsetsCatalog.RESOURCE)) {
      root = (ObjectNode) json.readTree(in);
    }
    // A catalog that is wrong about net.netFD.pfd.Sysfd for every Go version.
    ArrayNode sysfd = (ArrayNode) root.path("sections").path(OffsetsCatalog.STD).path("fields").path("net_fd_sysfd");
    for (com.fasterxml.jackson.databind.JsonNode e : sysfd) {
      ((ObjectNode) e).put("value", 4242);
    }
    OffsetsCatalog wrong = OffsetsCatalog.parse(new ByteArrayInputStream(json.writeValueAsBytes(root)));
    Path plain = CatalogFixtures.examples("--go", "1.22.12", "--grpc", "v1.60.1").resolve("greeter-server");
    try (GoBinary b = GoBinary.open(plain)) {
      OffsetsResolution dwarfWins = OffsetsResolver.resolve(b, wrong, Preference.DWARF);
      assertThat(dwarfWins.values().get(ProbeField.NET_FD_SYSFD).source()).isEqualTo(FieldValue.Source.DWARF);
      assertThat(dwarfWins.values().get(ProbeField.NET_FD_SYSFD).value()).isNotEqualTo(4242);
      assertThat(dwarfWins.mismatches()).containsOnlyKeys(ProbeField.NET_FD_SYSFD);
      assertThat(dwarfWins.mismatches().get(ProbeField.NET_FD_SYSFD)).contains("catalog says 4242").contains("using DWARF");
      OffsetsResolution catalogWins = OffsetsResolver.resolve(b, wrong, Preference.CATALOG);
      assertThat(catalogWins.values().get(ProbeField.NET_FD_SYSFD))
          .isEqualTo(new FieldValue(null, 4242, FieldValue.Source.CATALOG));
      assertThat(catalogWins.mismatches().get(ProbeField.NET_FD_SYSFD)).contains("using catalog");
    }
  }
}
