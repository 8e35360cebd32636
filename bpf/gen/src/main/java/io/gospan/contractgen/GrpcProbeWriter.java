package io.gospan.contractgen;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes {@code io.gospan.receiver.probe.GrpcProbe} (template {@code GrpcProbe.java.mustache}): each
 * probe's event kind ({@code GOSPAN_EVENT}) and whether it sends stream parents ({@code GOSPAN_PARENTS}).
 */
final class GrpcProbeWriter {

  record Constant(String name, String function, String eventRef, boolean parents, String sep) {}

  record Model(List<Constant> probes) {}

  private GrpcProbeWriter() {}

  static String write(List<ProbeTags.ProbeSpec> probes) {
    List<Constant> constants = new ArrayList<>();
    for (int i = 0; i < probes.size(); i++) {
      ProbeTags.ProbeSpec p = probes.get(i);
      constants.add(new Constant(p.name(), p.function(), p.event() == null ? "null" : "ProbeKind." + p.event(), p.parents(),
          Template.enumSeparator(i, probes.size())));
    }
    return Template.render("GrpcProbe", new Model(constants));
  }
}
