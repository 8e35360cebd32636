package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.catalog.OffsetsCatalog;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * Version inference on GOPATH-mode builds (no module information), stripped, checked against the
 * truth: the DWARF of the same program built the same way unstripped. The example client dials, so
 * it carries grpc-go's user agent; the example server does not, and its grpc-go release is narrowed
 * by its struct layouts; a server whose layouts match no bounded run of releases resolves from its own
 * type information and code. Every field of the stripped build equals DWARF's.
 */
class GopathInferenceIT {

  static Path build(String grpc) {
    Path out = GoFixtures.TARGET.resolve("go-fixtures/gopath-examples-v2-" + grpc);
    GoFixtures.run(List.of(GoFixtures.OFFSETS.resolve("src/test/go/fixtures/build-gopath-examples.sh").toString(),
        out.toString(), grpc), GoFixtures.OFFSETS, 30);
    return out;
  }

  /** Every value of the stripped build equals the unstripped build's DWARF; returns the fields compared. */
  static List<String> sameAsDwarf(Path dir, String name, OffsetsResolution stripped) throws Exception {
    List<String> compared = new ArrayList<>();
    try (GoBinary full = GoBinary.open(dir.resolve(name))) {
      OffsetsResolution truth = OffsetsResolver.resolve(full, OffsetsCatalog.empty(), Preference.DWARF);
      for (var e : stripped.values().entrySet()) {
        FieldValue t = truth.values().get(e.getKey());
        assertThat(t).as("%s %s: DWARF has it", name, e.getKey()).isNotNull();
        assertThat(Objects.equals(t.location(), e.getValue().location()) && t.value() == e.getValue().value())
            .as("%s %s: inferred %s, DWARF %s", name, e.getKey(), e.getValue(), t).isTrue();
        compared.add(e.getKey().cName());
      }
    }
    return compared;
  }

  @Test
  void aClientByItsUserAgentAndAServerByItsStructLayoutsGetDwarfsValues() throws Exception {
    Path dir = build("v1.60.1");
    try (GoBinary client = GoBinary.open(dir.resolve("stripped/greeter-client"));
        GoBinary server = GoBinary.open(dir.resolve("stripped/greeter-server"))) {
      assertThat(client.buildInfo().hasModuleInfo()).isFalse();
      OffsetsCatalog.BinaryVersions cv = OffsetsResolver.versions(client, OffsetsCatalog.embedded());
      assertThat(cv.grpc()).isEqualTo("v1.60.1");
      assertThat(cv.grpcInferredFrom()).isEqualTo("grpc-go user agent grpc-go/1.60.1");
      OffsetsResolution c = OffsetsResolver.resolve(client);
      assertThat(c.attachable()).contains(Probe.LOOPY_WRITER_WRITE_HEADER, Probe.HTTP2_CLIENT_OPERATE_HEADERS);
      assertThat(c.socketIdentity()).isTrue();
      assertThat(sameAsDwarf(dir, "greeter-client", c)).contains("write_header_hf_len", "client_operate_headers_frame",
          "http2_client_conn", "header_field_size", "loopy_writer_conn");
      assertThat(c.notes().get(ProbeField.HTTP2_CLIENT_CONN))
          .isEqualTo("inferred from grpc-go user agent grpc-go/1.60.1; matches the runtime type information");

      assertThat(server.buildInfo().hasModuleInfo()).isFalse();
      OffsetsCatalog.BinaryVersions sv = OffsetsResolver.versions(server, OffsetsCatalog.embedded());
      assertThat(sv.grpc()).as("no user agent in a server").isNull();
      assertThat(sv.grpcRange()).hasSize(2);
      assertThat(io.gospan.offsets.catalog.ModuleVersions.compare(sv.grpcRange().get(0), "v1.60.1")).isLessThanOrEqualTo(0);
      assertThat(io.gospan.offsets.catalog.ModuleVersions.compare(sv.grpcRange().get(1), "v1.60.1")).isGreaterThanOrEqualTo(0);
      OffsetsResolution s = OffsetsResolver.resolve(server);
      assertThat(s.attachable()).contains(Probe.LOOPY_WRITER_WRITE_HEADER, Probe.HTTP2_SERVER_OPERATE_HEADERS);
      assertThat(sameAsDwarf(dir, "greeter-server", s)).contains("write_header_l", "server_operate_headers_frame",
          "http2_server_conn", "meta_headers_frame_fields");
      assertThat(s.notes().get(ProbeField.SERVER_OPERATE_HEADERS_FRAME)).startsWith("inferred from grpc-go's struct layouts");
    }
  }

  @Test
  void aServerOfTheNewestCataloguedReleaseIsNotInferredButResolvesFromItsOwnTypeInformation() throws Exception {
    // its layouts match the newest observed releases: a newer grpc-go cannot be ruled out, so no version is
    // inferred; the binary's own type information and code still give every field, by name
    Path dir = build(OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC)
        .get(OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC).size() - 1));
    try (GoBinary server = GoBinary.open(dir.resolve("stripped/greeter-server"))) {
      assertThat(OffsetsResolver.versions(server, OffsetsCatalog.embedded()).grpcRange()).isNull();
      OffsetsResolution s = OffsetsResolver.resolve(server);
      assertThat(s.attachable()).as("%s", s.missing()).containsAll(Probe.grpcTransport().stream()
          .filter(p -> s.functions().containsKey(p)).toList());
      assertThat(s.values().get(ProbeField.HTTP2_SERVER_CONN).source()).isEqualTo(FieldValue.Source.TYPEINFO);
      assertThat(s.values().get(ProbeField.WRITE_HEADER_L).source()).isEqualTo(FieldValue.Source.CODE);
      assertThat(s.notes().get(ProbeField.WRITE_HEADER_L)).contains("(tried newest first: the binary names no google.golang.org/grpc version)");
      assertThat(sameAsDwarf(dir, "greeter-server", s)).contains("write_header_l", "server_operate_headers_frame",
          "http2_server_conn", "meta_headers_frame_fields");
    }
  }
}
