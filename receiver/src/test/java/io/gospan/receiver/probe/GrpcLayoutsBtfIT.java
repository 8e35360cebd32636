package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gospan.receiver.bpf.StructLayout;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The generated Java side of the C contract (bpf/gen) agrees with the built {@code grpc.bpf.o}:
 * every layout equals what the compiler laid out (each member's offset and size read from the
 * object's BTF via {@code bpftool btf dump -j}, recursively through nested structs), every probe
 * has its program in the object, and the offsets module's facts ({@code ProbeField}) are the
 * leaves of {@code struct go_offsets}, each of the kind its member holds. An integration test: it
 * runs {@code bpftool}.
 */
class GrpcLayoutsBtfIT {

  private static final Map<Integer, JsonNode> TYPES = new HashMap<>();
  private static final Map<String, JsonNode> STRUCTS = new HashMap<>();

  @BeforeAll
  static void readBtf() throws Exception {
    Path obj = Files.createTempFile("grpc", ".bpf.o");
    try (InputStream in = GrpcLayoutsBtfIT.class.getResourceAsStream("/io/gospan/bpf/grpc.bpf.o")) {
      assertThat(in).as("grpc.bpf.o on the class path (built by make -C bpf)").isNotNull();
      Files.write(obj, in.readAllBytes());
    }
    Process p =
        new ProcessBuilder("bpftool", "-j", "btf", "dump", "file", obj.toString()).start();
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("bpftool btf dump: " + err).isZero();
    Files.delete(obj);
    for (JsonNode t : new ObjectMapper().readTree(out).path("types")) {
      TYPES.put(t.path("id").asInt(), t);
      if ("STRUCT".equals(t.path("kind").asText())) {
        STRUCTS.put(t.path("name").asText(), t);
      }
    }
  }

  @Test
  void everyLayoutMatchesTheBtfOfTheBuiltObject() {
    for (StructLayout layout : GrpcLayouts.all()) {
      check(layout);
    }
  }

  @Test
  void everyProbeIsAProgramOfTheObjectAndEveryRecordKindHasAProbe() {
    java.util.Set<String> programs = new java.util.HashSet<>();
    for (JsonNode t : TYPES.values()) {
      if ("FUNC".equals(t.path("kind").asText())) {
        programs.add(t.path("name").asText());
      }
    }
    for (GrpcProbe p : GrpcProbe.values()) {
      assertThat(programs).as("program of %s", p).contains(p.program());
      assertThat(GrpcProbe.ofId(p.id())).isSameAs(p);
      assertThat(p.probe().id()).isEqualTo(p.id());
    }
    java.util.Set<io.gospan.receiver.event.ProbeKind> kinds = java.util.EnumSet.noneOf(io.gospan.receiver.event.ProbeKind.class);
    for (GrpcProbe p : GrpcProbe.values()) {
      if (p.eventKind() != null) {
        kinds.add(p.eventKind());
      }
    }
    assertThat(kinds).as("record kinds some probe sends").containsExactlyInAnyOrder(io.gospan.receiver.event.ProbeKind.values());
  }

  @Test
  void everyProbeFieldIsALeafOfGoOffsetsAndEveryLeafAProbeField() {
    java.util.Map<String, Boolean> leaves = new java.util.LinkedHashMap<>(); // name -> is a struct go_loc
    for (StructLayout.Field f : GrpcLayouts.GO_OFFSETS.fields()) {
      if (f.name().startsWith("_")) {
        continue;
      }
      if (f.struct() != null && f.struct() != GrpcLayouts.GO_LOC) {
        for (StructLayout.Field g : f.struct().fields()) {
          if (!g.name().startsWith("_")) {
            leaves.put(f.name() + "_" + g.name(), g.struct() == GrpcLayouts.GO_LOC);
          }
        }
      } else {
        leaves.put(f.name(), f.struct() == GrpcLayouts.GO_LOC);
      }
    }
    java.util.Map<String, Boolean> fields = new java.util.LinkedHashMap<>();
    for (io.gospan.offsets.resolve.ProbeField f : io.gospan.offsets.resolve.ProbeField.values()) {
      fields.put(f.cName(), f.kind() == io.gospan.offsets.resolve.ProbeField.Kind.ARGUMENT);
    }
    assertThat(fields).containsExactlyEntriesOf(leaves);
    // and the value user space writes has every one of them
    byte[] bytes = new GoOffsets().toBytes();
    assertThat(bytes).hasSize(GrpcLayouts.GO_OFFSETS.size());
  }

  private static void check(StructLayout layout) {
    JsonNode s = STRUCTS.get(layout.name());
    assertThat(s).as("struct %s in the object's BTF", layout.name()).isNotNull();
    assertThat(s.path("size").asInt()).as("sizeof(struct %s)", layout.name()).isEqualTo(layout.size());
    JsonNode members = s.path("members");
    assertThat(members.size()).as("member count of struct %s", layout.name()).isEqualTo(layout.fields().size());
    int i = 0;
    for (StructLayout.Field f : layout.fields()) {
      JsonNode m = members.get(i++);
      String where = "struct " + layout.name() + "." + f.name();
      assertThat(m.path("name").asText()).as(where + " name, in order").isEqualTo(f.name());
      assertThat(m.path("bits_offset").asInt()).as(where + " offset (bits)").isEqualTo(f.offset() * 8);
      assertThat(sizeOf(m.path("type_id").asInt())).as(where + " size").isEqualTo(f.size());
      if (f.struct() != null) {
        check(f.struct());
      }
    }
  }

  private static int sizeOf(int typeId) {
    JsonNode t = TYPES.get(typeId);
    switch (t.path("kind").asText()) {
      case "INT":
      case "STRUCT":
      case "UNION":
      case "ENUM":
        return t.path("size").asInt();
      case "TYPEDEF":
      case "CONST":
      case "VOLATILE":
        return sizeOf(t.path("type_id").asInt());
      case "ARRAY":
        return t.path("nr_elems").asInt() * sizeOf(t.path("type_id").asInt());
      case "PTR":
        return 8;
      default:
        throw new AssertionError("unexpected BTF kind " + t);
    }
  }
}
