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
 * Every Java layout of the C/Java contract equals what the compiler laid out: each member's
 * offset and size is read from the BTF of the built {@code grpc.bpf.o} (via {@code bpftool btf
 * dump -j}), recursively through nested structs.
 */
class GrpcLayoutsBtfTest {

  private static final Map<Integer, JsonNode> TYPES = new HashMap<>();
  private static final Map<String, JsonNode> STRUCTS = new HashMap<>();

  @BeforeAll
  static void readBtf() throws Exception {
    Path obj = Files.createTempFile("grpc", ".bpf.o");
    try (InputStream in = GrpcLayoutsBtfTest.class.getResourceAsStream("/io/gospan/bpf/grpc.bpf.o")) {
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
