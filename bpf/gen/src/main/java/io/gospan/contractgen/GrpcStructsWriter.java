package io.gospan.contractgen;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes {@code io.gospan.receiver.probe.GrpcStructs} (template {@code GrpcStructs.java.mustache}):
 * per struct of the contract a class with its size, each member's offset and, for an integer
 * member, a getter and a setter in the member's BTF width. Padding members ({@code _...}) are left
 * out.
 */
final class GrpcStructsWriter {

  /** One member: {@code scalar} when it has accessors ({@code javaType}, {@code get}, {@code put}). */
  record Member(String cName, String constName, int offset, String what, boolean scalar, String javaType, String accessor,
                String get, String put, Integer count) {
    Member(String cName, String constName, int offset, String what, boolean scalar, String javaType, String accessor,
           String get, String put) {
      this(cName, constName, offset, what, scalar, javaType, accessor, get, put, null);
    }
  }

  record Struct(String cName, String className, int size, List<Member> members) {}

  record Model(List<Struct> structs) {}

  private GrpcStructsWriter() {}

  static String write(Btf btf) {
    List<Struct> structs = new ArrayList<>();
    for (JsonNode st : GrpcLayoutsWriter.structs(btf)) {
      String name = st.path("name").asText();
      List<Member> members = new ArrayList<>();
      for (Btf.Member m : btf.members(st)) {
        if (m.name().startsWith("_")) {
          continue;
        }
        members.add(member(btf, name, m));
      }
      structs.add(new Struct(name, camel(name, true), st.path("size").asInt(), members));
    }
    return Template.render("GrpcStructs", new Model(structs));
  }

  private static Member member(Btf btf, String struct, Btf.Member m) {
    JsonNode t = btf.resolve(m.typeId());
    String constName = m.name().toUpperCase(Locale.ROOT);
    String at = "at + " + m.offset();
    String kind = t.path("kind").asText();
    if (kind.equals("INT") || kind.equals("ENUM")) {
      boolean signed = t.path("encoding").asText().equals("SIGNED");
      int size = t.path("size").asInt();
      String what = (signed ? "s" : "u") + size * 8 + " at " + m.offset();
      String accessor = camel(m.name(), false);
      return switch (size) {
        case 1 -> new Member(m.name(), constName, m.offset(), what, true, "int", accessor,
            signed ? "b.get(" + at + ")" : "Byte.toUnsignedInt(b.get(" + at + "))", "b.put(" + at + ", (byte) v)");
        case 2 -> new Member(m.name(), constName, m.offset(), what, true, "int", accessor,
            signed ? "b.getShort(" + at + ")" : "Short.toUnsignedInt(b.getShort(" + at + "))", "b.putShort(" + at + ", (short) v)");
        case 4 -> new Member(m.name(), constName, m.offset(), what, true, "int", accessor, "b.getInt(" + at + ")",
            "b.putInt(" + at + ", v)");
        case 8 -> new Member(m.name(), constName, m.offset(), what, true, "long", accessor, "b.getLong(" + at + ")",
            "b.putLong(" + at + ", v)");
        default -> throw new IllegalStateException("struct " + struct + "." + m.name() + ": integer of " + size + " bytes");
      };
    }
    String what = switch (kind) {
      case "STRUCT" -> "a struct " + t.path("name").asText() + " at " + m.offset();
      case "ARRAY" -> {
        JsonNode e = btf.resolve(t.path("type_id").asInt());
        String element = e.path("kind").asText().equals("STRUCT") ? "struct " + e.path("name").asText() : e.path("size").asInt() + "-byte";
        yield t.path("nr_elems").asInt() + " " + element + " elements at " + m.offset();
      }
      default -> throw new IllegalStateException("struct " + struct + "." + m.name() + ": BTF kind " + kind + " has no Java layout");
    };
    return new Member(m.name(), constName, m.offset(), what, false, null, null, null, null,
        kind.equals("ARRAY") ? t.path("nr_elems").asInt() : null);
  }

  /** snake_case as CamelCase ({@code upper}) or camelCase. */
  private static String camel(String snake, boolean upper) {
    StringBuilder b = new StringBuilder();
    for (String w : snake.split("_")) {
      if (!w.isEmpty()) {
        b.append(b.length() == 0 && !upper ? w : Character.toUpperCase(w.charAt(0)) + w.substring(1));
      }
    }
    return b.toString();
  }
}
