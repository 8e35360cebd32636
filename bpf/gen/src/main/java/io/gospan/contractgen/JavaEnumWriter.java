package io.gospan.contractgen;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a Java enum per member of {@code struct gospan_contract} tagged {@code
 * GOSPAN_JAVA_ENUM(class, prefix)} (template {@code JavaEnum.java.mustache}): one constant per value
 * of the member's C enum, named as the value without the prefix, with its value ({@code value()},
 * {@code of(int)}).
 */
final class JavaEnumWriter {

  record Value(String cName, String name, long value, String sep) {}

  record Model(String packageName, String simpleName, String cEnum, String prefix, List<Value> values) {}

  private JavaEnumWriter() {}

  /** The enums whose class is in a package under {@code packagePrefix} (e.g. "io.gospan.receiver."), by relative path. */
  static Map<String, String> write(Btf btf, String packagePrefix) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Btf.Member m : btf.members(btf.struct("gospan_contract"))) {
      String tag = ProbeTags.tags(m.tags(), "struct gospan_contract." + m.name()).get("java_enum");
      if (tag == null) {
        continue;
      }
      String where = "struct gospan_contract." + m.name() + ": GOSPAN_JAVA_ENUM(" + tag + ")";
      String[] words = tag.trim().split("\\s+");
      JsonNode t = btf.resolve(m.typeId());
      if (words.length != 2 || !words[0].matches("([a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9]*") || !t.path("kind").asText().equals("ENUM")) {
        throw new IllegalStateException(where + ": (\"package.Class\", PREFIX_) on an enum member");
      }
      String className = words[0];
      if (!className.startsWith(packagePrefix)) {
        continue;
      }
      String cEnum = t.path("name").asText();
      List<Btf.EnumValue> cValues = btf.enumValues(cEnum);
      List<Value> values = new ArrayList<>();
      for (int i = 0; i < cValues.size(); i++) {
        Btf.EnumValue v = cValues.get(i);
        if (!v.name().startsWith(words[1]) || !v.name().substring(words[1].length()).matches("[A-Z][A-Z0-9_]*")) {
          throw new IllegalStateException(where + ": " + v.name() + " does not start with " + words[1] + " and a letter");
        }
        values.add(new Value(v.name(), v.name().substring(words[1].length()), v.value(), Template.enumSeparator(i, cValues.size())));
      }
      int dot = className.lastIndexOf('.');
      out.put(className.replace('.', '/') + ".java", Template.render("JavaEnum",
          new Model(className.substring(0, dot), className.substring(dot + 1), cEnum, words[1], values)));
    }
    return out;
  }
}
