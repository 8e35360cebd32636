package io.gospan.offsets.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.Module;
import io.gospan.offsets.resolve.ArgLocation;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.ProbeField;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OffsetsCatalogTest {
  private static final String CATALOG = """
      {"format": 1, "sections": {
        "google.golang.org/grpc": {"observed": ["v1.30.0", "v1.34.0", "v1.35.0", "v1.40.1", "v1.69.4"], "fields": {
          "http2_client_conn": [{"since": "v1.30.0", "value": 72}, {"since": "v1.35.0", "value": 64}],
          "loopy_writer_conn": [{"since": "v1.30.0", "value": null}, {"since": "v1.69.4", "value": 40}],
          "http2_server_conn": [{"since": "v1.30.0", "value": 32}, {"since": "v1.40.1", "value": 40, "conflict": true}]}},
        "std": {"observed": ["go1.16.15", "go1.21.13", "go1.26.8"], "fields": {
          "net_fd_sysfd": [{"since": "go1.16.15", "value": 16}]}},
        "arguments/register": {"observed": ["v1.41.0", "v1.59.0", "v1.60.0", "v1.69.4"], "fields": {
          "write_header_l": [{"since": "v1.41.0", "value": "reg:0"}],
          "layout:http2_server_operate_headers": [
            {"since": "v1.41.0", "value": "t *T = rax@0:8 | frame *F = rbx@8:8 | handle func() = rcx@16:8"},
            {"since": "v1.60.0", "value": "t *T = rax@0:8 | ctx context.Context = rbx@8:8 rcx@16:8 | frame *F = rdi@24:8"}]}},
        "arguments/stack": {"observed": ["v1.30.0", "v1.40.1"], "fields": {
          "write_header_l": [{"since": "v1.30.0", "value": "sp:8"}]}}}}
      """;

  private static OffsetsCatalog catalog() throws Exception {
    return OffsetsCatalog.parse(new ByteArrayInputStream(CATALOG.getBytes(StandardCharsets.UTF_8)));
  }

  private static OffsetsCatalog.BinaryVersions versions(String grpc, String go, boolean register) {
    return new OffsetsCatalog.BinaryVersions(grpc, "v0.16.0", go, register, Map.of());
  }

  @Test
  void answersObservedVersionsAndVersionsBetweenObservationsThatAgree() throws Exception {
    OffsetsCatalog c = catalog();
    assertThat(c.lookup(ProbeField.HTTP2_CLIENT_CONN, versions("v1.35.0", "go1.22.12", true)).value())
        .isEqualTo(new FieldValue(null, 64, FieldValue.Source.CATALOG));
    // v1.50.0 lies between v1.40.1 and v1.69.4, both 64.
    assertThat(c.lookup(ProbeField.HTTP2_CLIENT_CONN, versions("v1.50.0", "go1.22.12", true)).value().value()).isEqualTo(64);
    assertThat(c.lookup(ProbeField.NET_FD_SYSFD, versions("v1.50.0", "go1.22.12", true)).value().value()).isEqualTo(16);
    assertThat(c.lookup(ProbeField.WRITE_HEADER_L, versions("v1.60.1", "go1.22.12", true)).value().location())
        .isEqualTo(ArgLocation.inRegister(0));
    assertThat(c.lookup(ProbeField.WRITE_HEADER_L, versions("v1.40.0", "go1.16.15", false)).value().location())
        .isEqualTo(ArgLocation.onStack(8));
  }

  @Test
  void doesNotGuessAcrossAChangeOrBeyondTheObservedVersions() throws Exception {
    OffsetsCatalog c = catalog();
    // v1.34.5: between v1.34.0 (72) and v1.35.0 (64).
    OffsetsCatalog.Answer between = c.lookup(ProbeField.HTTP2_CLIENT_CONN, versions("v1.34.5", "go1.22.12", true));
    assertThat(between.value()).isNull();
    assertThat(between.reason()).contains("between catalogued v1.34.0 and v1.35.0");
    OffsetsCatalog.Answer newer = c.lookup(ProbeField.HTTP2_CLIENT_CONN, versions("v1.99.0", "go1.22.12", true));
    assertThat(newer.value()).isNull();
    assertThat(newer.reason()).isEqualTo("grpc-go v1.99.0 is newer than the catalog (google.golang.org/grpc up to v1.69.4)");
    assertThat(c.lookup(ProbeField.HTTP2_CLIENT_CONN, versions("v1.29.0", "go1.22.12", true)).reason()).contains("older than the catalog");
    assertThat(c.lookup(ProbeField.NET_FD_SYSFD, versions("v1.50.0", "go1.27.1", true)).reason())
        .isEqualTo("Go go1.27.1 is newer than the catalog (std up to go1.26.8)");
    // Register-ABI arguments are only known from v1.41.0.
    assertThat(c.lookup(ProbeField.WRITE_HEADER_L, versions("v1.40.1", "go1.21.13", true)).value()).isNull();
  }

  @Test
  void knowsAbsentFieldsAndDistrustsConflicts() throws Exception {
    OffsetsCatalog c = catalog();
    OffsetsCatalog.Answer absent = c.lookup(ProbeField.LOOPY_WRITER_CONN, versions("v1.40.1", "go1.22.12", true));
    assertThat(absent.value()).isNull();
    assertThat(absent.absent()).isTrue();
    assertThat(c.lookup(ProbeField.LOOPY_WRITER_CONN, versions("v1.69.4", "go1.22.12", true)).value().value()).isEqualTo(40);
    OffsetsCatalog.Answer conflict = c.lookup(ProbeField.HTTP2_SERVER_CONN, versions("v1.40.1", "go1.22.12", true));
    assertThat(conflict.value()).isNull();
    assertThat(conflict.reason()).contains("disagree");
  }

  @Test
  void argumentLayoutsOfferedForABinaryTheNearestFirst() throws Exception {
    OffsetsCatalog c = catalog();
    io.gospan.offsets.resolve.Probe p = io.gospan.offsets.resolve.Probe.HTTP2_SERVER_OPERATE_HEADERS;
    java.util.function.Function<String, List<String>> offered = v -> c.layouts(p, versions(v, "go1.22.12", true)).stream()
        .map(l -> l.observed() + " " + l.why() + ": " + l.layout().param("frame").orElseThrow().words().get(0).register()).toList();
    assertThat(offered.apply("v1.50.0")).containsExactly("v1.41.0 catalogued: rbx");
    assertThat(offered.apply("v1.60.0")).containsExactly("v1.60.0 catalogued: rdi");
    // between two observations whose layouts differ: both, the older first
    assertThat(offered.apply("v1.59.1")).containsExactly("v1.59.0 catalogued just before: rbx", "v1.60.0 catalogued just after: rdi");
    // newer than the catalog: the newest; older: the oldest
    assertThat(offered.apply("v1.99.0")).containsExactly("v1.69.4 the newest catalogued: rdi");
    assertThat(offered.apply("v1.30.0")).containsExactly("v1.41.0 the oldest catalogued: rbx");
    // no layout of that function catalogued
    assertThat(c.layouts(io.gospan.offsets.resolve.Probe.HTTP2_CLIENT_CLOSE_STREAM, versions("v1.50.0", "go1.22.12", true))).isEmpty();
  }

  @Test
  void aCatalogBeforeAReleaseHasNeitherItNorLaterReleases() throws Exception {
    OffsetsCatalog c = catalog().before("v1.60.0");
    assertThat(c.observed(OffsetsCatalog.GRPC)).containsExactly("v1.30.0", "v1.34.0", "v1.35.0", "v1.40.1");
    assertThat(c.observed(OffsetsCatalog.ARGUMENTS_REGISTER)).containsExactly("v1.41.0", "v1.59.0");
    assertThat(c.observed(OffsetsCatalog.STD)).as("Go's sections are not keyed by grpc-go").hasSize(3);
    assertThat(c.lookup(ProbeField.HTTP2_CLIENT_CONN, versions("v1.69.4", "go1.22.12", true)).reason())
        .isEqualTo("grpc-go v1.69.4 is newer than the catalog (google.golang.org/grpc up to v1.40.1)");
    // the v1.60.0 layout is gone: the newest is v1.59.0's
    assertThat(c.layouts(io.gospan.offsets.resolve.Probe.HTTP2_SERVER_OPERATE_HEADERS, versions("v1.60.0", "go1.22.12", true)))
        .extracting(OffsetsCatalog.CataloguedLayout::observed).containsExactly("v1.59.0");
  }

  @Test
  void theTestHookPropertyGivesTheEmbeddedCatalogBeforeARelease() {
    String newest = OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC).get(OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC).size() - 1);
    System.setProperty(OffsetsCatalog.BEFORE_PROPERTY, newest);
    try {
      assertThat(OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC)).doesNotContain(newest).isNotEmpty();
    } finally {
      System.clearProperty(OffsetsCatalog.BEFORE_PROPERTY);
    }
    assertThat(OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC)).contains(newest);
  }

  @Test
  void withoutModuleVersionsThereIsNoAnswer() throws Exception {
    OffsetsCatalog.BinaryVersions none = new OffsetsCatalog.BinaryVersions(
        null, null, "go1.22.12", true, Map.of(OffsetsCatalog.GRPC, "the binary has no module information (GOPATH build)"));
    OffsetsCatalog.Answer a = catalog().lookup(ProbeField.HTTP2_CLIENT_CONN, none);
    assertThat(a.value()).isNull();
    assertThat(a.reason()).isEqualTo("no grpc-go version: the binary has no module information (GOPATH build)");
  }

  @Test
  void theEmbeddedCatalogLoadsQuicklyAndCoversEveryNonItabField() {
    long start = System.nanoTime();
    OffsetsCatalog c = OffsetsCatalog.embedded();
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertThat(c.isEmpty()).isFalse();
    assertThat(ms).as("load time, ms").isLessThan(1000);
    assertThat(c.observed(OffsetsCatalog.GRPC)).contains("v1.30.0");
    assertThat(c.observed(OffsetsCatalog.ARGUMENTS_STACK)).isNotEmpty();
    assertThat(c.observed(OffsetsCatalog.ARGUMENTS_REGISTER)).isNotEmpty();
    // the oldest observed register-ABI versions (Go's: the oldest register-ABI Go the std arguments saw)
    OffsetsCatalog.BinaryVersions v = new OffsetsCatalog.BinaryVersions(
        c.observed(OffsetsCatalog.ARGUMENTS_REGISTER).get(0), c.observed(OffsetsCatalog.XNET).get(0),
        "go" + c.observed(OffsetsCatalog.ARGUMENTS_REGISTER_STD).get(0).substring(1), true, Map.of());
    for (ProbeField f : ProbeField.values()) {
      if (f.catalogued()) {
        OffsetsCatalog.Answer a = c.lookup(f, v);
        assertThat(a.value() != null || a.absent()).as("%s: %s", f, a.reason()).isTrue();
      }
    }
  }

  @Test
  void binariesWithoutUsableModuleVersionsSayWhy() {
    BuildInfo gopath = new BuildInfo("go1.22.12", "", Optional.empty(), List.of(), List.of());
    OffsetsCatalog.BinaryVersions v = OffsetsCatalog.BinaryVersions.of(gopath, true);
    assertThat(v.grpc()).isNull();
    assertThat(v.whyNoVersion(OffsetsCatalog.GRPC)).contains("GOPATH build");
    assertThat(v.version(OffsetsCatalog.STD)).isEqualTo("v1.22.12");

    Module main = new Module("example.com/app", "(devel)", "", Optional.empty());
    Module grpcToDir = new Module("google.golang.org/grpc", "v1.60.1", "",
        Optional.of(new Module("../grpc-fork", "", "", Optional.empty())));
    Module xnetToFork = new Module("golang.org/x/net", "v0.16.0", "",
        Optional.of(new Module("golang.org/x/net", "v0.17.0", "h1:x", Optional.empty())));
    BuildInfo replaced = new BuildInfo("devel go1.27-abcdef", "example.com/app", Optional.of(main), List.of(grpcToDir, xnetToFork), List.of());
    v = OffsetsCatalog.BinaryVersions.of(replaced, true);
    assertThat(v.grpc()).isNull();
    assertThat(v.whyNoVersion(OffsetsCatalog.GRPC)).contains("replaced by ../grpc-fork");
    assertThat(v.xnet()).as("replaced by another version of itself: that version's layout").isEqualTo("v0.17.0");
    assertThat(v.version(OffsetsCatalog.STD)).isNull();
    assertThat(v.whyNoVersion(OffsetsCatalog.STD)).contains("devel go1.27");
  }

  private static final String XNET_CATALOG = """
      {"format": 1, "sections": {
        "google.golang.org/grpc": {"observed": ["v1.30.0", "v1.34.0", "v1.35.0"], "fields": {
          "http2_client_conn": [{"since": "v1.30.0", "value": 72}, {"since": "v1.35.0", "value": 64}]}},
        "golang.org/x/net": {"observed": ["v0.0.0-20190311183353-d8887717615a", "v0.4.0", "v0.62.0"], "fields": {
          "header_field_size": [{"since": "v0.0.0-20190311183353-d8887717615a", "value": 40}],
          "meta_headers_frame_fields": [{"since": "v0.0.0-20190311183353-d8887717615a", "value": 8}, {"since": "v0.4.0", "value": 16}]}}}}
      """;

  @Test
  void aGopathBuildIsKeyedByTheGrpcVersionOfItsUserAgentAndEveryXnetReleaseMustAgree() throws Exception {
    OffsetsCatalog c = OffsetsCatalog.parse(new ByteArrayInputStream(XNET_CATALOG.getBytes(StandardCharsets.UTF_8)));
    BuildInfo gopath = new BuildInfo("go1.19.8", "", Optional.empty(), List.of(), List.of());
    OffsetsCatalog.BinaryVersions v = OffsetsCatalog.BinaryVersions.of(gopath, true,
        new io.gospan.offsets.buildinfo.GrpcUserAgent.Found("v1.33.3", "grpc-go/1.33.3", null));
    assertThat(v.grpc()).isEqualTo("v1.33.3");
    assertThat(v.xnet()).isNull();
    assertThat(v.grpcInferredFrom()).isEqualTo("grpc-go user agent grpc-go/1.33.3");

    OffsetsCatalog.Answer grpc = c.lookup(ProbeField.HTTP2_CLIENT_CONN, v);
    assertThat(grpc.value().value()).isEqualTo(72);
    assertThat(grpc.inferred()).isEqualTo("inferred from grpc-go user agent grpc-go/1.33.3");

    OffsetsCatalog.Answer agreed = c.lookup(ProbeField.HEADER_FIELD_SIZE, v);
    assertThat(agreed.value().value()).isEqualTo(40);
    assertThat(agreed.inferred()).contains("every catalogued x/net release").contains("v0.62.0");

    OffsetsCatalog.Answer differ = c.lookup(ProbeField.META_HEADERS_FRAME_FIELDS, v);
    assertThat(differ.value()).isNull();
    assertThat(differ.reason()).contains("differ on meta_headers_frame_fields").contains("v0.4.0").contains("not inferred");

    // a user agent that names no release: nothing inferred, and the reason says both
    OffsetsCatalog.BinaryVersions dev = OffsetsCatalog.BinaryVersions.of(gopath, true,
        new io.gospan.offsets.buildinfo.GrpcUserAgent.Found(null, "grpc-go/1.34.0-dev", "a development build"));
    assertThat(dev.grpc()).isNull();
    assertThat(c.lookup(ProbeField.HTTP2_CLIENT_CONN, dev).reason()).contains("GOPATH build").contains("a development build");
    assertThat(c.lookup(ProbeField.HEADER_FIELD_SIZE, dev).value()).isNull();

    // a module build never takes the user agent
    Module main = new Module("example.com/app", "(devel)", "", Optional.empty());
    BuildInfo mod = new BuildInfo("go1.22.12", "example.com/app", Optional.of(main),
        List.of(new Module("google.golang.org/grpc", "v1.35.0", "", Optional.empty())), List.of());
    OffsetsCatalog.BinaryVersions m = OffsetsCatalog.BinaryVersions.of(mod, true,
        new io.gospan.offsets.buildinfo.GrpcUserAgent.Found("v1.33.3", "grpc-go/1.33.3", null));
    assertThat(m.grpc()).isEqualTo("v1.35.0");
    assertThat(m.grpcInferredFrom()).isNull();
    assertThat(c.lookup(ProbeField.HTTP2_CLIENT_CONN, m).inferred()).isNull();
  }

  @Test
  void theEmbeddedCatalogCoversGrpcPatchReleasesAroundAChange() {
    // issue 17: v1.34.2 lay between catalogued v1.34.0 and v1.35.0, whose http2_client_conn differ
    OffsetsCatalog c = OffsetsCatalog.embedded();
    for (String v : List.of("v1.34.1", "v1.34.2", "v1.33.3")) {
      OffsetsCatalog.Answer a = c.lookup(ProbeField.HTTP2_CLIENT_CONN, versions(v, "go1.21.13", true));
      assertThat(a.value()).as("%s: %s", v, a.reason()).isNotNull();
      assertThat(c.lookup(ProbeField.SERVER_OPERATE_HEADERS_FRAME, versions(v, "go1.16.15", false)).value()).as(v).isNotNull();
    }
  }

  @Test
  void structLayoutsNarrowGrpcToABoundedRunOfObservedReleases() throws Exception {
    String json = """
        {"format": 1, "sections": {
          "google.golang.org/grpc": {"observed": ["v1.30.0", "v1.34.0", "v1.35.0", "v1.40.0", "v1.50.0", "v1.60.0"], "fields": {
            "http2_client_conn": [{"since": "v1.30.0", "value": 72}, {"since": "v1.35.0", "value": 64}, {"since": "v1.60.0", "value": 128}],
            "http2_server_conn": [{"since": "v1.30.0", "value": 32}],
            "loopy_writer_conn": [{"since": "v1.30.0", "value": null}, {"since": "v1.50.0", "value": 80}]}},
          "arguments/register": {"observed": ["v1.30.0", "v1.40.0", "v1.60.0"], "fields": {
            "write_header_l": [{"since": "v1.30.0", "value": "reg:0"}],
            "server_operate_headers_frame": [{"since": "v1.30.0", "value": "reg:3"}, {"since": "v1.40.0", "value": "reg:5"}]}}}}
        """;
    OffsetsCatalog c = OffsetsCatalog.parse(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)));
    java.util.Map<ProbeField, java.util.OptionalLong> layout = new java.util.EnumMap<>(ProbeField.class);
    layout.put(ProbeField.HTTP2_CLIENT_CONN, java.util.OptionalLong.of(64));
    layout.put(ProbeField.HTTP2_SERVER_CONN, java.util.OptionalLong.of(32));
    layout.put(ProbeField.LOOPY_WRITER_CONN, java.util.OptionalLong.empty());
    assertThat(c.grpcRange(layout)).contains(List.of("v1.35.0", "v1.40.0"));

    BuildInfo gopath = new BuildInfo("go1.22.12", "", Optional.empty(), List.of(), List.of());
    OffsetsCatalog.BinaryVersions v = OffsetsCatalog.BinaryVersions.of(gopath, true).withGrpcRange(List.of("v1.35.0", "v1.40.0"));
    assertThat(c.lookup(ProbeField.WRITE_HEADER_L, v).value().location()).isEqualTo(ArgLocation.inRegister(0));
    assertThat(c.lookup(ProbeField.WRITE_HEADER_L, v).inferred()).contains("struct layouts").contains("v1.35.0 … v1.40.0");
    OffsetsCatalog.Answer changes = c.lookup(ProbeField.SERVER_OPERATE_HEADERS_FRAME, v);
    assertThat(changes.value()).as("reg:3 before v1.40.0, reg:5 from it: unknown inside the run").isNull();
    assertThat(changes.reason()).contains("changes inside that range");

    // the newest observed layout: a newer grpc-go cannot be ruled out
    layout.put(ProbeField.HTTP2_CLIENT_CONN, java.util.OptionalLong.of(128));
    layout.put(ProbeField.LOOPY_WRITER_CONN, java.util.OptionalLong.of(80));
    assertThat(c.grpcRange(layout)).isEmpty();
    // no observed release has this layout
    layout.put(ProbeField.HTTP2_CLIENT_CONN, java.util.OptionalLong.of(8));
    assertThat(c.grpcRange(layout)).isEmpty();
    // too few members known to say anything
    assertThat(c.grpcRange(java.util.Map.of(ProbeField.HTTP2_SERVER_CONN, java.util.OptionalLong.of(32)))).isEmpty();
  }
}
