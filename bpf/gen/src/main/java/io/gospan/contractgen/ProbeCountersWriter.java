package io.gospan.contractgen;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes {@code io.gospan.receiver.probe.ProbeCounters} (template {@code ProbeCounters.java.mustache}):
 * a record with one component per value of {@code enum gospan_counter}, whose values must count from
 * 0 to {@code COUNTER_COUNT - 1}.
 */
final class ProbeCountersWriter {

  /** One counter: its component name, C name, and what follows it in the component list and in the call. */
  record Counter(String name, String cName, String componentClose, String close) {}

  record Model(List<Counter> counters) {}

  private ProbeCountersWriter() {}

  static String write(Btf btf) {
    List<String> cNames = new ArrayList<>();
    int count = -1;
    for (Btf.EnumValue v : btf.enumValues("gospan_counter")) {
      if (v.name().equals("COUNTER_COUNT")) {
        count = (int) v.value();
        continue;
      }
      if (v.value() != cNames.size()) {
        throw new IllegalStateException("enum gospan_counter: " + v.name() + " = " + v.value() + ", expected " + cNames.size());
      }
      cNames.add(v.name());
    }
    if (count != cNames.size()) {
      throw new IllegalStateException("enum gospan_counter: COUNTER_COUNT = " + count + ", " + cNames.size() + " counters");
    }
    List<Counter> counters = new ArrayList<>();
    for (int i = 0; i < cNames.size(); i++) {
      boolean last = i + 1 == cNames.size();
      counters.add(new Counter(camel(cNames.get(i).replaceFirst("^COUNTER_", "")), cNames.get(i), last ? ") {" : ",",
          last ? ");" : ","));
    }
    return Template.render("ProbeCounters", new Model(counters));
  }

  private static String camel(String upperSnake) {
    StringBuilder b = new StringBuilder();
    for (String w : upperSnake.toLowerCase(Locale.ROOT).split("_")) {
      b.append(b.length() == 0 ? w : Character.toUpperCase(w.charAt(0)) + w.substring(1));
    }
    return b.toString();
  }
}
