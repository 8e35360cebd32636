package io.gospan.contractgen;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes {@code io.gospan.receiver.event.ProbeKind} (template {@code ProbeKind.java.mustache}): one
 * constant per {@code GOSPAN_EVENT} kind, in the order of the first probe sending it, with the side
 * whose span it starts ({@code GOSPAN_STARTS}) and whether its message is raw ({@code
 * GOSPAN_RAW_MESSAGE}); {@link ProbeTags} checks the probes sending one kind agree.
 */
final class ProbeKindWriter {

  record Kind(String name, String functions, String starts, String startsRef, boolean rawMessage, String sep) {}

  record Model(List<Kind> kinds) {}

  private ProbeKindWriter() {}

  static String write(List<ProbeTags.ProbeSpec> probes) {
    Map<String, List<ProbeTags.ProbeSpec>> byKind = new LinkedHashMap<>();
    for (ProbeTags.ProbeSpec p : probes) {
      if (p.event() != null) {
        byKind.computeIfAbsent(p.event(), k -> new ArrayList<>()).add(p);
      }
    }
    List<Kind> kinds = new ArrayList<>();
    int i = 0;
    for (Map.Entry<String, List<ProbeTags.ProbeSpec>> e : byKind.entrySet()) {
      ProbeTags.ProbeSpec first = e.getValue().get(0);
      String functions = String.join(", ", e.getValue().stream().map(p -> p.function().replace("|", " | ")).toList());
      kinds.add(new Kind(e.getKey(), functions, first.starts(),
          first.starts() == null ? "null" : "Side." + first.starts().toUpperCase(Locale.ROOT), first.rawMessage(),
          Template.enumSeparator(i++, byKind.size())));
    }
    return Template.render("ProbeKind", new Model(kinds));
  }
}
