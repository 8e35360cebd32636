package io.gospan.contractgen;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Writes {@code io.gospan.offsets.resolve.Probe} (template {@code Probe.java.mustache}): one constant per probe. */
final class ProbeWriter {

  record Constant(String name, int id, String program, String functionsDoc, String functionLiteral, String serverRef,
                  boolean lazy, boolean atReturns, boolean registerAbi, boolean inProcess, String set, String setRef,
                  boolean pastGuard, boolean records, String spansDoc, String clientSpans, String serverSpans, String sep) {}

  record Server(String name, String sep) {}

  record ProbeSet(String cName, String name, String sep) {}

  record Model(List<Constant> probes, List<ProbeSet> sets, List<Server> servers) {}

  private ProbeWriter() {}

  /** {@code sets}: the probe sets, as {@link ProbeTags#sets}. */
  static String write(List<ProbeTags.ProbeSpec> probes, List<String> sets) {
    List<Constant> constants = new ArrayList<>();
    for (int i = 0; i < probes.size(); i++) {
      ProbeTags.ProbeSpec p = probes.get(i);
      constants.add(new Constant(p.name(), p.id(), p.program(), p.function().replace("|", " | "), Template.literal(p.function()),
          p.server() == null ? "null" : "HttpServer." + p.server().toUpperCase(Locale.ROOT), p.lazy(), p.atReturns(),
          p.registerAbi(), p.inProcess(), p.set(), p.set() == null ? "null" : "ProbeSet." + p.set().toUpperCase(Locale.ROOT),
          p.pastGuard(), p.event() != null, spansDoc(p), setsOf(p.spanSets("client")), setsOf(p.spanSets("server")),
          Template.enumSeparator(i, probes.size())));
    }
    Set<String> names = new LinkedHashSet<>();
    probes.stream().filter(p -> p.server() != null).forEach(p -> names.add(p.server().toUpperCase(Locale.ROOT)));
    List<Server> servers = new ArrayList<>();
    int n = 0;
    for (String s : names) {
      servers.add(new Server(s, ++n < names.size() ? "," : ""));
    }
    List<ProbeSet> probeSets = new ArrayList<>();
    for (int i = 0; i < sets.size(); i++) {
      String name = sets.get(i).toUpperCase(Locale.ROOT);
      probeSets.add(new ProbeSet("PROBE_SET_" + name, name, i + 1 < sets.size() ? "," : ""));
    }
    return Template.render("Probe", new Model(constants, probeSets, servers));
  }

  /** "client (headers), server (streams, headers)"; null when no spans need the probe. */
  private static String spansDoc(ProbeTags.ProbeSpec p) {
    List<String> out = new ArrayList<>();
    p.spans().forEach((side, in) -> out.add(side + " (" + String.join(", ", in) + ")"));
    return out.isEmpty() ? null : String.join(", ", out);
  }

  private static String setsOf(Set<String> sets) {
    return sets.isEmpty() ? "EnumSet.noneOf(ProbeSet.class)"
        : "EnumSet.of(" + String.join(", ", sets.stream().map(s -> "ProbeSet." + s.toUpperCase(Locale.ROOT)).toList()) + ")";
  }
}
