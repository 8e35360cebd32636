package io.gospan.contractgen;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes {@code io.gospan.offsets.resolve.ProbeField} (template {@code ProbeField.java.mustache}): one
 * constant per Go fact of {@code struct go_offsets}.
 */
final class ProbeFieldWriter {

  record Constant(String name, String cPath, String kind, String pathDoc, boolean argument, int piece, String kindConstant,
                  String neededBy, boolean catalogued, boolean runtimeTypes, String serverRef, List<String> pathLiterals,
                  String sep) {}

  record Model(List<Constant> fields) {}

  private ProbeFieldWriter() {}

  static String write(List<GoFacts.FieldSpec> fields) {
    List<Constant> constants = new ArrayList<>();
    for (int i = 0; i < fields.size(); i++) {
      GoFacts.FieldSpec f = fields.get(i);
      String needed = f.needs().isEmpty() ? "EnumSet.noneOf(Probe.class)"
          : "EnumSet.of(" + String.join(", ", f.needs().stream().map(n -> "Probe." + n).toList()) + ")";
      constants.add(new Constant(f.name(), f.cPath(), f.kind(), String.join(" ", f.path()), f.kind().equals("arg"), f.piece(),
          kindConstant(f.kind()), needed, f.catalogued(), f.runtimeTypes(),
          f.server() == null ? "null" : "Probe.HttpServer." + f.server(), f.path().stream().map(Template::literal).toList(),
          Template.enumSeparator(i, fields.size())));
    }
    return Template.render("ProbeField", new Model(constants));
  }

  private static String kindConstant(String kind) {
    return switch (kind) {
      case "arg" -> "ARGUMENT";
      case "member" -> "MEMBER";
      case "size" -> "SIZE";
      case "pointer" -> "POINTER";
      default -> throw new IllegalArgumentException("no Go fact kind " + kind);
    };
  }
}
