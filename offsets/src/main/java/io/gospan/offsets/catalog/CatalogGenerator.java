package io.gospan.offsets.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.code.ArgumentSpills;
import io.gospan.offsets.dwarf.FunctionParameters;
import io.gospan.offsets.resolve.ArgumentLayout;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Builds the offsets catalog from observed builds. {@code offsets/generate-catalog.sh} drives it:
 *
 * <pre>
 * CatalogGenerator extract BINARY OUT.json       read one built probe program's DWARF into OUT.json
 * CatalogGenerator extract-all CACHE             the same for every CACHE/build/KEY without CACHE/KEY.json
 * CatalogGenerator failed OUT.json KEY REASON    record a combination that did not build
 * CatalogGenerator merge CACHE CATALOG DOC       merge CACHE/*.json into the catalog and docs/compatibility.md
 *                                                (with CACHE/verify/*.json, what verify-stripped found)
 * CatalogGenerator verify-stripped STRIPPED OBS.json CATALOG [RESULT.json]
 *                                                check a stripped build against the catalog and, without its
 *                                                release, against its own type information ({@link #verifyStripped})
 * </pre>
 *
 * KEY is {@code <grpc>-go<go>[-xnet<x/net>]}, e.g. {@code v1.60.1-go1.21.13}. Values are read with
 * {@link OffsetsResolver} from DWARF only (an empty catalog), so the catalog holds exactly what the
 * inspector reads from an unstripped binary.
 */
public final class CatalogGenerator {
  private static final ObjectMapper JSON = new ObjectMapper();

  private CatalogGenerator() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      usage();
    }
    switch (args[0]) {
      case "extract":
        if (args.length != 3) {
          usage();
        }
        write(Path.of(args[2]), observe(Path.of(args[1]), keyOf(Path.of(args[2]))));
        break;
      case "extract-all":
        if (args.length != 2) {
          usage();
        }
        extractAll(Path.of(args[1]));
        break;
      case "failed":
        if (args.length != 4) {
          usage();
        }
        write(Path.of(args[1]), failure(args[2], args[3]));
        break;
      case "merge":
        if (args.length != 4) {
          usage();
        }
        List<JsonNode> observations = readCache(Path.of(args[1]));
        ObjectNode catalog = merge(observations);
        Files.createDirectories(Path.of(args[2]).toAbsolutePath().getParent());
        Files.writeString(Path.of(args[2]), render(catalog));
        Path verified = Path.of(args[1]).resolve("verify");
        Files.writeString(Path.of(args[3]), compatibility(observations, catalog,
            Files.isDirectory(verified) ? readCache(verified) : List.of()));
        System.err.println("catalog: " + count(observations, "ok") + " builds observed, " + count(observations, "failed")
            + " failed; wrote " + args[2] + " and " + args[3]);
        break;
      case "verify-stripped":
        if (args.length != 4 && args.length != 5) {
          usage();
        }
        JsonNode observation = JSON.readTree(Path.of(args[2]).toFile());
        Verification ver = verifyStripped(Path.of(args[1]), observation, OffsetsCatalog.load(Path.of(args[3])));
        if (args.length == 5) {
          ObjectNode result = JsonNodeFactory.instance.objectNode();
          result.put("key", observation.path("key").asText());
          result.put("abi", observation.path("abi").asText());
          ver.wrong().forEach(result.putArray("wrong")::add);
          ver.refused().forEach(result.putArray("refused")::add);
          write(Path.of(args[4]), result);
        }
        ver.wrong().forEach(w -> System.out.println("WRONG " + w));
        ver.refused().forEach(w -> System.out.println("refused " + w));
        if (!ver.wrong().isEmpty()) {
          System.exit(1);
        }
        break;
      default:
        usage();
    }
  }

  private static void usage() {
    System.err.println("usage: CatalogGenerator extract BINARY OUT.json | extract-all CACHE | failed OUT.json KEY REASON"
        + " | merge CACHE CATALOG.json COMPATIBILITY.md | verify-stripped STRIPPED_BINARY OBSERVATION.json CATALOG.json [RESULT.json]");
    System.exit(2);
  }

  /**
   * Checks a stripped build against the catalog, two ways, each field against what the observation of its
   * unstripped twin read from DWARF ({@link #observe}):
   *
   * <ul>
   *   <li>resolved through {@code catalog} (no DWARF), every catalogued field must equal it;
   *   <li>resolved through {@code catalog} without the build's grpc-go release and later ones ({@link
   *       OffsetsCatalog#before}: as if the release were newer than the catalog), every field must equal it
   *       too, now from the binary's own runtime type information and code; a field may be missing only when
   *       it is an argument of a function whose argument layout differs from every one the truncated catalog
   *       offers (the function's parameters changed in that release: nothing in a stripped binary names
   *       them), which is reported ({@link Verification#refused()}), not counted wrong.
   * </ul>
   *
   * @return what disagrees, and which fields the type information could not give, and why
   */
  public static Verification verifyStripped(Path stripped, JsonNode observation, OffsetsCatalog catalog) throws IOException {
    List<String> wrong = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    String grpc = observation.path("grpc").asText(null);
    OffsetsCatalog before = grpc == null ? OffsetsCatalog.empty() : catalog.before(grpc);
    OffsetsResolution r;
    OffsetsResolution own;
    boolean register;
    try (GoBinary b = GoBinary.open(stripped)) {
      r = OffsetsResolver.resolve(b, catalog, Preference.DWARF);
      own = OffsetsResolver.resolve(b, before, Preference.DWARF);
      register = b.usesRegisterAbi();
    }
    OffsetsCatalog.BinaryVersions versions = new OffsetsCatalog.BinaryVersions(grpc, observation.path("xnet").asText(null),
        observation.path("go").asText(), register, Map.of());
    for (ProbeField f : ProbeField.values()) {
      JsonNode observed = observation.path("fields").get(f.cName());
      if (observed == null || !f.catalogued()) {
        continue;
      }
      String fromDwarf = observed.isNull() ? "null" : observed.asText();
      FieldValue v = r.values().get(f);
      String fromCatalog = v == null ? "null (" + r.missing().get(f) + ")" : String.valueOf(OffsetsCatalog.encode(v));
      if (v == null ? !observed.isNull() : !fromCatalog.equals(fromDwarf)) {
        wrong.add(f.cName() + ": catalog " + fromCatalog + ", DWARF " + fromDwarf);
      }
      if (grpc == null || f.kind() == ProbeField.Kind.ARGUMENT && !register) {
        continue; // the stack ABI's argument slots are not in a stripped binary's code
      }
      FieldValue t = own.values().get(f);
      if (t == null && !observed.isNull()) {
        if (f.kind() == ProbeField.Kind.ARGUMENT && layoutChanged(f.probe(), observation, before, versions)) {
          refused.add(f.cName() + ": " + own.missing().get(f));
        } else {
          wrong.add(f.cName() + ": without " + grpc + " in the catalog, missing (" + own.missing().get(f) + "), DWARF " + fromDwarf);
        }
      } else if (t != null && !String.valueOf(OffsetsCatalog.encode(t)).equals(fromDwarf)) {
        wrong.add(f.cName() + ": without " + grpc + " in the catalog, " + t + ", DWARF " + fromDwarf);
      }
    }
    return new Verification(wrong, refused);
  }

  /**
   * What {@link #verifyStripped} found.
   *
   * @param wrong one line per field that disagrees with DWARF ("field: catalog X, DWARF Y"), or that the binary's
   *     type information should have given and did not
   * @param refused arguments the type information did not give because their function's parameters changed in
   *     that release, with the reason
   */
  public record Verification(List<String> wrong, List<String> refused) {}

  /** Whether a function's layout in the observed build equals none the catalog offers for its versions. */
  private static boolean layoutChanged(Probe probe, JsonNode observation, OffsetsCatalog catalog, OffsetsCatalog.BinaryVersions v) {
    JsonNode l = observation.path("layouts").get(OffsetsCatalog.layoutField(probe));
    if (l == null || !l.isTextual()) {
      return false;
    }
    List<ArgumentLayout.Word> built = ArgumentLayout.parse(l.asText()).registerWords();
    return catalog.layouts(probe, v).stream().noneMatch(c -> c.layout().registerWords().equals(built));
  }

  private static String keyOf(Path json) {
    String n = json.getFileName().toString();
    return n.endsWith(".json") ? n.substring(0, n.length() - 5) : n;
  }

  /** For every built combination in CACHE/build without a result, extracts (or records its failure). */
  public static void extractAll(Path cache) throws IOException {
    Path build = cache.resolve("build");
    if (!Files.isDirectory(build)) {
      return;
    }
    List<Path> dirs;
    try (Stream<Path> s = Files.list(build)) {
      dirs = s.sorted().toList();
    }
    for (Path dir : dirs) {
      String key = dir.getFileName().toString();
      Path out = cache.resolve(key + ".json");
      if (Files.exists(out)) {
        continue;
      }
      if (Files.exists(dir.resolve(".done"))) {
        write(out, observe(dir.resolve("probe"), key));
        System.err.println("extracted " + key);
      } else if (Files.exists(dir.resolve(".failed"))) {
        List<String> log = Files.readAllLines(dir.resolve("build.log"));
        write(out, failure(key, log.isEmpty() ? "unknown" : log.get(log.size() - 1)));
        System.err.println("failed " + key);
      }
    }
  }

  /** docs/compatibility.md: how connections are identified, what is not, and why. */
  static final String CONNECTIONS = "## Connections: linking client and server spans by socket\n\n"
      + "A client span and a server span are linked when both ends' sockets mirror each other. The socket is\n"
      + "found from the `net.Conn` grpc-go holds, through the binary's **connection types**, read from its\n"
      + "runtime type information (every Go binary has it, stripped or not; `gospan inspect` lists them under\n"
      + "`connections:`): every type the program stores in a `net.Conn` (or a wider interface) is followed\n"
      + "through its fields to the `*net.netFD` of a `*net.TCPConn` or `*net.UnixConn`.\n\n"
      + "| connection | how | tested by |\n|---|---|---|\n"
      + "| TCP, IPv4 and IPv6 | the 4-tuple | every IT |\n"
      + "| TLS (`crypto/tls.Conn`, grpc-go's `syscallConn`) | unwrapped | `RouteGuideIT` (TLS), `GrpcProbesIT` |\n"
      + "| cmux's `MuxConn` (etcd), h2c's `bufConn`, any wrapper holding a `net.Conn`, a pointer to a connection, a"
      + " connection by value, or a one-pointer struct stored in the interface word | unwrapped, at most 6 hops |"
      + " `DebianEtcdIT`, `ServeHttpIT`, `ConnectionWrappersIT`, `ConnTypesIT` |\n"
      + "| unix domain sockets (containerd/ctr) | the socket's inode and its peer's; `network.transport=unix`, the"
      + " socket's path | `DebianContainerdIT` |\n"
      + "| position-independent executables (`-buildmode=pie`) | itabs and read-only data compared less each"
      + " process's load bias | `RouteGuideIT` (stripped PIE) |\n\n"
      + "Not identified (the span says why in `gospan.connection.unidentified`, and is linked only by\n"
      + "`traceparent`): connections that are no socket (`net.Pipe`, grpc's `bufconn`, a user-space\n"
      + "transport); a chain of more than 6 wrappers; more than 32 connection types in one binary (the\n"
      + "standard library's and grpc-go's kept first; `inspect` lists the others); a binary whose runtime type\n"
      + "information cannot be read (a development toolchain). A wrapper holding two connections (a proxy's\n"
      + "two ends) is followed through its first one. Both ends must be traced by the same gospan, in the same\n"
      + "network view (a NATed address does not mirror); unix sockets on the same host.\n\n";

  /** docs/compatibility.md: the real programs the acceptance tests trace. */
  static final String REAL_PROGRAMS = "## Real programs tested\n\n"
      + "Programs nobody here wrote, built by the project's scripts (`scripts/fetch-debian-packages.sh`,\n"
      + "`scripts/build-route-guide.sh`), traced with real BPF: client and server spans, linking, status codes.\n\n"
      + "| program | build | offsets | test |\n|---|---|---|---|\n"
      + "| Debian 12 etcd 3.4 + etcdctl (short-lived), gRPC served through cmux | GOPATH, stripped, Go 1.19.8,"
      + " grpc-go 1.33.3 | catalog, inferred from the user agent | `DebianEtcdIT`, `DebianBuildsInspectIT` |\n"
      + "| Debian 12 containerd 1.6 + ctr (short-lived), unix socket | GOPATH, stripped, Go 1.19.8, grpc-go 1.33.3"
      + " | catalog, inferred | `DebianContainerdIT` |\n"
      + "| grpc-go's route_guide server + client (short-lived: 5 calls of all four kinds in ~15 ms), TLS |"
      + " module proxy, Go 1.26.8, grpc-go 1.85.0 | DWARF | `RouteGuideIT` |\n"
      + "| the same, `-buildmode=pie -ldflags=-s -w` | | catalog | `RouteGuideIT` |\n"
      + "| grpc-go patch releases v1.34.2 (Go 1.16, stack ABI), v1.63.2 (Go 1.22), v1.74.3 (Go 1.26), stripped"
      + " | module proxy | catalog = DWARF of the unstripped twin | `CatalogPatchReleasesIT` |\n\n"
      + "| grpc-go's route_guide, `-buildmode=pie -ldflags=-s -w`, with its grpc-go release removed from the catalog"
      + " (as a release newer than this gospan) | | runtime type information and code | `NewerThanCatalogIT`,"
      + " `InspectNewerThanCatalogIT` |\n\n"
      + "Remaining limits: the first run of a short-lived program gospan has never seen is missed (docs/limits.md,"
      + " \"Limits\"); a stripped binary of a release the catalog does not cover loses the probes of a function"
      + " whose parameters changed in it (`gospan inspect` says which), and stack-ABI arguments (Go ≤ 1.16) come"
      + " from the catalog only.\n\n";

  /** What one unstripped build says about every catalogued field (DWARF only). */
  public static ObjectNode observe(Path binary, String key) throws IOException {
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    o.put("key", key);
    try (GoBinary b = GoBinary.open(binary)) {
      BuildInfo info = b.buildInfo();
      OffsetsResolution r = OffsetsResolver.resolve(b, OffsetsCatalog.empty(), Preference.DWARF);
      o.put("status", "ok");
      o.put("go", info.goVersion());
      o.put("abi", b.usesRegisterAbi() ? "register" : "stack");
      OffsetsCatalog.BinaryVersions v = OffsetsCatalog.BinaryVersions.of(info, b.usesRegisterAbi());
      o.put("grpc", v.grpc());
      o.put("xnet", v.xnet());
      ObjectNode fields = o.putObject("fields");
      ObjectNode missing = o.putObject("missing");
      for (ProbeField f : ProbeField.values()) {
        if (!f.catalogued()) {
          continue;
        }
        FieldValue fv = r.values().get(f);
        if (fv != null) {
          fields.putPOJO(f.cName(), OffsetsCatalog.encode(fv));
        } else {
          fields.putNull(f.cName());
          missing.put(f.cName(), r.missing().get(f));
        }
      }
      ArrayNode fns = o.putArray("functions");
      for (Probe p : r.functions().keySet()) {
        fns.add(p.name());
      }
      if (b.usesRegisterAbi()) {
        // each probed function's argument layout: DWARF's names and types, the ABI's registers, the code's spills
        ObjectNode layouts = o.putObject("layouts");
        ObjectNode layoutsMissing = o.putObject("layouts_missing");
        for (Map.Entry<Probe, io.gospan.offsets.GoFunction> e : r.functions().entrySet()) {
          String field = OffsetsCatalog.layoutField(e.getKey());
          ArgumentLayout.Result l;
          try {
            Optional<FunctionParameters> params = b.dwarf().parametersByAbi(e.getValue().name());
            l = params.isEmpty() ? new ArgumentLayout.Result(null, "DWARF has no subprogram " + e.getValue().name())
                : ArgumentLayout.of(params.get(), ArgumentSpills.of(b, e.getValue()));
          } catch (GoBinaryException ex) {
            l = new ArgumentLayout.Result(null, ex.getMessage());
          }
          if (l.layout() != null) {
            layouts.put(field, l.layout().format());
          } else {
            layouts.putNull(field);
            layoutsMissing.put(field, l.reason());
          }
        }
      }
    } catch (GoBinaryException e) {
      return failure(key, "inspecting the build failed: " + e.getMessage());
    }
    return o;
  }

  static ObjectNode failure(String key, String reason) {
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    o.put("key", key);
    o.put("status", "failed");
    o.put("reason", reason);
    return o;
  }

  private static void write(Path out, JsonNode node) throws IOException {
    Files.createDirectories(out.toAbsolutePath().getParent());
    Path tmp = out.resolveSibling(out.getFileName() + ".tmp");
    Files.writeString(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n");
    Files.move(tmp, out, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  public static List<JsonNode> readCache(Path cache) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(cache)) {
      for (Path p : s.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
        out.add(JSON.readTree(p.toFile()));
      }
    }
    return out;
  }

  private static long count(List<JsonNode> obs, String status) {
    return obs.stream().filter(o -> o.path("status").asText().equals(status)).count();
  }

  /** A section's key version of one observation (semantic; STD: the Go version). */
  private static String sectionVersion(String section, JsonNode o) {
    String module = OffsetsCatalog.keyModule(section);
    switch (module) {
      case OffsetsCatalog.STD:
        return ModuleVersions.goToSemver(o.path("go").asText());
      case OffsetsCatalog.GRPC:
        return o.path("grpc").isTextual() ? o.path("grpc").asText() : null;
      default:
        return o.path("xnet").isTextual() ? o.path("xnet").asText() : null;
    }
  }

  private static boolean inSection(String section, JsonNode o) {
    if (section.startsWith("arguments/")) {
      String abi = "arguments/" + o.path("abi").asText();
      return section.equals(abi) || section.startsWith(abi + "/");
    }
    return true;
  }

  /**
   * Whether an observation lacks every function that needs {@code f} (its {@code functions}: the
   * probes whose function the build has); false when {@code f} is needed by no probe or the
   * observation does not list functions.
   */
  static boolean notNeeded(ProbeField f, JsonNode o) {
    JsonNode functions = o.get("functions");
    if (f.neededBy().isEmpty() || functions == null || !functions.isArray()) {
      return false;
    }
    for (JsonNode fn : functions) {
      for (io.gospan.offsets.resolve.Probe p : f.neededBy()) {
        if (p.name().equals(fn.asText())) {
          return false;
        }
      }
    }
    return true;
  }

  /** Merges observations into the catalog tree (see {@link OffsetsCatalog} for the format). */
  public static ObjectNode merge(List<JsonNode> observations) {
    List<String> sections = OffsetsCatalog.SECTIONS;
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    root.put("format", 1);
    root.put("about", "gospan offsets catalog, generated by offsets/generate-catalog.sh; see OffsetsCatalog for the format"
        + " and docs/compatibility.md for the coverage. Do not edit by hand.");
    ObjectNode out = root.putObject("sections");
    for (String section : sections) {
      TreeSet<String> observed = new TreeSet<>(ModuleVersions.ORDER);
      // field -> version -> distinct values (JSON text)
      Map<String, TreeMap<String, Set<String>>> values = new LinkedHashMap<>();
      for (JsonNode o : observations) {
        if (!o.path("status").asText().equals("ok") || !inSection(section, o)) {
          continue;
        }
        String v = sectionVersion(section, o);
        if (v == null) {
          continue;
        }
        observed.add(v);
        for (ProbeField f : ProbeField.values()) {
          if (!f.catalogued() || !section.equals(OffsetsCatalog.section(f, OffsetsCatalog.registerSection(section)))) {
            continue;
          }
          if (section.startsWith("arguments/") != (f.kind() == ProbeField.Kind.ARGUMENT)) {
            continue;
          }
          JsonNode val = o.path("fields").get(f.cName());
          if ((val == null || val.isNull()) && notNeeded(f, o)) {
            // absent because the build does not have the functions that need it (x/net v0.60's
            // HTTP/2 server delegates to net/http's under go1.27): not a layout that disagrees with
            // the builds that have them; a binary is asked for it only when it has the functions
            continue;
          }
          values.computeIfAbsent(f.cName(), k -> new TreeMap<>(ModuleVersions.ORDER))
              .computeIfAbsent(v, k -> new LinkedHashSet<>())
              .add(val == null ? "null" : val.toString());
        }
        // the argument layouts of the probed functions the build has (register ABI: ArgumentLayout)
        for (Probe p : Probe.values()) {
          JsonNode layout = o.path("layouts").get(OffsetsCatalog.layoutField(p));
          if (layout == null || !section.equals(OffsetsCatalog.layoutSection(p))) {
            continue;
          }
          values.computeIfAbsent(OffsetsCatalog.layoutField(p), k -> new TreeMap<>(ModuleVersions.ORDER))
              .computeIfAbsent(v, k -> new LinkedHashSet<>())
              .add(layout.toString());
        }
      }
      if (observed.isEmpty()) {
        continue;
      }
      boolean go = OffsetsCatalog.keyModule(section).equals(OffsetsCatalog.STD);
      ObjectNode s = out.putObject(section);
      ArrayNode obs = s.putArray("observed");
      observed.forEach(v -> obs.add(go ? goName(v) : v));
      ObjectNode fields = s.putObject("fields");
      for (Map.Entry<String, TreeMap<String, Set<String>>> f : values.entrySet()) {
        ArrayNode list = fields.putArray(f.getKey());
        String last = null;
        for (Map.Entry<String, Set<String>> e : f.getValue().entrySet()) {
          boolean conflict = e.getValue().size() > 1;
          String value = conflict ? "conflict:" + String.join("|", e.getValue()) : e.getValue().iterator().next();
          if (Objects.equals(value, last)) {
            continue;
          }
          last = value;
          ObjectNode entry = list.addObject();
          entry.put("since", go ? goName(e.getKey()) : e.getKey());
          try {
            entry.set("value", JSON.readTree(e.getValue().iterator().next()));
          } catch (IOException ex) {
            throw new IllegalStateException(ex);
          }
          if (conflict) {
            entry.put("conflict", true);
            entry.put("seen", String.join(" | ", e.getValue()));
          }
        }
      }
    }
    return root;
  }

  private static String goName(String semver) {
    return "go" + semver.substring(1).replaceFirst("\\.0-", "").replaceFirst("-", "");
  }

  /** Compact JSON: one line per field, so a diff shows what moved. */
  public static String render(ObjectNode catalog) throws IOException {
    StringBuilder b = new StringBuilder("{\n");
    b.append("  \"format\": ").append(catalog.path("format").asInt()).append(",\n");
    b.append("  \"about\": ").append(JSON.writeValueAsString(catalog.path("about").asText())).append(",\n");
    b.append("  \"sections\": {");
    boolean firstSection = true;
    for (Iterator<Map.Entry<String, JsonNode>> it = catalog.path("sections").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> s = it.next();
      b.append(firstSection ? "\n" : ",\n");
      firstSection = false;
      b.append("    ").append(JSON.writeValueAsString(s.getKey())).append(": {\n");
      b.append("      \"observed\": ").append(JSON.writeValueAsString(s.getValue().path("observed"))).append(",\n");
      b.append("      \"fields\": {");
      boolean firstField = true;
      for (Iterator<Map.Entry<String, JsonNode>> fi = s.getValue().path("fields").fields(); fi.hasNext(); ) {
        Map.Entry<String, JsonNode> f = fi.next();
        b.append(firstField ? "\n" : ",\n");
        firstField = false;
        b.append("        ").append(JSON.writeValueAsString(f.getKey())).append(": ").append(JSON.writeValueAsString(f.getValue()));
      }
      b.append("\n      }\n    }");
    }
    b.append("\n  }\n}\n");
    return b.toString();
  }

  /** The section on every catalogued build resolved stripped without its release ({@link #verifyStripped}). */
  static String verification(List<JsonNode> verified) {
    StringBuilder b = new StringBuilder("\n## Every catalogued build without its release\n\n");
    long register = verified.stream().filter(v -> v.path("abi").asText().equals("register")).count();
    long clean = verified.stream().filter(v -> v.path("abi").asText().equals("register") && v.path("wrong").isEmpty()
        && v.path("refused").isEmpty()).count();
    long wrong = verified.stream().filter(v -> !v.path("wrong").isEmpty()).count();
    b.append("`generate-catalog.sh --verify-stripped` linked every catalogued build again with `-s -w` and resolved it\n"
        + "through the catalog without its grpc-go release and later ones (as a release newer than the catalog):\n"
        + "every field must equal its unstripped twin's DWARF, from the binary's own runtime type information\n"
        + "(struct members) and code (argument registers, register ABI), but the arguments of a function whose\n"
        + "parameters changed in that release, which are refused (and the oldest release's, which no catalogued\n"
        + "release precedes to name them). Of " + verified.size() + " builds (" + register
        + " register ABI; the stack ABI's arguments are not in a stripped binary), " + clean + " register-ABI builds\n"
        + "resolved every field, " + wrong + " gave a wrong value" + (wrong == 0 ? "" : " (listed)") + ". Refused:\n\n");
    for (JsonNode v : verified) {
      if (v.path("wrong").isEmpty() && v.path("refused").isEmpty()) {
        continue;
      }
      // the binary's reason, shared by the fields of one function: "field: ...; and the binary: <reason>"
      Map<String, List<String>> byReason = new LinkedHashMap<>();
      v.path("refused").forEach(r -> {
        String text = r.asText();
        int binary = text.indexOf("and the binary: ");
        String reason = binary >= 0 ? text.substring(binary + "and the binary: ".length()) : text.replaceFirst("^[^:]*: ", "");
        byReason.computeIfAbsent(reason, k -> new ArrayList<>()).add("`" + text.replaceFirst(":.*", "") + "`");
      });
      b.append("- `").append(v.path("key").asText()).append("`:");
      byReason.forEach((reason, fields) -> b.append(" ").append(String.join(", ", fields)).append(": ")
          .append(reason.replaceAll("\\s+", " ").replace("|", "\\|")).append(";"));
      v.path("wrong").forEach(w -> b.append(" WRONG: ").append(w.asText().replace("|", "\\|")).append(";"));
      b.setLength(b.length() - 1);
      b.append("\n");
    }
    return b.toString();
  }

  /** docs/compatibility.md: the Go × grpc-go matrix and what the catalog covers. */
  public static String compatibility(List<JsonNode> observations, ObjectNode catalog) {
    return compatibility(observations, catalog, List.of());
  }

  /**
   * docs/compatibility.md, with what {@code generate-catalog.sh --verify-stripped} found per build ({@code
   * verified}: {@code {key, abi, wrong: [...], refused: [...]}}), when there is something.
   */
  public static String compatibility(List<JsonNode> observations, ObjectNode catalog, List<JsonNode> verified) {
    TreeSet<String> grpcs = new TreeSet<>(ModuleVersions.ORDER);
    TreeSet<String> gos = new TreeSet<>(ModuleVersions.ORDER);
    Map<String, JsonNode> byCell = new TreeMap<>();
    List<JsonNode> extra = new ArrayList<>();
    for (JsonNode o : observations) {
      String key = o.path("key").asText();
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("(v[^-]+)-go([0-9.]+)(-xnet(.*))?").matcher(key);
      if (!m.matches()) {
        continue;
      }
      if (m.group(3) != null) {
        extra.add(o);
        continue;
      }
      grpcs.add(m.group(1));
      gos.add("v" + m.group(2));
      byCell.put(m.group(1) + " " + m.group(2), o);
    }
    StringBuilder b = new StringBuilder();
    b.append("# Compatibility: Go × grpc-go and the offsets catalog\n\n");
    b.append("Generated by `offsets/generate-catalog.sh` (CatalogGenerator) from the builds in its cache; do not edit.\n\n");
    b.append("gospan resolves every field its probes read per binary: from the embedded catalog\n"
        + "(`offsets/src/main/resources/io/gospan/offsets/catalog.json`), keyed by the versions in the binary's\n"
        + "build info, and from the binary's own DWARF (DWARF wins by default when both answer; a\n"
        + "disagreement is logged). **An unstripped binary works with any version the inspector can read**.\n"
        + "A **stripped** binary (`-ldflags='-s -w'`) gets what the catalog observed, and for any other release\n"
        + "what it says by itself (below).\n\n");
    b.append("The catalog covers a stripped binary when every version keying its fields is covered:\n\n"
        + "- grpc-go struct members and the probed functions' argument locations: by grpc-go version\n"
        + "  (arguments separately for the register ABI, Go ≥ 1.17, and the stack ABI, Go ≤ 1.16), and each\n"
        + "  probed function's argument layout (`layout:<probe>`: its parameters' names, types, registers and\n"
        + "  slots, register ABI);\n"
        + "- `MetaHeadersFrame`, `HeadersFrame`/`FrameHeader`, `hpack.HeaderField`: by golang.org/x/net version;\n"
        + "- the ServeHTTP path (gRPC served by `grpc.Server.ServeHTTP` behind an HTTP/2 server): x/net's server\n"
        + "  (`serverConn`, `writeResHeaders`, its frames and hpack, h2c) by golang.org/x/net version, net/http's\n"
        + "  bundled copy by Go version, each with its functions' argument locations and layouts\n"
        + "  (`arguments/<abi>/golang.org/x/net`, `arguments/<abi>/std`);\n"
        + "- `net.netFD`'s `pfd.Sysfd`: by Go version. How a connection leads to it (`*net.TCPConn`,\n"
        + "  `crypto/tls.Conn`, any wrapper) is not in the catalog: it comes from the binary's runtime type\n"
        + "  information, stripped or not (\"Connections\" below).\n\n"
        + "A version is covered when it lies between the oldest and newest observed versions and the\n"
        + "observed versions around it (or it itself) agree on the value. Newer than the newest observed,\n"
        + "older than the oldest, or inside a range where the value changed between two observations: not\n"
        + "covered; the binary's DWARF is used, and without DWARF **the binary itself**\n"
        + "(docs/go-binary-inspection.md, \"A stripped binary by itself\"):\n\n"
        + "- every struct member, struct size and pointer member by name from its runtime type information\n"
        + "  (the struct types reachable from its itabs, with each field's name, offset and type), whatever\n"
        + "  the release: `gospan inspect` says `typeinfo`;\n"
        + "- every argument register of the register ABI from the function's code (the registers its\n"
        + "  stack-growth tail saves, with their slots and sizes), named by the catalogued layout of the\n"
        + "  nearest observed release (the newest, for a release newer than the catalog) when the code saves\n"
        + "  exactly that layout's registers, slots and sizes, and by the method's func type where the binary\n"
        + "  has one: `gospan inspect` says `code` and which layout. A function whose parameters changed in a\n"
        + "  release the catalog has not observed (another parameter before, between or after: its spills\n"
        + "  differ) is refused with both layouts, its probe alone not attached.\n"
        + "- arguments of the stack ABI (Go ≤ 1.16) are not in a stripped binary: the catalog only (no grpc-go\n"
        + "  release newer than the catalog builds with Go ≤ 1.16).\n\n"
        + "A catalogued answer stands without reading the binary's type information (resting on an inferred\n"
        + "version, it is checked against it). `generate-catalog.sh --verify-stripped` resolves every\n"
        + "catalogued build stripped, through the catalog and, with its grpc-go release removed, through its\n"
        + "own type information and code, against its unstripped twin's DWARF (\"Every catalogued build\n"
        + "without its release\" below).\n\n"
        + "- **Binaries without module information** (GOPATH builds, as Debian builds Go programs): grpc-go's\n"
        + "  version is inferred from its user agent, the constant `grpc-go/<version>` in the read-only data\n"
        + "  (present when the program dials gRPC; a server-only binary has none); Go's version is in the build\n"
        + "  info. grpc-go's fields come from the catalog at that version; x/net's version is unknown (a GOPATH\n"
        + "  build takes whatever x/net its builder had), so an x/net field is answered only when every\n"
        + "  catalogued x/net release agrees on it. Every struct member and size inferred this way is compared\n"
        + "  with the runtime type information (a contradiction drops it, with both values, and the binary's\n"
        + "  value stands), every argument location with the function's code (its spills must equal the\n"
        + "  catalogued layout). `gospan inspect` prints, per field, \"inferred from grpc-go user agent\n"
        + "  grpc-go/1.33.3\" and how it was checked. Tested on Debian 12's etcd, etcdctl, containerd and ctr\n"
        + "  (grpc-go 1.33.3, Go 1.19.8): inspect, and real spans from all four, linked (\"Real programs tested\"\n"
        + "  below).\n"
        + "- **GOPATH builds without a user agent** (programs that only serve gRPC): grpc-go's struct members\n"
        + "  in the runtime type information are matched against the catalog; when they equal the catalog's\n"
        + "  values for a contiguous run of observed releases with a non-matching observed release on each\n"
        + "  side, grpc-go's release is taken to lie in that run, and a grpc-go field (argument locations\n"
        + "  included) is answered when it does not change inside the run (`gospan inspect`: \"grpc-go: v1.60.0\n"
        + "  … v1.83.2 (inferred from grpc-go's struct layouts ...)\"). A run that reaches the newest or oldest\n"
        + "  observed release is not used (a newer or older grpc-go cannot be ruled out); its members still come\n"
        + "  from the runtime type information, its arguments from the code where a catalogued layout fits.\n\n"
        + "Replaced modules and development toolchains get no catalog answer: DWARF, or stripped, the binary\n"
        + "itself.\n\n");
    b.append(CONNECTIONS);
    b.append(REAL_PROGRAMS);
    JsonNode secs = catalog.path("sections");
    b.append("## Stripped binaries: what the catalog covers\n\n");
    b.append("| | from | to |\n|---|---|---|\n");
    for (String[] row : new String[][] {
        {"grpc-go, Go ≥ 1.17 (register ABI)", OffsetsCatalog.ARGUMENTS_REGISTER},
        {"grpc-go, Go ≤ 1.16 (stack ABI)", OffsetsCatalog.ARGUMENTS_STACK},
        {"golang.org/x/net", OffsetsCatalog.XNET},
        {"Go (net.netFD; net/http's HTTP/2 server)", OffsetsCatalog.STD},
        {"x/net's HTTP/2 server (ServeHTTP), register ABI", OffsetsCatalog.ARGUMENTS_REGISTER_XNET},
        {"x/net's HTTP/2 server (ServeHTTP), stack ABI", OffsetsCatalog.ARGUMENTS_STACK_XNET},
        {"net/http's HTTP/2 server (ServeHTTP), register ABI", OffsetsCatalog.ARGUMENTS_REGISTER_STD},
        {"net/http's HTTP/2 server (ServeHTTP), stack ABI", OffsetsCatalog.ARGUMENTS_STACK_STD}}) {
      JsonNode obs = secs.path(row[1]).path("observed");
      if (obs.size() > 0) {
        b.append("| ").append(row[0]).append(" | `").append(obs.get(0).asText()).append("` | `")
            .append(obs.get(obs.size() - 1).asText()).append("` |\n");
      } else {
        b.append("| ").append(row[0]).append(" | none | |\n");
      }
    }
    b.append("\nInside these ranges a version is answered unless a value changed between the two observed\n"
        + "versions around it (listed under \"Where values change\" below: the versions strictly between\n"
        + "the last observation with the old value and the first with the new one are not covered).\n\n"
        + "Not covered, by design: grpc-go older than the oldest or newer than the newest observed release;\n"
        + "a Go release newer than the newest observed toolchain; grpc-go or x/net replaced by a directory or\n"
        + "another module; development toolchains; GOPATH builds whose user agent names a development version\n"
        + "(`1.34.0-dev`), or without a user agent whose struct layouts match no bounded run of releases (the\n"
        + "newest catalogued grpc-go, for one). Unstripped, all of these\n"
        + "still work from DWARF; stripped, from the binary itself (above), but for the arguments of a function\n"
        + "whose parameters changed since the nearest observed release, and stack-ABI arguments.\n\n"
        + "grpc-go releases the Go module proxy omits from its version list (v1.33.3, v1.34.1, v1.34.2: `go\n"
        + "list -m -versions` does not show them, `go list -m google.golang.org/grpc@v1.34.2` resolves) are\n"
        + "added to the matrix by `generate-catalog.sh` (`UNLISTED`).\n\n");
    b.append("## Builds observed\n\n");
    b.append("Each cell is one build of `offsets/src/catalog-gen/probe` (a grpc-go health server and client,\n"
        + "plain and TLS) with that toolchain and grpc-go release, its other dependencies as `go mod tidy`\n"
        + "chose them for that release. ✓ = built and read; ✗ = failed (reason below); blank = not attempted.\n\n");
    List<String> goList = new ArrayList<>(gos);
    b.append("| grpc-go | x/net (by tidy) |");
    goList.forEach(g -> b.append(" go").append(g.substring(1)).append(" |"));
    b.append("\n|---|---|");
    goList.forEach(g -> b.append("---|"));
    b.append("\n");
    List<String> failures = new ArrayList<>();
    for (String grpc : grpcs) {
      String xnet = "";
      StringBuilder cells = new StringBuilder();
      for (String g : goList) {
        JsonNode o = byCell.get(grpc + " " + g.substring(1));
        if (o == null) {
          cells.append("  |");
        } else if (o.path("status").asText().equals("ok")) {
          cells.append(" ✓ |");
          if (xnet.isEmpty() && o.path("xnet").isTextual()) {
            xnet = o.path("xnet").asText();
          }
        } else {
          cells.append(" ✗ |");
          failures.add("- grpc-go " + grpc + " with go" + g.substring(1) + ": " + o.path("reason").asText().replaceAll("\\s+", " ").strip().replace("|", "\\|"));
        }
      }
      b.append("| ").append(grpc).append(" | ").append(xnet.isEmpty() ? "" : "`" + xnet + "`").append(" |").append(cells).append("\n");
    }
    for (JsonNode o : extra) {
      b.append("\nAlso: `").append(o.path("key").asText()).append("` (newest grpc-go and the newest x/net, as applications upgrade x/net on their own): ")
          .append(o.path("status").asText().equals("ok") ? "✓" : "✗ " + o.path("reason").asText()).append("\n");
    }
    if (!failures.isEmpty()) {
      b.append("\n### Failed builds\n\n");
      failures.forEach(f -> b.append(f).append("\n"));
    }
    b.append("\n## Catalog coverage\n\n");
    b.append("| section | keyed by | observed versions | fields | value changes |\n|---|---|---|---|---|\n");
    for (Iterator<Map.Entry<String, JsonNode>> it = catalog.path("sections").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> s = it.next();
      JsonNode obs = s.getValue().path("observed");
      int changes = 0;
      int nfields = 0;
      List<String> conflicts = new ArrayList<>();
      for (Iterator<Map.Entry<String, JsonNode>> fi = s.getValue().path("fields").fields(); fi.hasNext(); ) {
        Map.Entry<String, JsonNode> f = fi.next();
        nfields++;
        changes += f.getValue().size() - 1;
        for (JsonNode e : f.getValue()) {
          if (e.path("conflict").asBoolean()) {
            conflicts.add(f.getKey() + "@" + e.path("since").asText());
          }
        }
      }
      String module = OffsetsCatalog.keyModule(s.getKey());
      b.append("| `").append(s.getKey()).append("` | ").append(module.equals("std") ? "Go" : module).append(" | ")
          .append(obs.size()).append(": ").append(obs.get(0).asText()).append(" … ").append(obs.get(obs.size() - 1).asText())
          .append(" | ").append(nfields).append(" | ").append(changes)
          .append(conflicts.isEmpty() ? "" : "; not trusted (builds disagreed): " + String.join(", ", conflicts)).append(" |\n");
    }
    b.append("\nWhere values change (first observed version with the new value):\n\n");
    for (Iterator<Map.Entry<String, JsonNode>> it = catalog.path("sections").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> s = it.next();
      for (Iterator<Map.Entry<String, JsonNode>> fi = s.getValue().path("fields").fields(); fi.hasNext(); ) {
        Map.Entry<String, JsonNode> f = fi.next();
        if (f.getValue().size() > 1) {
          List<String> parts = new ArrayList<>();
          for (JsonNode e : f.getValue()) {
            parts.add(e.path("since").asText() + ": " + e.path("value").toString());
          }
          b.append("- `").append(s.getKey()).append("` `").append(f.getKey()).append("`: ").append(String.join(", ", parts)).append("\n");
        }
      }
    }
    b.append("\nObserved x/net versions: ");
    JsonNode xn = catalog.path("sections").path(OffsetsCatalog.XNET).path("observed");
    List<String> xs = new ArrayList<>();
    xn.forEach(x -> xs.add("`" + x.asText() + "`"));
    b.append(String.join(", ", xs)).append(".\n");
    if (!verified.isEmpty()) {
      b.append(verification(verified));
    }
    b.append("\nRegenerate: `offsets/generate-catalog.sh` (incremental; `--until HH:MM` to bound it), then review\n"
        + "and commit `catalog.json` and this file. `CatalogDriftIT` rebuilds a sample and fails when it\n"
        + "differs from the committed catalog.\n");
    return b.toString();
  }
}
