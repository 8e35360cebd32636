package io.gospan.contractgen;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The probes of the object, from the {@code GOSPAN_*} decl tags on its programs and the values of
 * {@code enum gospan_probe} (bpf/grpc_events.h documents each tag). Fails when the tags and the
 * enum disagree: a probe id without a program, two programs for one id, a tag naming no enum
 * value, ids not 0..PROBE_COUNT-1.
 */
final class ProbeTags {

  /**
   * One probe, as its program's tags and enum gospan_probe say: {@code atReturns} from
   * GOSPAN_AT_RETURNS, {@code registerAbi} from GOSPAN_REGISTER_ABI, {@code parents} from
   * GOSPAN_PARENTS, {@code inProcess} from GOSPAN_IN_PROCESS, {@code set} from GOSPAN_SET, {@code
   * starts} (a side, lower case) from GOSPAN_STARTS, {@code rawMessage} from GOSPAN_RAW_MESSAGE,
   * {@code spans} from GOSPAN_SPANS: by side, the probe sets in which that side's spans need the probe.
   */
  record ProbeSpec(String name, int id, String program, String function, String server, String event, boolean lazy,
                   boolean atReturns, boolean registerAbi, boolean parents, boolean inProcess, String set,
                   boolean pastGuard, String starts, boolean rawMessage, Map<String, Set<String>> spans) {
    ProbeSpec(String name, int id, String program, String function, String server, String event, boolean lazy) {
      this(name, id, program, function, server, event, lazy, false, false, false, false, null, false);
    }

    ProbeSpec(String name, int id, String program, String function, String server, String event, boolean lazy,
              boolean atReturns, boolean registerAbi, boolean parents, boolean inProcess) {
      this(name, id, program, function, server, event, lazy, atReturns, registerAbi, parents, inProcess, null, false);
    }

    ProbeSpec(String name, int id, String program, String function, String server, String event, boolean lazy,
              boolean atReturns, boolean registerAbi, boolean parents, boolean inProcess, String set, boolean pastGuard) {
      this(name, id, program, function, server, event, lazy, atReturns, registerAbi, parents, inProcess, set, pastGuard, null,
          false, Map.of());
    }

    /** The probe sets in which spans of {@code side} need this probe (GOSPAN_SPANS); none: they do not. */
    Set<String> spanSets(String side) {
      return spans.getOrDefault(side, Set.of());
    }
  }

  /** The sides of a span (enum gospan_side, SIDE_ dropped, lower case: client, server). */
  static List<String> sides(Btf btf) {
    return names(btf, "gospan_side", "SIDE_");
  }

  /** The probe sets of grpc-go's transport (enum gospan_probe_set, PROBE_SET_ dropped, lower case: streams, headers). */
  static List<String> sets(Btf btf) {
    return names(btf, "gospan_probe_set", "PROBE_SET_");
  }

  private static List<String> names(Btf btf, String cEnum, String prefix) {
    List<String> out = new ArrayList<>();
    for (Btf.EnumValue v : btf.enumValues(cEnum)) {
      if (!v.name().startsWith(prefix)) {
        throw new IllegalStateException("enum " + cEnum + ": " + v.name() + " does not start with " + prefix);
      }
      out.add(v.name().substring(prefix.length()).toLowerCase(Locale.ROOT));
    }
    return out;
  }

  private ProbeTags() {}

  static List<ProbeSpec> probes(Btf btf) {
    Map<String, Integer> ids = new LinkedHashMap<>();
    int count = -1;
    for (Btf.EnumValue v : btf.enumValues("gospan_probe")) {
      if (v.name().equals("PROBE_COUNT")) {
        count = (int) v.value();
      } else {
        ids.put(v.name(), (int) v.value());
      }
    }
    if (count != ids.size() || !new TreeSet<>(ids.values()).equals(range(count))) {
      throw new IllegalStateException("enum gospan_probe: values " + ids.values() + " are not 0..PROBE_COUNT-1 (PROBE_COUNT = " + count + ")");
    }
    List<String> sets = sets(btf);
    List<String> sides = sides(btf);
    Map<Integer, ProbeSpec> byId = new TreeMap<>();
    for (Map.Entry<String, List<String>> f : btf.taggedFunctions().entrySet()) {
      Map<String, String> tags = tags(f.getValue(), f.getKey());
      if (tags.isEmpty()) {
        continue;
      }
      ProbeSpec spec = spec(f.getKey(), tags, ids, sets, sides);
      ProbeSpec before = byId.put(spec.id(), spec);
      if (before != null) {
        throw new IllegalStateException("PROBE_" + spec.name() + " is the probe of two programs: " + before.program() + " and "
            + spec.program());
      }
    }
    for (Map.Entry<String, Integer> e : ids.entrySet()) {
      if (!byId.containsKey(e.getValue())) {
        throw new IllegalStateException(e.getKey() + " has no program: tag one with GOSPAN_PROBE(" + e.getKey() + ", \"function\")");
      }
    }
    List<ProbeSpec> out = new ArrayList<>(byId.values());
    Map<String, ProbeSpec> byEvent = new HashMap<>();
    for (ProbeSpec p : out) {
      ProbeSpec first = p.event() == null ? null : byEvent.putIfAbsent(p.event(), p);
      if (first != null && (!Objects.equals(first.starts(), p.starts()) || first.rawMessage() != p.rawMessage())) {
        throw new IllegalStateException(p.program() + " and " + first.program() + " send GOSPAN_EVENT(" + p.event()
            + ") but disagree on GOSPAN_STARTS or GOSPAN_RAW_MESSAGE");
      }
    }
    return out;
  }

  /** One program's probe from its tags, checked against the enums. */
  private static ProbeSpec spec(String program, Map<String, String> tags, Map<String, Integer> ids, List<String> sets,
                                List<String> sides) {
    String probe = require(tags, "probe", program);
    Integer id = ids.get(probe);
    if (id == null) {
      throw new IllegalStateException(program + ": GOSPAN_PROBE(" + probe + ") is not a value of enum gospan_probe");
    }
    String server = tags.get("server");
    if (server != null && !server.matches("[a-z][a-z0-9_]*")) {
      throw new IllegalStateException(program + ": GOSPAN_SERVER(" + server + ") is not a lower-case identifier");
    }
    String event = tags.get("event");
    if (event != null && !event.matches("[A-Z][A-Z0-9_]*")) {
      throw new IllegalStateException(program + ": GOSPAN_EVENT(" + event + ") is not an upper-case identifier");
    }
    String set = tags.get("set");
    if (set != null && !sets.contains(set)) {
      throw new IllegalStateException(program + ": GOSPAN_SET(" + set + ") is none of " + new TreeSet<>(sets)
          + " (enum gospan_probe_set)");
    }
    String starts = tags.get("starts");
    if (starts != null && (event == null || !sides.contains(starts))) {
      throw new IllegalStateException(program + ": GOSPAN_STARTS(" + starts + ") needs a GOSPAN_EVENT and one of " + sides
          + " (enum gospan_side)");
    }
    Map<String, Set<String>> spans = spans(tags.get("spans"), set, sets, sides, program);
    if (tags.containsKey("past_guard") && tags.containsKey("at_returns")) {
      throw new IllegalStateException(program + ": GOSPAN_PAST_GUARD and GOSPAN_AT_RETURNS: one attach point per probe");
    }
    String function = require(tags, "function", program);
    for (String alt : function.split("\\|", -1)) {
      if (alt.isBlank()) {
        throw new IllegalStateException(program + ": an empty alternative in function \"" + function + "\"");
      }
    }
    return new ProbeSpec(probe.substring("PROBE_".length()), id, program, function,
        server, event, tags.containsKey("lazy"), tags.containsKey("at_returns"), tags.containsKey("register_abi"),
        tags.containsKey("parents"), tags.containsKey("in_process"), set, tags.containsKey("past_guard"), starts,
        tags.containsKey("raw_message"), spans);
  }

  /**
   * GOSPAN_SPANS("set side..."): by side, the probe sets in which that side's spans need the probe;
   * set {@code any} is every set the probe is in (all, or its GOSPAN_SET).
   */
  private static Map<String, Set<String>> spans(String tag, String probeSet, List<String> sets, List<String> sides,
                                                String program) {
    if (tag == null) {
      return Map.of();
    }
    List<String> words = List.of(tag.trim().split("[,\\s]+"));
    String set = words.get(0);
    List<String> in = set.equals("any") ? (probeSet == null ? sets : List.of(probeSet)) : List.of(set);
    if (words.size() < 2 || !sets.containsAll(in) || probeSet != null && !in.equals(List.of(probeSet))) {
      throw new IllegalStateException(program + ": GOSPAN_SPANS(" + tag + "): the first word is a probe set the probe is in "
          + "(" + (probeSet == null ? sets : List.of(probeSet)) + ", or any), then sides");
    }
    Map<String, Set<String>> out = new LinkedHashMap<>();
    for (String side : words.subList(1, words.size())) {
      if (!sides.contains(side)) {
        throw new IllegalStateException(program + ": GOSPAN_SPANS(" + tag + "): " + side + " is none of " + sides
            + " (enum gospan_side)");
      }
      out.put(side, new LinkedHashSet<>(in));
    }
    return out;
  }

  private static Set<Integer> range(int n) {
    Set<Integer> s = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      s.add(i);
    }
    return s;
  }

  private static String require(Map<String, String> tags, String key, String program) {
    String v = tags.get(key);
    if (v == null || v.isEmpty()) {
      throw new IllegalStateException(program + ": no gospan:" + key + " tag (GOSPAN_PROBE(id, function))");
    }
    return v;
  }
  /** The {@code gospan:KEY[=VALUE]} tags among {@code tags} by key (a value-less tag: ""); {@code where} names the owner in errors. */
  static Map<String, String> tags(List<String> tags, String where) {
    Map<String, String> out = new HashMap<>();
    for (String t : tags) {
      if (t.startsWith("gospan:")) {
        int eq = t.indexOf('=');
        String key = eq < 0 ? t.substring(7) : t.substring(7, eq);
        if (out.put(key, eq < 0 ? "" : t.substring(eq + 1)) != null) {
          throw new IllegalStateException(where + ": tag gospan:" + key + " given twice");
        }
      }
    }
    return out;
  }
}
