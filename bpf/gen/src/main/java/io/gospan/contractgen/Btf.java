package io.gospan.contractgen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The BTF of a BPF object, as {@code bpftool -j btf dump file OBJ} prints it (bpftool's JSON
 * dumper, one object per type: id, kind, name and the kind's members). Only what the generator
 * needs: types by id, structs and enums by name, and the decl tags ({@code BTF_KIND_DECL_TAG},
 * clang's {@code btf_decl_tag}) of functions and struct members.
 */
final class Btf {

  /** A struct member: name, byte offset, BTF type id, and its decl tags. */
  record Member(String name, int offset, int typeId, List<String> tags) {}

  /** One enum value. */
  record EnumValue(String name, long value) {}

  /** A global variable of a data section: name and size in bytes. */
  record Variable(String name, int size) {}

  private final Map<Integer, JsonNode> types = new HashMap<>();
  private final Map<String, JsonNode> structs = new HashMap<>();
  private final Map<String, JsonNode> enums = new HashMap<>();
  /** Decl tags by (type id, component index); -1 is the declaration itself. */
  private final Map<Integer, Map<Integer, List<String>>> tags = new HashMap<>();
  /** Data sections (BTF_KIND_DATASEC) by name. */
  private final Map<String, JsonNode> sections = new HashMap<>();
  /** Functions (BTF_KIND_FUNC) in the object's order: name to type id. */
  private final Map<String, Integer> functions = new LinkedHashMap<>();

  private Btf(JsonNode dump) {
    for (JsonNode t : dump.path("types")) {
      int id = t.path("id").asInt();
      types.put(id, t);
      String name = t.path("name").asText();
      switch (t.path("kind").asText()) {
        case "STRUCT" -> structs.putIfAbsent(name, t);
        case "ENUM", "ENUM64" -> enums.putIfAbsent(name, t);
        case "FUNC" -> functions.putIfAbsent(name, id);
        case "DATASEC" -> sections.putIfAbsent(name, t);
        case "DECL_TAG" -> tags.computeIfAbsent(t.path("type_id").asInt(), k -> new HashMap<>())
            .computeIfAbsent(t.path("component_idx").asInt(), k -> new ArrayList<>())
            .add(name);
        default -> { }
      }
    }
  }

  /**
   * Reads the BTF of {@code object} with bpftool.
   *
   * @throws IOException when bpftool cannot be run or fails (e.g. the object has no BTF)
   */
  static Btf read(Path object, String bpftool) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(bpftool, "-j", "btf", "dump", "file", object.toString()).start();
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(bpftool + " btf dump file " + object + " failed: " + err);
    }
    return new Btf(new ObjectMapper().readTree(out));
  }

  JsonNode type(int id) {
    JsonNode t = types.get(id);
    if (t == null) {
      throw new IllegalStateException("BTF type " + id + " missing");
    }
    return t;
  }

  /** The type behind typedefs and qualifiers. */
  JsonNode resolve(int id) {
    JsonNode t = type(id);
    while (switch (t.path("kind").asText()) {
      case "TYPEDEF", "CONST", "VOLATILE", "RESTRICT", "TYPE_TAG" -> true;
      default -> false;
    }) {
      t = type(t.path("type_id").asInt());
    }
    return t;
  }

  int sizeOf(int id) {
    JsonNode t = resolve(id);
    return switch (t.path("kind").asText()) {
      case "INT", "STRUCT", "UNION", "ENUM", "ENUM64" -> t.path("size").asInt();
      case "ARRAY" -> t.path("nr_elems").asInt() * sizeOf(t.path("type_id").asInt());
      case "PTR" -> 8;
      default -> throw new IllegalStateException("no size for BTF kind " + t);
    };
  }

  JsonNode struct(String name) {
    JsonNode s = structs.get(name);
    if (s == null) {
      throw new IllegalStateException("struct " + name + " is not in the object's BTF");
    }
    return s;
  }

  List<Member> members(JsonNode struct) {
    List<Member> out = new ArrayList<>();
    Map<Integer, List<String>> byIndex = tags.getOrDefault(struct.path("id").asInt(), Map.of());
    int i = 0;
    for (JsonNode m : struct.path("members")) {
      int bits = m.path("bits_offset").asInt();
      if (bits % 8 != 0 || m.path("bitfield_size").asInt(0) != 0) {
        throw new IllegalStateException("struct " + struct.path("name").asText() + "." + m.path("name").asText()
            + " is a bit field: the contract has whole-byte members only");
      }
      out.add(new Member(m.path("name").asText(), bits / 8, m.path("type_id").asInt(), byIndex.getOrDefault(i, List.of())));
      i++;
    }
    return out;
  }

  List<EnumValue> enumValues(String name) {
    JsonNode e = enums.get(name);
    if (e == null) {
      throw new IllegalStateException("enum " + name + " is not in the object's BTF");
    }
    List<EnumValue> out = new ArrayList<>();
    for (JsonNode v : e.path("values")) {
      out.add(new EnumValue(v.path("name").asText(), v.path("val").asLong()));
    }
    return out;
  }

  /**
   * The variables of data section {@code name} (e.g. ".maps", ".rodata") in the object's order; none
   * when it has no such section.
   */
  List<Variable> section(String name) {
    List<Variable> out = new ArrayList<>();
    for (JsonNode v : sections.getOrDefault(name, NullNode.getInstance()).path("vars")) {
      out.add(new Variable(type(v.path("type_id").asInt()).path("name").asText(), v.path("size").asInt()));
    }
    return out;
  }

  /** Functions with decl tags, in the object's order, each with its tags. */
  Map<String, List<String>> taggedFunctions() {
    Map<String, List<String>> out = new LinkedHashMap<>();
    functions.forEach((name, id) -> {
      List<String> t = tags.getOrDefault(id, Map.of()).get(-1);
      if (t != null) {
        out.put(name, t);
      }
    });
    return out;
  }
}
