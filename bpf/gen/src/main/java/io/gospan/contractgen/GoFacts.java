package io.gospan.contractgen;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The Go facts user space resolves per binary: the leaf members of {@code struct go_offsets}, each
 * with its {@code GO_*} decl tags (bpf/grpc_events.h documents them), a server copy's members
 * ({@code GO_COPY}) under the copy's name.
 */
final class GoFacts {

  private GoFacts() {}

  /**
   * One leaf member of {@code struct go_offsets} and the Go fact it holds, from its {@code GO_*}
   * tags: the enum constant's name (the C path, upper case), kind, Go path, argument word, the
   * probes that need it (their Java names; empty: optional), whether the catalog covers it, and
   * the HTTP/2 server copy it belongs to.
   */
  record FieldSpec(String name, String cPath, String kind, List<String> path, int piece, List<String> needs, boolean catalogued,
                   boolean runtimeTypes, String server) {}

  /** A server copy's substitutions, from the GO_COPY tag on a member of struct go_offsets. */
  private record Copy(String name, Map<String, String> vars) {}

  static List<FieldSpec> fields(Btf btf, List<ProbeTags.ProbeSpec> probes) {
    Set<String> probeNames = new LinkedHashSet<>();
    probes.forEach(p -> probeNames.add("PROBE_" + p.name()));
    List<FieldSpec> out = new ArrayList<>();
    walk(btf, btf.struct("go_offsets"), "", null, true, probeNames, out);
    return out;
  }

  private static void walk(Btf btf, JsonNode struct, String prefix, Copy copy, boolean catalogued, Set<String> probes,
                           List<FieldSpec> out) {
    for (Btf.Member m : btf.members(struct)) {
      if (m.name().startsWith("_")) {
        continue; // padding
      }
      String where = "struct " + struct.path("name").asText() + "." + m.name();
      Map<String, String> tags = ProbeTags.tags(m.tags(), where);
      boolean cat = catalogued && !tags.containsKey("uncatalogued");
      JsonNode t = btf.resolve(m.typeId());
      if (tags.containsKey("copy")) {
        String[] parts = tags.get("copy").split(";", -1);
        if (parts.length != 4 || !t.path("kind").asText().equals("STRUCT")) {
          throw new IllegalStateException(where + ": GO_COPY(name, http2, hpack, embed) on a struct member");
        }
        Copy c = new Copy(parts[0].strip(), Map.of("{http2}", parts[1].strip(), "{hpack}", parts[2].strip(), "{embed}", parts[3].strip()));
        walk(btf, t, prefix + m.name() + "_", c, cat, probes, out);
        continue;
      }
      String name = (prefix + m.name()).toUpperCase(Locale.ROOT);
      List<String> kinds = new ArrayList<>();
      for (String k : List.of("arg", "member", "size", "pointer")) {
        if (tags.containsKey(k)) {
          kinds.add(k);
        }
      }
      if (kinds.size() != 1) {
        throw new IllegalStateException(where + ": needs exactly one of GO_ARG, GO_MEMBER, GO_SIZE, GO_POINTER, has " + kinds);
      }
      String kind = kinds.get(0);
      List<String> words = List.of(subst(tags.get(kind), copy).trim().split("\\s+"));
      List<String> needs = new ArrayList<>();
      List<String> path;
      int piece = 0;
      if (kind.equals("arg")) {
        if (words.size() != 3) {
          throw new IllegalStateException(where + ": GO_ARG(probe, \"param\", word)");
        }
        needs.add(probe(words.get(0), copy, probes, where));
        path = List.of(words.get(1));
        piece = Integer.parseInt(words.get(2));
        if (tags.containsKey("needs")) {
          throw new IllegalStateException(where + ": GO_ARG is needed by its probe only; no GO_NEEDS");
        }
      } else {
        path = words;
        if ((kind.equals("member") && (path.size() < 2 || path.size() % 2 != 0)) || (kind.equals("pointer") && path.size() != 2)
            || (!kind.equals("member") && !kind.equals("pointer") && path.size() != 1)) {
          throw new IllegalStateException(where + ": bad Go path " + path);
        }
        if (tags.containsKey("needs")) {
          for (String p : tags.get("needs").split("[,\\s]+")) {
            if (!p.isEmpty()) {
              needs.add(probe(p, copy, probes, where));
            }
          }
        }
      }
      boolean rtype = tags.containsKey("rtype");
      if (rtype && !kind.equals("member")) {
        throw new IllegalStateException(where + ": GO_RTYPE is for a GO_MEMBER");
      }
      boolean location = t.path("kind").asText().equals("STRUCT") && t.path("name").asText().equals("go_loc");
      if (location != kind.equals("arg")) {
        throw new IllegalStateException(where + ": a struct go_loc holds a GO_ARG, anything else an offset, size or address");
      }
      out.add(new FieldSpec(name, prefix.isEmpty() ? m.name() : prefix.replaceAll("_$", ".") + m.name(), kind, path, piece, needs, cat,
          rtype, copy == null ? null : copy.name()));
    }
  }

  private static String subst(String s, Copy copy) {
    if (copy != null) {
      for (Map.Entry<String, String> v : copy.vars().entrySet()) {
        s = s.replace(v.getKey(), v.getValue());
      }
    }
    if (s.contains("{")) {
      throw new IllegalStateException("unreplaced variable in " + s + (copy == null ? " (outside a GO_COPY member)" : ""));
    }
    return s;
  }

  /** A probe's Java name from its C name; PROBE_COPY_ names the copy's probe. */
  private static String probe(String cName, Copy copy, Set<String> probes, String where) {
    String c = copy == null ? cName : cName.replace("PROBE_COPY_", "PROBE_" + copy.name() + "_");
    if (!probes.contains(c)) {
      throw new IllegalStateException(where + ": " + c + " is not a probe (enum gospan_probe with a program)");
    }
    return c.substring("PROBE_".length());
  }
}
