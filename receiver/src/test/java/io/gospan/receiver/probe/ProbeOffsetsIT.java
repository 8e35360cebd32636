package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.TruthOffsets;
import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * The offsets gospan resolves with its own Java DWARF reader equal, byte for byte in
 * {@code struct go_offsets}, what Go's debug/dwarf and debug/elf give (gotruth), for the
 * register ABI (Go 1.26, 1.22) and the stack ABI (Go 1.16), old and new grpc-go.
 */
class ProbeOffsetsIT {

  static void sameAsGo(Path dir) throws Exception {
    for (String program : new String[] {"greeter-server", "greeter-client"}) {
      Path binary = dir.resolve(program);
      OffsetsResolution r;
      try (GoBinary b = GoBinary.open(binary)) {
        r = OffsetsResolver.resolve(b);
      }
      // servers also serve gRPC through net/http (-http-handler); clients have no HTTP/2 server
      if (program.equals("greeter-server")) {
        assertThat(r.attachable()).as("%s: %s", binary, r.missing()).containsExactlyInAnyOrder(Probe.values());
      } else {
        assertThat(r.attachable()).as("%s: %s", binary, r.missing()).containsAll(Probe.grpcTransport())
            .doesNotContain(Probe.XNET_PROCESS_HEADERS, Probe.NETHTTP_PROCESS_HEADERS);
      }
      assertThat(r.socketIdentity()).as("socket identity of %s", binary).isTrue();
      // a field only probes need whose functions the binary lacks (x/net's HTTP/2 server's frame
      // members in a client, which has the types but not the server) is left unresolved on purpose
      GoOffsets truth = TruthOffsets.forBinary(binary);
      for (ProbeField f : ProbeField.values()) {
        if (!f.neededBy().isEmpty() && f.neededBy().stream().noneMatch(r.functions()::containsKey)) {
          assertThat(r.values()).as("%s %s", binary, f).doesNotContainKey(f);
          truth.unset(f.cName());
        }
      }
      HexFormat hex = HexFormat.of();
      assertThat(hex.formatHex(ProbeOffsets.toGoOffsets(r).toBytes()))
          .as("struct go_offsets of %s: Java resolver vs Go's debug/dwarf", binary)
          .isEqualTo(hex.formatHex(truth.toBytes()));
    }
  }

  @Test
  void currentGoAndGrpc() throws Exception {
    sameAsGo(ExampleApps.build());
  }

  @Test
  void go122WithGrpc160() throws Exception {
    sameAsGo(ExampleApps.build("--go", "1.22.12", "--grpc", "v1.60.1"));
  }

  @Test
  void go116StackAbiWithGrpc140() throws Exception {
    sameAsGo(ExampleApps.build("--go", "1.16.15", "--grpc", "v1.40.0"));
  }

  /**
   * The stripped default build has no DWARF: every field but the GO_RTYPE members (runtime type
   * information) comes from the embedded catalog, by the grpc-go, x/net and Go versions in its build
   * info, and equals what the unstripped twin's DWARF says.
   */
  @Test
  void strippedDefaultBinaryResolvesThroughTheCatalogAndAttachesAllProbes() throws Exception {
    Path stripped = ExampleApps.build("--stripped");
    Path plain = ExampleApps.build();
    for (String program : new String[] {"greeter-server", "greeter-client"}) {
      OffsetsResolution r;
      try (GoBinary b = GoBinary.open(stripped.resolve(program))) {
        r = OffsetsResolver.resolve(b);
      }
      OffsetsResolution twin;
      try (GoBinary b = GoBinary.open(plain.resolve(program))) {
        twin = OffsetsResolver.resolve(b);
      }
      assertThat(r.functions()).as("functions come from pclntab").containsKeys(Probe.grpcTransport().toArray(new Probe[0]));
      if (program.equals("greeter-server")) {
        assertThat(r.functions()).containsOnlyKeys(Probe.values());
      }
      // the transport probes, from the catalog's stream layouts the in-process ones, and, in the server
      // (which serves through h2c and net/http too), both ServeHTTP paths' (x/net's keyed by x/net, net/http's by Go)
      java.util.Set<Probe> expected = new java.util.HashSet<>(Probe.grpcTransport());
      expected.addAll(Probe.inProcessLinking());
      if (program.equals("greeter-server")) {
        expected.addAll(java.util.Arrays.stream(Probe.values()).filter(Probe::serveHttp).toList());
      } else {
        // a client links x/net's hpack encoder: its WriteField probe resolves (deferred until a server copy runs)
        expected.addAll(java.util.Arrays.stream(Probe.values()).filter(p -> p.serveHttp() && p.lazy() && r.functions().containsKey(p)).toList());
      }
      assertThat(r.attachable()).as("%s: %s", program, r.missing()).containsExactlyInAnyOrderElementsOf(expected);
      assertThat(r.attachable()).as("%s: stripped vs its unstripped twin", program).isEqualTo(twin.attachable());
      assertThat(r.socketIdentity()).as("socket identity of stripped %s", program).isTrue();
      for (ProbeField f : ProbeField.values()) {
        if (f.runtimeTypes() && !f.catalogued()) {
          // GO_RTYPE members: the runtime type information answers what the twin's DWARF says
          FieldValue v = r.values().get(f);
          FieldValue d = twin.values().get(f);
          assertThat(d).as("%s %s in the twin's DWARF", program, f).isNotNull();
          assertThat(v).as("%s %s: %s", program, f, r.missing().get(f)).isNotNull();
          assertThat(v.source()).as("%s %s", program, f).isEqualTo(FieldValue.Source.TYPEINFO);
          assertThat(v.value()).as("%s %s", program, f).isEqualTo(d.value());
          continue;
        }
        if (!f.catalogued()) {
          continue;
        }
        FieldValue v = r.values().get(f);
        FieldValue d = twin.values().get(f);
        if (d == null) {
          assertThat(v).as("%s %s is not in the twin's DWARF either", program, f).isNull();
        } else {
          assertThat(v).as("%s %s: %s", program, f, r.missing().get(f)).isNotNull();
          assertThat(v.source()).as("%s %s", program, f).isEqualTo(FieldValue.Source.CATALOG);
          assertThat(v.location()).as("%s %s", program, f).isEqualTo(d.location());
          assertThat(v.value()).as("%s %s", program, f).isEqualTo(d.value());
        }
      }
    }
  }
}
