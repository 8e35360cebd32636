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
                  boolean pastGuard, boolean records, String sep) {}

  record Server(String name, String sep) {}

  record Model(List<Constant> probes, List<Server> servers) {}

  private ProbeWriter() {}

  static String write(List<ProbeTags.ProbeSpec> probes) {
    List<Constant> constants = new ArrayList<>();
    for (int i = 0; i < probes.size(); i++) {
      ProbeTags.ProbeSpec p = probes.get(i);
      constants.add(new Constant(p.name(), p.id(), p.program(), p.function().replace("|", " | "), Template.literal(p.function()),
          p.server() == null ? "null" : "HttpServer." + p.server().toUpperCase(Locale.ROOT), p.lazy(), p.atReturns(),
          p.registerAbi(), p.inProcess(), p.set(), p.set() == null ? "null" : "ProbeSet." + p.set().toUpperCase(Locale.ROOT),
          p.pastGuard(), p.event() != null, Template.enumSeparator(i, probes.size())));
    }
    Set<String> names = new LinkedHashSet<>();
    probes.stream().filter(p -> p.server() != null).forEach(p -> names.add(p.server().toUpperCase(Locale.ROOT)));
    List<Server> servers = new ArrayList<>();
    int n = 0;
    for (String s : names) {
      servers.add(new Server(s, ++n < names.size() ? "," : ""));
    }
    return Template.render("Probe", new Model(constants, servers));
  }
}
