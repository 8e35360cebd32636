package io.gospan.contractgen;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes {@code io.gospan.receiver.probe.GrpcConstants} (template {@code GrpcConstants.java.mustache}):
 * the values of the enums of {@code struct gospan_contract} but the probes and limits, named as in C.
 */
final class GrpcConstantsWriter {

  record Value(String name, long value) {}

  record Enum(String cName, List<Value> values) {}

  record Model(List<Enum> enums) {}

  private GrpcConstantsWriter() {}

  static String write(Btf btf) {
    List<Enum> enums = new ArrayList<>();
    for (Btf.Member m : btf.members(btf.struct("gospan_contract"))) {
      JsonNode t = btf.resolve(m.typeId());
      String name = t.path("name").asText();
      if (!t.path("kind").asText().equals("ENUM") || name.equals("gospan_probe") || name.equals("gospan_limits")) {
        continue;
      }
      enums.add(new Enum(name, btf.enumValues(name).stream().map(v -> new Value(v.name(), v.value())).toList()));
    }
    return Template.render("GrpcConstants", new Model(enums));
  }
}
