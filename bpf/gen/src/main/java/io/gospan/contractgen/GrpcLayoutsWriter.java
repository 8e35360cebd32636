package io.gospan.contractgen;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes {@code io.gospan.receiver.probe.GrpcLayouts} (template {@code GrpcLayouts.java.mustache}):
 * every struct {@code struct gospan_contract} reaches, member by member as the BTF lays it out, and
 * {@code enum gospan_limits}. Fails on implicit padding (declare it in C), bit fields, and member
 * types without a Java layout.
 */
final class GrpcLayoutsWriter {

  record Limit(String cName, String name, long value) {}

  record Struct(String cName, String name, int size, List<String> members) {}

  record Model(List<Limit> limits, List<Struct> structs, String all) {}

  private GrpcLayoutsWriter() {}

  /** Every struct {@code struct gospan_contract} reaches, each after the structs its members use. */
  static List<JsonNode> structs(Btf btf) {
    List<JsonNode> found = new ArrayList<>();
    for (Btf.Member m : btf.members(btf.struct("gospan_contract"))) {
      collect(btf, btf.resolve(m.typeId()), found);
    }
    return found;
  }

  static String write(Btf btf) {
    List<JsonNode> found = structs(btf);
    List<Limit> limits = new ArrayList<>();
    for (Btf.EnumValue v : btf.enumValues("gospan_limits")) {
      limits.add(new Limit(v.name(), v.name().replaceFirst("^GOSPAN_", ""), v.value()));
    }
    List<Struct> structs = new ArrayList<>();
    for (JsonNode st : found) {
      String name = st.path("name").asText();
      List<String> members = new ArrayList<>();
      int offset = 0;
      for (Btf.Member m : btf.members(st)) {
        if (m.offset() != offset) {
          throw new IllegalStateException("struct " + name + "." + m.name() + " at " + m.offset() + " follows implicit padding (at "
              + offset + "): declare the padding in C");
        }
        members.add(member(btf, name, m));
        offset += btf.sizeOf(m.typeId());
      }
      structs.add(new Struct(name, constant(name), st.path("size").asInt(), members));
    }
    return Template.render("GrpcLayouts",
        new Model(limits, structs, String.join(", ", structs.stream().map(Struct::name).toList())));
  }

  /** Post-order: a struct after the structs its members use. */
  private static void collect(Btf btf, JsonNode t, List<JsonNode> out) {
    String kind = t.path("kind").asText();
    if (kind.equals("ARRAY")) {
      collect(btf, btf.resolve(t.path("type_id").asInt()), out);
    } else if (kind.equals("STRUCT")) {
      if (out.stream().anyMatch(x -> x.path("id").asInt() == t.path("id").asInt())) {
        return;
      }
      for (Btf.Member m : btf.members(t)) {
        collect(btf, btf.resolve(m.typeId()), out);
      }
      out.add(t);
    }
  }

  private static String member(Btf btf, String struct, Btf.Member m) {
    JsonNode t = btf.resolve(m.typeId());
    String n = Template.literal(m.name());
    switch (t.path("kind").asText()) {
      case "INT", "ENUM" -> {
        boolean signed = t.path("encoding").asText().equals("SIGNED");
        return switch (t.path("size").asInt()) {
          case 1 -> ".u8(" + n + ")";
          case 2 -> ".u16(" + n + ")";
          case 4 -> (signed ? ".s32(" : ".u32(") + n + ")";
          case 8 -> ".u64(" + n + ")";
          default -> throw new IllegalStateException("struct " + struct + "." + m.name() + ": integer of " + t.path("size") + " bytes");
        };
      }
      case "STRUCT" -> {
        return ".struct(" + n + ", " + constant(t.path("name").asText()) + ")";
      }
      case "ARRAY" -> {
        JsonNode e = btf.resolve(t.path("type_id").asInt());
        int count = t.path("nr_elems").asInt();
        if (e.path("kind").asText().equals("STRUCT")) {
          return ".array(" + n + ", " + constant(e.path("name").asText()) + ", " + count + ")";
        }
        if (e.path("kind").asText().equals("INT")) {
          return ".bytes(" + n + ", " + count * e.path("size").asInt() + ")";
        }
        throw new IllegalStateException("struct " + struct + "." + m.name() + ": array of " + e.path("kind"));
      }
      default -> throw new IllegalStateException("struct " + struct + "." + m.name() + ": BTF kind " + t.path("kind")
          + " has no Java layout");
    }
  }

  private static String constant(String cName) {
    return cName.toUpperCase(Locale.ROOT);
  }
}
