package io.gospan.contractgen;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
   * GOSPAN_PARENTS, {@code inProcess} from GOSPAN_IN_PROCESS.
   */
  record ProbeSpec(String name, int id, String program, String function, String server, String event, boolean lazy,
                   boolean atReturns, boolean registerAbi, boolean parents, boolean inProcess, String set,
                   boolean pastGuard) {
    ProbeSpec(String name, int id, String program, String function, String server, String event, boolean lazy) {
      this(name, id, program, function, server, event, lazy, false, false, false, false, null, false);
    }

    ProbeSpec(String name, int id, String program, String function, String server, String event, boolean lazy,
              boolean atReturns, boolean registerAbi, boolean parents, boolean inProcess) {
      this(name, id, program, function, server, event, lazy, atReturns, registerAbi, parents, inProcess, null, false);
    }
  }

  /** The probe sets of grpc-go's transport a probe may be limited to (GOSPAN_SET). */
  static final Set<String> SETS = Set.of("streams", "headers");
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
    Map<Integer, ProbeSpec> byId = new TreeMap<>();
    for (Map.Entry<String, List<String>> f : btf.taggedFunctions().entrySet()) {
      Map<String, String> tags = tags(f.getValue(), f.getKey());
      if (tags.isEmpty()) {
        continue;
      }
      String program = f.getKey();
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
      if (set != null && !SETS.contains(set)) {
        throw new IllegalStateException(program + ": GOSPAN_SET(" + set + ") is none of " + new TreeSet<>(SETS));
      }
      if (tags.containsKey("past_guard") && tags.containsKey("at_returns")) {
        throw new IllegalStateException(program + ": GOSPAN_PAST_GUARD and GOSPAN_AT_RETURNS: one attach point per probe");
      }
      String function = require(tags, "function", program);
      for (String alt : function.split("\\|", -1)) {
        if (alt.isBlank()) {
          throw new IllegalStateException(program + ": an empty alternative in function \"" + function + "\"");
        }
      }
      ProbeSpec spec = new ProbeSpec(probe.substring("PROBE_".length()), id, program, function,
          server, event, tags.containsKey("lazy"), tags.containsKey("at_returns"), tags.containsKey("register_abi"),
          tags.containsKey("parents"), tags.containsKey("in_process"), set, tags.containsKey("past_guard"));
      ProbeSpec before = byId.put(id, spec);
      if (before != null) {
        throw new IllegalStateException(probe + " is the probe of two programs: " + before.program() + " and " + program);
      }
    }
    for (Map.Entry<String, Integer> e : ids.entrySet()) {
      if (!byId.containsKey(e.getValue())) {
        throw new IllegalStateException(e.getKey() + " has no program: tag one with GOSPAN_PROBE(" + e.getKey() + ", \"function\")");
      }
    }
    return new ArrayList<>(byId.values());
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
