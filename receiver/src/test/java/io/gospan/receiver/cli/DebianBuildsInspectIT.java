package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.DebianPackages;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code gospan inspect} on Debian's builds of etcd, etcdctl, containerd and ctr (GOPATH mode,
 * stripped: no module versions, no DWARF): grpc-go's version is inferred from its user agent and
 * equals what the packages' Built-Using field says; the grpc-go and x/net fields come from the catalog
 * at that version, each line saying so, the struct members checked against the binary's runtime type
 * information and the arguments against the functions' code; the verdict promises the spans the probes
 * give. Without their grpc-go release in the catalog, they resolve the same from their own type information
 * and code.
 */
class DebianBuildsInspectIT {

  @Test
  void debianEtcdAndContainerdGetInferredVersionsAndTheirProbes() {
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    String grpc = debian.builtUsing("etcd-server", "golang-google-grpc").orElseThrow();
    String go = debian.builtUsing("etcd-server", "golang-1.19").map(v -> "go" + v)
        .or(() -> debian.builtUsing("etcd-server", "golang-1.21").map(v -> "go" + v)).orElse("go1.");
    for (String[] b : new String[][] {
        {"etcd", "client spans, server spans"}, {"etcdctl", "client spans, no server spans"},
        {"containerd", "client spans, server spans"}, {"ctr", "client spans, server spans"}}) {
      InspectCommandIT.Result r = InspectCommandIT.inspect(debian.bin(b[0]).toString());
      String out = r.out();
      assertThat(r.exit()).as(out).isEqualTo(ExitCodes.OK);
      assertThat(out).as(b[0]).contains("modules:  none recorded (GOPATH build)")
          .contains("go:       " + go)
          .contains("grpc-go:  v" + grpc + " (inferred from grpc-go user agent grpc-go/" + grpc + ")")
          .contains("verdict:  " + b[1]);
      // each inferred field says from what, and the members were checked against the binary
      assertThat(out).containsPattern("(?m)^  http2_client_conn +\\d+ \\(catalog, inferred from grpc-go user agent grpc-go/"
          + grpc.replace(".", "\\.") + "; matches the runtime type information\\)$");
      assertThat(out).containsPattern("(?m)^  header_field_size +40 \\(catalog, inferred: x/net unknown, every catalogued x/net release .*agrees; matches the runtime type information\\)$");
      // each inferred argument location checked against its function's code (the registers its stack-growth tail saves)
      assertThat(out).containsPattern("(?m)^  close_stream_st +R\\w+ \\(catalog, inferred from grpc-go user agent grpc-go/"
          + grpc.replace(".", "\\.") + "; the function's argument spills agree\\)$");
      assertThat(out).doesNotContain("not trusted").doesNotContain("not checked");
      // the streams probe set, from the catalog by the inferred version (Go 1.19: register ABI)
      assertThat(out).as(b[0]).contains("probe set: streams\n");
      assertThat(InspectCommandIT.willAttach(out)).as(out).containsAll(
          b[1].contains("server spans") && !b[1].contains("no server")
              ? Set.of("http2_client_new_stream", "http2_client_close_stream", "http2_server_operate_headers",
                  "http2_server_write_status")
              : Set.of("http2_client_new_stream", "http2_client_close_stream"));
      // a reason shared by several fields is printed in full once, with the count, then by its tag
      java.util.regex.Matcher shared = java.util.regex.Pattern.compile("missing \\[\\d+, (\\d+) fields\\]: (.*)").matcher(out);
      int sharedReasons = 0;
      while (shared.find()) {
        String reason = shared.group(2);
        assertThat(out.lines().filter(l -> l.contains("missing") && l.contains(reason)).count())
            .as("%s printed once among the fields\n%s", reason, out).isEqualTo(1);
        sharedReasons++;
      }
      assertThat(sharedReasons).as(out).isPositive();
    }
  }

  /**
   * The same four binaries with their inferred grpc-go release removed from the catalog ({@link
   * io.gospan.offsets.catalog.OffsetsCatalog#before}, as a release newer than the catalog): every field the
   * catalog gave comes out the same from the binary's own runtime type information and code, so a Debian
   * build of a grpc-go the catalog has not observed gets the same probes.
   */
  @Test
  void withoutTheirReleaseInTheCatalogTheDebianBuildsResolveTheSameFromTheirOwnTypeInformation() throws Exception {
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    String grpc = "v" + debian.builtUsing("etcd-server", "golang-google-grpc").orElseThrow();
    io.gospan.offsets.catalog.OffsetsCatalog without = io.gospan.offsets.catalog.OffsetsCatalog.embedded().before(grpc);
    for (String name : new String[] {"etcd", "etcdctl", "containerd", "ctr"}) {
      try (io.gospan.offsets.GoBinary b = io.gospan.offsets.GoBinary.open(debian.bin(name))) {
        io.gospan.offsets.resolve.OffsetsResolution full = io.gospan.offsets.resolve.OffsetsResolver.resolve(b);
        io.gospan.offsets.resolve.OffsetsResolution own = io.gospan.offsets.resolve.OffsetsResolver.resolve(
            b, without, io.gospan.offsets.resolve.Preference.DWARF);
        assertThat(own.values()).as("%s without %s: %s", name, grpc, own.missing()).hasSameSizeAs(full.values());
        own.values().forEach((f, v) -> {
          assertThat(v.location()).as("%s %s", name, f).isEqualTo(full.values().get(f).location());
          assertThat(v.value()).as("%s %s", name, f).isEqualTo(full.values().get(f).value());
        });
        assertThat(own.attachable()).as(name).isEqualTo(full.attachable());
        assertThat(own.values().values()).as("%s: grpc-go's arguments from the code", name)
            .anyMatch(v -> v.source() == io.gospan.offsets.resolve.FieldValue.Source.CODE);
      }
    }
  }

  @Test
  void aDebianProgramWithoutAGrpcUserAgentSaysWhy() {
    // containerd's runc shim links ttrpc, not grpc-go's transport: no user agent, no transport functions
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    InspectCommandIT.Result r = InspectCommandIT.inspect(debian.bin("containerd-shim-runc-v2").toString());
    assertThat(r.exit()).as(r.out()).isEqualTo(ExitCodes.UNSUPPORTED);
    assertThat(r.out()).contains("grpc-go:  unknown: the binary has no module information (GOPATH build); no grpc-go user agent")
        .contains("verdict:  unsupported: gospan will produce no span for this binary (grpc-go unknown (no module information)): "
            + "loopy_writer_write_header refused: function google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader is not in the binary");
  }
}
