package io.gospan.offsets.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.resolve.ArgumentLayout;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The embedded catalog against real builds of the examples: a stripped binary (no DWARF) resolves
 * every field through the catalog to exactly what the inspector reads from its unstripped twin's
 * DWARF, for the register ABI (Go 1.26 + grpc-go 1.85, Go 1.22 + grpc-go 1.60) and the stack ABI
 * (Go 1.16 + grpc-go 1.40); a grpc-go the catalog does not know falls back to DWARF, and stripped
 * as well to the binary's own runtime type information and code, but for a function whose parameters
 * changed, which is refused with the reason.
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

  @Test
  void aGrpcNewerThanTheCatalogResolvesFromDwarfOrStrippedFromItsOwnTypeInformation() throws Exception {
    // as if grpc-go v1.60.0 and later were released after the catalog was made
    OffsetsCatalog old = OffsetsCatalog.embedded().before("v1.60.0");
    Path plain = CatalogFixtures.examples("--go", "1.22.12", "--grpc", "v1.60.1").resolve("greeter-server");
    Path stripped = CatalogFixtures.examples("--go", "1.22.12", "--grpc", "v1.60.1", "--stripped").resolve("greeter-server");

    OffsetsResolution truth;
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
      truth = OffsetsResolver.resolve(b, OffsetsCatalog.empty(), Preference.DWARF);
    }

    try (GoBinary b = GoBinary.open(stripped)) {
      OffsetsResolution r = OffsetsResolver.resolve(b, old, Preference.DWARF);
      // grpc-go v1.60 gave (*http2Server).operateHeaders a ctx parameter: its arguments are no longer where the
      // newest catalogued release (v1.59.0) had them, and a stripped binary does not name them: refused, saying so
      assertThat(r.refusal(Probe.HTTP2_SERVER_OPERATE_HEADERS))
          .contains("(*http2Server).operateHeaders's arguments are not where any catalogued layout has them: v1.59.0");
      assertThat(r.missing().get(ProbeField.SERVER_OPERATE_HEADERS_FRAME)).contains("grpc-go v1.60.1 is newer than the catalog");
      // every other transport probe resolves from the binary itself, to what the unstripped twin's DWARF says
      assertThat(r.attachable()).as("%s", r.missing())
          .containsAll(Probe.grpcTransport().stream().filter(p -> p != Probe.HTTP2_SERVER_OPERATE_HEADERS).toList());
      assertThat(r.unsupported()).isEmpty();
      for (ProbeField f : ProbeField.values()) {
        FieldValue v = r.values().get(f);
        if (v == null) {
          continue;
        }
        FieldValue d = truth.values().get(f);
        assertThat(d).as("%s is in the twin's DWARF", f).isNotNull();
        assertThat(v.location()).as("%s", f).isEqualTo(d.location());
        assertThat(v.value()).as("%s", f).isEqualTo(d.value());
        if (OffsetsCatalog.GRPC.equals(OffsetsCatalog.section(f, true))) {
          assertThat(v.source()).as("%s", f).isEqualTo(FieldValue.Source.TYPEINFO);
        } else if (f.kind() == ProbeField.Kind.ARGUMENT && f.server() == null) {
          assertThat(v.source()).as("%s", f).isEqualTo(FieldValue.Source.CODE);
          assertThat(r.notes().get(f)).as("%s", f).contains("argument spills equal the layout of v1.59.0 (the newest catalogued)");
        }
      }
      for (ProbeField f : List.of(ProbeField.HTTP2_SERVER_CONN, ProbeField.STREAM_METHOD, ProbeField.LOOPY_WRITER_SIDE)) {
        assertThat(r.values()).as("%s", f).containsKey(f);
      }
      // Nothing else breaks: functions from pclntab, connection types from the runtime type information, Go
      // and x/net fields from the catalog.
      assertThat(r.functions()).containsOnlyKeys(Probe.values());
      assertThat(io.gospan.offsets.resolve.ConnTypes.of(b, 32).netConn("*net.TCPConn")).isPresent();
      assertThat(r.values().get(ProbeField.NET_FD_SYSFD).source()).isEqualTo(FieldValue.Source.CATALOG);
      assertThat(r.values().get(ProbeField.HEADER_FIELD_SIZE).source()).isEqualTo(FieldValue.Source.CATALOG);
      // With an empty catalog nothing names the arguments: the members still come from the type information
      OffsetsResolution none = OffsetsResolver.resolve(b, OffsetsCatalog.empty(), Preference.DWARF);
      assertThat(none.values().get(ProbeField.HTTP2_CLIENT_CONN).source()).isEqualTo(FieldValue.Source.TYPEINFO);
      assertThat(none.missing().get(ProbeField.CLOSE_STREAM_ST)).contains("the catalog has no argument layout of (*http2Client).closeStream");
    }
  }

  /**
   * A method the binary keeps a func type for ({@code (*http2Server).writeStatus}, in ServerTransport's method
   * table) whose catalogued layout does not fit its spills (here a catalog that gives it an extra parameter
   * before {@code st}): Go's calling convention applied to its own func type, confirmed by the spills, names
   * each parameter by its catalogued type; the values are the truth (the catalog's, for this release).
   */
  @Test
  void aMethodsFuncTypeNamesItsParametersWhenNoCataloguedLayoutFits() throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode root;
    try (InputStream in = OffsetsCatalog.class.getResourceAsStream(OffsetsCatalog.RESOURCE)) {
      root = (ObjectNode) json.readTree(in);
    }
    ArrayNode layouts = (ArrayNode) root.path("sections").path(OffsetsCatalog.ARGUMENTS_REGISTER).path("fields")
        .path(OffsetsCatalog.layoutField(Probe.HTTP2_SERVER_WRITE_STATUS));
    for (com.fasterxml.jackson.databind.JsonNode e : layouts) {
      ArgumentLayout l = ArgumentLayout.parse(e.path("value").asText());
      ((ObjectNode) e).put("value", l.params().get(0).name() + " " + l.params().get(0).type() + " = rax@0:8 | "
          + l.params().get(1).name() + " " + l.params().get(1).type() + " = rbx@8:8 | extra int = rcx@16:8 | "
          + l.params().get(2).name() + " " + l.params().get(2).type() + " = rdi@24:8");
    }
    OffsetsCatalog skewed = OffsetsCatalog.parse(new ByteArrayInputStream(json.writeValueAsBytes(root)));
    String newest = skewed.observed(OffsetsCatalog.GRPC).get(skewed.observed(OffsetsCatalog.GRPC).size() - 1);
    Path stripped = CatalogFixtures.examples("--stripped").resolve("greeter-server");
    try (GoBinary b = GoBinary.open(stripped)) {
      OffsetsResolution truth = OffsetsResolver.resolve(b);
      OffsetsResolution r = OffsetsResolver.resolve(b, skewed.before(newest), Preference.DWARF);
      for (ProbeField f : List.of(ProbeField.WRITE_STATUS_T, ProbeField.WRITE_STATUS_S, ProbeField.WRITE_STATUS_ST)) {
        assertThat(r.values().get(f)).as("%s: %s", f, r.missing().get(f)).isNotNull();
        assertThat(r.values().get(f).source()).as("%s", f).isEqualTo(FieldValue.Source.CODE);
        assertThat(r.values().get(f).location()).as("%s", f).isEqualTo(truth.values().get(f).location());
        assertThat(r.notes().get(f)).as("%s", f).contains("(*http2Server).writeStatus's parameters by type in its func type")
            .contains("no catalogued layout fits");
      }
      assertThat(r.attachable()).contains(Probe.HTTP2_SERVER_WRITE_STATUS);
      // closeStream's layout, untouched, still names its arguments
      assertThat(r.values().get(ProbeField.CLOSE_STREAM_ST).location()).isEqualTo(truth.values().get(ProbeField.CLOSE_STREAM_ST).location());
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
