package io.gospan.offsets.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.GrpcUserAgent;
import io.gospan.offsets.buildinfo.Module;
import io.gospan.offsets.resolve.ArgLocation;
import io.gospan.offsets.resolve.ArgumentLayout;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.ProbeField;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The embedded offsets catalog: {@link ProbeField} values observed in real builds, keyed by the
 * version of the module that defines each field. Format (resource {@code io/gospan/offsets/catalog.json},
 * written by {@link CatalogGenerator}):
 *
 * <pre>
 * { "format": 1,
 *   "sections": {
 *     "google.golang.org/grpc": { "observed": ["v1.30.0", ...], "fields": {
 *         "loopy_writer_side": [{"since": "v1.30.0", "value": 0}],
 *         "loopy_writer_conn": [{"since": "v1.30.0", "value": null}, {"since": "v1.69.4", "value": 40}] } },
 *     "golang.org/x/net": {...}, "std": {...  (versions are Go versions: "go1.21.13") },
 *     "arguments/register": {... keyed by grpc-go version; values "reg:N" (DWARF register) ...,
 *         "layout:http2_client_close_stream": [{"since": "v1.30.0", "value": "t *...http2Client = rax@0:8 | ..."}] },
 *     "arguments/stack": {... "sp:N" (bytes above SP at entry) ...} } }
 * </pre>
 *
 * A {@code layout:<probe>} field holds the probed function's {@link ArgumentLayout} (register ABI sections
 * only): what names the argument registers a stripped binary's code shows ({@link #layouts}).
 *
 * An entry holds from its {@code since} version until the next entry; {@code null} means the field
 * does not exist in those versions; {@code "conflict": true} marks a version whose builds disagreed
 * (e.g. by Go version) and is never trusted.
 *
 * <p>Trust rule: a version is answered only when it lies within the observed versions of its
 * section and the observed versions on both sides of it (equal to it, or the nearest older and
 * newer ones) carry the same entry. A version older than the oldest or newer than the newest
 * observed one is not answered (a newer grpc-go may have moved fields: the binary's DWARF decides,
 * and a stripped binary is reported unsupported), nor is one between two observed versions whose
 * values differ (the change happened somewhere between them).
 */
public final class OffsetsCatalog {
  /** The resource holding the embedded catalog. */
  public static final String RESOURCE = "/io/gospan/offsets/catalog.json";
  /** Section of struct members and sizes of Go's standard library, keyed by Go version. */
  public static final String STD = "std";
  public static final String GRPC = "google.golang.org/grpc";
  public static final String XNET = "golang.org/x/net";
  public static final String ARGUMENTS_REGISTER = "arguments/register";
  public static final String ARGUMENTS_STACK = "arguments/stack";
  /**
   * Argument locations of the ServeHTTP path's functions in x/net's copy of the HTTP/2 server (and its hpack),
   * keyed by the golang.org/x/net version; {@code arguments/stack/golang.org/x/net} for the stack ABI.
   */
  public static final String ARGUMENTS_REGISTER_XNET = ARGUMENTS_REGISTER + "/" + XNET;
  public static final String ARGUMENTS_STACK_XNET = ARGUMENTS_STACK + "/" + XNET;
  /** ... and in net/http's bundled copy, keyed by the Go version. */
  public static final String ARGUMENTS_REGISTER_STD = ARGUMENTS_REGISTER + "/" + STD;
  public static final String ARGUMENTS_STACK_STD = ARGUMENTS_STACK + "/" + STD;
  /** Every section, in the order the generator writes them. */
  public static final List<String> SECTIONS = List.of(GRPC, XNET, STD, ARGUMENTS_REGISTER, ARGUMENTS_STACK,
      ARGUMENTS_REGISTER_XNET, ARGUMENTS_STACK_XNET, ARGUMENTS_REGISTER_STD, ARGUMENTS_STACK_STD);

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final OffsetsCatalog EMPTY = new OffsetsCatalog(Map.of());

  private final Map<String, Section> sections;

  private OffsetsCatalog(Map<String, Section> sections) {
    this.sections = sections;
  }

  /**
   * Test hook: with the system property {@value}{@code =vX.Y.Z} set, {@link #embedded()} is the embedded
   * catalog as it was before that grpc-go release ({@link #before}): a release it observed is then newer than
   * it, as a release published after a gospan build is. Tests set it to trace a release without its
   * catalog entry (the binary's own type information must do); it is logged once.
   */
  public static final String BEFORE_PROPERTY = "gospan.offsets.catalogBefore";

  /** The catalog built into gospan (parsed once); see {@link #BEFORE_PROPERTY}. */
  public static OffsetsCatalog embedded() {
    String before = System.getProperty(BEFORE_PROPERTY);
    if (before == null || before.isBlank()) {
      return Embedded.CATALOG;
    }
    return Embedded.BEFORE.computeIfAbsent(before.strip(), v -> {
      org.slf4j.LoggerFactory.getLogger(OffsetsCatalog.class).warn(
          "test hook {}={}: the offsets catalog without grpc-go {} and later", BEFORE_PROPERTY, v, v);
      return Embedded.CATALOG.before(v);
    });
  }

  /**
   * This catalog without grpc-go {@code release} and later releases: their observations and the entries
   * since them removed from the sections keyed by grpc-go ({@link #GRPC}, {@link #ARGUMENTS_REGISTER},
   * {@link #ARGUMENTS_STACK}), as the catalog was before that release was observed.
   */
  public OffsetsCatalog before(String release) {
    Map<String, Section> out = new HashMap<>();
    for (Map.Entry<String, Section> e : sections.entrySet()) {
      Section s = e.getValue();
      if (!keyModule(e.getKey()).equals(GRPC)) {
        out.put(e.getKey(), s);
        continue;
      }
      List<String> observed = s.observed.stream().filter(v -> ModuleVersions.compare(v, release) < 0).toList();
      Map<String, List<Entry>> fields = new HashMap<>();
      s.fields.forEach((k, v) -> fields.put(k, v.stream().filter(x -> ModuleVersions.compare(x.since, release) < 0).toList()));
      if (!observed.isEmpty()) {
        out.put(e.getKey(), new Section(observed, fields));
      }
    }
    return new OffsetsCatalog(Collections.unmodifiableMap(out));
  }

  /** A catalog that answers nothing: resolution from DWARF only. */
  public static OffsetsCatalog empty() {
    return EMPTY;
  }

  public static OffsetsCatalog load(Path path) throws IOException {
    try (InputStream in = Files.newInputStream(path)) {
      return parse(in);
    }
  }

  public static OffsetsCatalog parse(InputStream in) throws IOException {
    JsonNode root = JSON.readTree(in);
    if (root == null || root.path("format").asInt() != 1) {
      throw new IOException("not an offsets catalog of format 1");
    }
    Map<String, Section> sections = new HashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.path("sections").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> s = it.next();
      boolean go = keyModule(s.getKey()).equals(STD);
      List<String> observed = new ArrayList<>();
      for (JsonNode v : s.getValue().path("observed")) {
        observed.add(go ? ModuleVersions.goToSemver(v.asText()) : v.asText());
      }
      observed.sort(ModuleVersions.ORDER);
      Map<String, List<Entry>> fields = new HashMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> fi = s.getValue().path("fields").fields(); fi.hasNext(); ) {
        Map.Entry<String, JsonNode> f = fi.next();
        List<Entry> entries = new ArrayList<>();
        for (JsonNode e : f.getValue()) {
          String since = go ? ModuleVersions.goToSemver(e.path("since").asText()) : e.path("since").asText();
          JsonNode value = e.get("value");
          entries.add(new Entry(since, value == null || value.isNull() ? null : value.isNumber() ? (Object) value.asLong() : value.asText(),
              e.path("conflict").asBoolean(false)));
        }
        entries.sort((a, b) -> ModuleVersions.compare(a.since, b.since));
        fields.put(f.getKey(), entries);
      }
      sections.put(s.getKey(), new Section(Collections.unmodifiableList(observed), fields));
    }
    return new OffsetsCatalog(Collections.unmodifiableMap(sections));
  }

  /** Whether the catalog holds nothing. */
  public boolean isEmpty() {
    return sections.isEmpty();
  }

  /** Observed versions of a section (Go versions as {@code v1.21.13} for {@link #STD}), oldest first. */
  public List<String> observed(String section) {
    Section s = sections.get(section);
    return s == null ? List.of() : s.observed;
  }

  /** The catalog section holding a field: by the module defining its type, or the ABI for arguments. */
  public static String section(ProbeField field, boolean registerAbi) {
    switch (field.kind()) {
      case ARGUMENT:
        // a ServeHTTP-path function lives in x/net or in net/http, not in grpc-go
        if (field.server() == io.gospan.offsets.resolve.Probe.HttpServer.XNET) {
          return registerAbi ? ARGUMENTS_REGISTER_XNET : ARGUMENTS_STACK_XNET;
        }
        if (field.server() == io.gospan.offsets.resolve.Probe.HttpServer.NETHTTP) {
          return registerAbi ? ARGUMENTS_REGISTER_STD : ARGUMENTS_STACK_STD;
        }
        return registerAbi ? ARGUMENTS_REGISTER : ARGUMENTS_STACK;
      default:
        String type = field.path().get(0);
        if (type.startsWith(GRPC + "/")) {
          return GRPC;
        }
        if (type.startsWith(XNET + "/")) {
          return XNET;
        }
        return STD;
    }
  }

  /** The module whose version keys a section ({@link #STD}: Go itself). */
  public static String keyModule(String section) {
    if (section.endsWith("/" + XNET)) {
      return XNET;
    }
    if (section.endsWith("/" + STD)) {
      return STD;
    }
    return section.startsWith("arguments/") ? GRPC : section;
  }

  /**
   * The catalog field holding the argument layout ({@link ArgumentLayout}) of a probe's function, in the
   * register-ABI section of its arguments ({@link #layoutSection}).
   */
  public static String layoutField(Probe probe) {
    return "layout:" + probe.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The section of a probe's function's argument layout: that of its arguments, register ABI. */
  public static String layoutSection(Probe probe) {
    if (probe.server() == Probe.HttpServer.XNET) {
      return ARGUMENTS_REGISTER_XNET;
    }
    if (probe.server() == Probe.HttpServer.NETHTTP) {
      return ARGUMENTS_REGISTER_STD;
    }
    return ARGUMENTS_REGISTER;
  }

  /**
   * A catalogued argument layout offered for a binary's function.
   *
   * @param layout the layout
   * @param observed the observed version it is the value of ({@code v1.85.0}, {@code go1.26.8})
   * @param why how it relates to the binary's version: "catalogued" (at it, or around it with the same
   *     layout), "catalogued just before" / "just after" (around it, differing), "the newest catalogued", ...
   */
  public record CataloguedLayout(ArgumentLayout layout, String observed, String why) {}

  /**
   * The catalogued argument layouts of a probe's function a binary of these versions may have, the likeliest
   * first: the one the catalog vouches for at the binary's version; else, between two observations that
   * differ, both; newer than the catalog, the newest; older, the oldest; without a version (a GOPATH build
   * whose grpc-go was not inferred), every distinct one, newest first. Each must still be checked against the
   * binary ({@link ArgumentLayout#mismatch}). Register ABI only.
   */
  public List<CataloguedLayout> layouts(Probe probe, BinaryVersions versions) {
    String section = layoutSection(probe);
    Section s = sections.get(section);
    List<Entry> entries = s == null ? null : s.fields.get(layoutField(probe));
    if (entries == null || entries.isEmpty() || s.observed.isEmpty()) {
      return List.of();
    }
    String module = keyModule(section);
    String version = versions == null ? null : versions.version(module);
    if (version == null && module.equals(GRPC) && versions != null && versions.grpcRange() != null) {
      version = versions.grpcRange().get(1);
    }
    List<String> at = new ArrayList<>();
    String oldest = s.observed.get(0);
    String newest = s.observed.get(s.observed.size() - 1);
    List<String> whys = new ArrayList<>();
    if (version == null) {
      for (int i = s.observed.size() - 1; i >= 0; i--) {
        at.add(s.observed.get(i));
        whys.add("tried newest first: the binary names no " + module + " version");
      }
    } else if (ModuleVersions.compare(version, newest) > 0) {
      at.add(newest);
      whys.add("the newest catalogued");
    } else if (ModuleVersions.compare(version, oldest) < 0) {
      at.add(oldest);
      whys.add("the oldest catalogued");
    } else {
      Bracket b = Bracket.of(s.observed, version);
      boolean same = at(entries, b.lo()) == at(entries, b.hi());
      at.add(b.lo());
      whys.add(same ? "catalogued" : "catalogued just before");
      if (!same) {
        at.add(b.hi());
        whys.add("catalogued just after");
      }
    }
    List<CataloguedLayout> out = new ArrayList<>();
    java.util.Set<Entry> seen = new java.util.HashSet<>();
    for (int i = 0; i < at.size(); i++) {
      Entry e = at(entries, at.get(i));
      if (e == null || e.value == null || e.conflict || !seen.add(e)) {
        continue;
      }
      try {
        out.add(new CataloguedLayout(ArgumentLayout.parse(e.value.toString()), display(module, at.get(i)), whys.get(i)));
      } catch (IllegalArgumentException ex) {
        // a layout this gospan cannot read is no candidate
      }
    }
    return out;
  }

  /** Whether a section holds argument locations of the register ABI (Go >= 1.17). */
  public static boolean registerSection(String section) {
    return section.equals(ARGUMENTS_REGISTER) || section.startsWith(ARGUMENTS_REGISTER + "/");
  }

  /**
   * The catalog's answer for one field of a binary with these module versions.
   *
   * @return a value (source {@link FieldValue.Source#CATALOG}); or none, with the reason (the field
   *     does not exist in that version, or the catalog cannot vouch for that version)
   */
  public Answer lookup(ProbeField field, BinaryVersions versions) {
    if (!field.catalogued()) {
      return Answer.none("the catalog does not cover " + (field.server() != null ? "the ServeHTTP path" : field.cName())
          + " yet (DWARF only)", false);
    }
    String section = section(field, versions.registerAbi());
    if (section == null) {
      return Answer.none("itab addresses are per binary, never in the catalog", false);
    }
    String module = keyModule(section);
    String what = module.equals(STD) ? "Go" : module.equals(GRPC) ? "grpc-go" : module;
    String version = versions.version(module);
    if (version == null && module.equals(XNET) && versions.grpcInferredFrom() != null) {
      return lookupAnyXnet(field, section, versions);
    }
    if (version == null && module.equals(GRPC) && versions.grpcRange() != null) {
      return lookupRange(field, section, versions.grpcRange()).inferred("inferred from " + versions.grpcInferredFrom());
    }
    if (version == null) {
      return Answer.none("no " + what + " version: " + versions.whyNoVersion(module), false);
    }
    Answer answer = lookupAt(field, section, module, what, version, versions);
    if (module.equals(GRPC) && versions.grpcInferredFrom() != null) {
      return answer.inferred("inferred from " + versions.grpcInferredFrom());
    }
    return answer;
  }

  /**
   * A field keyed by x/net when the binary's x/net version is unknown but its grpc-go version was
   * inferred: a GOPATH build takes whatever x/net its builder had, so every catalogued x/net release
   * is plausible; the catalog answers only when all of them agree.
   */
  private Answer lookupAnyXnet(ProbeField field, String section, BinaryVersions versions) {
    Section s = sections.get(section);
    if (s == null || s.observed.isEmpty()) {
      return Answer.none("the catalog has no " + section + " entries", false);
    }
    List<Entry> entries = s.fields.get(field.cName());
    if (entries == null || entries.isEmpty()) {
      return Answer.none("the catalog has no field " + field.cName() + " in " + section, false);
    }
    String range = s.observed.get(0) + " … " + s.observed.get(s.observed.size() - 1);
    String unknown = "no " + XNET + " version (" + versions.whyNoVersion(XNET) + ")";
    if (entries.size() > 1) {
      StringBuilder changes = new StringBuilder();
      for (Entry e : entries.subList(1, entries.size())) {
        changes.append(changes.length() == 0 ? "" : ", ").append(e.since);
      }
      return Answer.none(unknown + " and the catalogued x/net releases differ on " + field.cName()
          + " (changes at " + changes + "): not inferred", false);
    }
    Entry only = entries.get(0);
    if (only.conflict) {
      return Answer.none(unknown + " and builds disagree on " + field.cName() + ": not inferred", false);
    }
    String note = "inferred: x/net unknown, every catalogued x/net release (" + range + ") agrees";
    if (only.value == null) {
      return Answer.none("not in any catalogued x/net release (" + range + ")", true).inferred(note);
    }
    return Answer.of(toFieldValue(field, only.value)).inferred(note);
  }

  /**
   * A grpc-go-keyed field when only a range of observed releases is known ({@link #grpcRange}): answered
   * when the section's observations at both ends of the range carry the same entry (no change inside).
   */
  private Answer lookupRange(ProbeField field, String section, List<String> range) {
    Section s = sections.get(section);
    String low = range.get(0);
    String high = range.get(1);
    if (s == null || s.observed.isEmpty()) {
      return Answer.none("the catalog has no " + section + " entries", false);
    }
    if (ModuleVersions.compare(low, s.observed.get(0)) < 0 || ModuleVersions.compare(high, s.observed.get(s.observed.size() - 1)) > 0) {
      return Answer.none("grpc-go " + low + " … " + high + " reaches outside the catalog's " + section + " observations", false);
    }
    List<Entry> entries = s.fields.get(field.cName());
    if (entries == null) {
      return Answer.none("the catalog has no field " + field.cName() + " in " + section, false);
    }
    Entry a = at(entries, low);
    Entry b = at(entries, high);
    if (a == null || a != b) {
      return Answer.none("grpc-go " + low + " … " + high + ": " + field.cName() + " changes inside that range", false);
    }
    if (a.conflict) {
      return Answer.none("builds with grpc-go " + a.since + " disagree on " + field.cName(), false);
    }
    if (a.value == null) {
      return Answer.none("not in grpc-go " + low + " … " + high + " (catalog)", true);
    }
    return Answer.of(toFieldValue(field, a.value));
  }

  /**
   * The observed grpc-go releases whose struct members all equal a binary's (from its runtime type
   * information), for a binary that names no grpc-go version.
   *
   * @param layout per grpc-go struct member field: its offset in the binary, {@code OptionalLong.empty()}
   *     when the binary's struct lacks it; fields whose struct the binary does not show are left out
   * @return {@code [low, high]}: a contiguous run of observed releases with an observed release on each
   *     side that does not match (so the binary's release lies strictly between those two); empty when
   *     fewer than three members are known, no run matches, the matches are not contiguous, or the run
   *     reaches the oldest or newest observed release (an older or newer grpc-go cannot be ruled out)
   */
  public Optional<List<String>> grpcRange(Map<ProbeField, java.util.OptionalLong> layout) {
    Section s = sections.get(GRPC);
    if (s == null || layout.size() < 3) {
      return Optional.empty();
    }
    int first = -1;
    int last = -1;
    for (int i = 0; i < s.observed.size(); i++) {
      String o = s.observed.get(i);
      boolean match = true;
      for (Map.Entry<ProbeField, java.util.OptionalLong> f : layout.entrySet()) {
        List<Entry> entries = s.fields.get(f.getKey().cName());
        Entry e = entries == null ? null : at(entries, o);
        if (e == null || e.conflict) {
          match = false;
          break;
        }
        Long want = f.getValue().isPresent() ? f.getValue().getAsLong() : null;
        Long have = e.value == null ? null : ((Number) e.value).longValue();
        if (!Objects.equals(want, have)) {
          match = false;
          break;
        }
      }
      if (match) {
        if (last >= 0 && last != i - 1) {
          return Optional.empty(); // not contiguous: the layout went back and forth
        }
        if (first < 0) {
          first = i;
        }
        last = i;
      }
    }
    if (first <= 0 || last < 0 || last >= s.observed.size() - 1) {
      return Optional.empty();
    }
    return Optional.of(List.of(s.observed.get(first), s.observed.get(last)));
  }

  private Answer lookupAt(ProbeField field, String section, String module, String what, String version, BinaryVersions versions) {
    String shown = module.equals(STD) ? versions.goVersion() : version;
    Section s = sections.get(section);
    if (s == null || s.observed.isEmpty()) {
      return Answer.none("the catalog has no " + section + " entries", false);
    }
    String oldest = s.observed.get(0);
    String newest = s.observed.get(s.observed.size() - 1);
    if (ModuleVersions.compare(version, oldest) < 0) {
      return Answer.none(what + " " + shown + " is older than the catalog (" + section + " from " + display(module, oldest) + ")", false);
    }
    if (ModuleVersions.compare(version, newest) > 0) {
      return Answer.none(what + " " + shown + " is newer than the catalog (" + section + " up to " + display(module, newest) + ")", false);
    }
    List<Entry> entries = s.fields.get(field.cName());
    if (entries == null) {
      return Answer.none("the catalog has no field " + field.cName() + " in " + section, false);
    }
    Bracket around = Bracket.of(s.observed, version);
    Entry a = at(entries, around.lo());
    Entry b = at(entries, around.hi());
    if (a != b) {
      return Answer.none(what + " " + shown + " lies between catalogued " + display(module, around.lo()) + " and "
          + display(module, around.hi()) + ", whose " + field.cName() + " differ", false);
    }
    if (a == null) {
      return Answer.none("the catalog has no " + field.cName() + " entry for " + what + " " + shown, false);
    }
    if (a.conflict) {
      return Answer.none("builds with " + what + " " + display(module, a.since) + " disagree on " + field.cName()
          + " (it depends on another version)", false);
    }
    if (a.value == null) {
      return Answer.none("not in " + what + " " + shown + " (catalog)", true);
    }
    return Answer.of(toFieldValue(field, a.value));
  }

  private static String display(String module, String semver) {
    return module.equals(STD) ? "go" + semver.substring(1).replaceFirst("\\.0-", "").replaceFirst("-", "") : semver;
  }

  /**
   * The observed versions around {@code version}: {@code lo} the newest at or before it, {@code hi}
   * the oldest at or after it (both {@code version} when it was observed); {@code version} lies
   * between the first and the last of {@code observed} (oldest first).
   */
  private record Bracket(String lo, String hi) {
    static Bracket of(List<String> observed, String version) {
      String lo = null;
      String hi = null;
      for (String o : observed) {
        int c = ModuleVersions.compare(o, version);
        if (c <= 0) {
          lo = o;
        }
        if (c >= 0 && hi == null) {
          hi = o;
        }
      }
      return new Bracket(lo, hi);
    }
  }

  private static Entry at(List<Entry> entries, String version) {
    Entry found = null;
    for (Entry e : entries) {
      if (ModuleVersions.compare(e.since, version) <= 0) {
        found = e;
      }
    }
    return found;
  }

  /** Encodes a value as the catalog stores it: bytes as a number, an argument as "reg:N" or "sp:N". */
  public static Object encode(FieldValue v) {
    if (v.location() != null) {
      return v.location().register() ? "reg:" + v.location().dwarfRegister() : "sp:" + v.location().spOffset();
    }
    return v.value();
  }

  static FieldValue toFieldValue(ProbeField field, Object value) {
    if (field.kind() == ProbeField.Kind.ARGUMENT) {
      String s = value.toString();
      if (s.startsWith("reg:")) {
        return new FieldValue(ArgLocation.inRegister(Integer.parseInt(s.substring(4))), 0, FieldValue.Source.CATALOG);
      }
      if (s.startsWith("sp:")) {
        return new FieldValue(ArgLocation.onStack(Integer.parseInt(s.substring(3))), 0, FieldValue.Source.CATALOG);
      }
      throw new IllegalArgumentException("bad argument location in catalog: " + s);
    }
    return new FieldValue(null, ((Number) value).longValue(), FieldValue.Source.CATALOG);
  }

  /**
   * The catalog's answer for one field.
   *
   * @param value the value, or null
   * @param reason why there is no value
   * @param absent true when the catalog knows the field does not exist in that version
   * @param inferred null when the keying version comes from the build info; else what it was inferred
   *     from ("inferred from grpc-go user agent grpc-go/1.33.3"), to be checked against the binary
   */
  public record Answer(FieldValue value, String reason, boolean absent, String inferred) {
    /** An answer from versions the build info records. */
    public Answer(FieldValue value, String reason, boolean absent) {
      this(value, reason, absent, null);
    }

    public static Answer of(FieldValue v) {
      return new Answer(v, null, false);
    }

    public static Answer none(String reason, boolean absent) {
      return new Answer(null, reason, absent);
    }

    /** This answer, noted as resting on an inferred version ({@code inferred}: from what, for people). */
    public Answer inferred(String from) {
      return new Answer(value, reason, absent, from);
    }
  }

  /**
   * The versions that key a binary's catalog lookups, from its build info.
   *
   * @param grpc grpc-go version (semver) or null
   * @param xnet golang.org/x/net version or null
   * @param goVersion the toolchain, e.g. {@code go1.22.12}
   * @param registerAbi Go ≥ 1.17 (arguments in registers)
   * @param whyNot per module, why its version is unknown
   * @param grpcInferredFrom null when grpc-go's version is the build info's; else what it was inferred
   *     from ({@code "grpc-go user agent grpc-go/1.33.3"}): the binary has no module information
   * @param grpcRange when grpc-go's release is known only as a range of observed releases {@code [low,
   *     high]} ({@link #withGrpcRange}), else null; {@code grpc} is then null
   */
  public record BinaryVersions(
      String grpc, String xnet, String goVersion, boolean registerAbi, Map<String, String> whyNot, String grpcInferredFrom,
      List<String> grpcRange) {
    /** Versions from the build info alone. */
    public BinaryVersions(String grpc, String xnet, String goVersion, boolean registerAbi, Map<String, String> whyNot) {
      this(grpc, xnet, goVersion, registerAbi, whyNot, null, null);
    }

    public BinaryVersions(
        String grpc, String xnet, String goVersion, boolean registerAbi, Map<String, String> whyNot, String grpcInferredFrom) {
      this(grpc, xnet, goVersion, registerAbi, whyNot, grpcInferredFrom, null);
    }

    /**
     * These versions (of a binary without module information and without a grpc-go user agent),
     * with grpc-go's release narrowed to an observed range by the binary's struct layouts
     * ({@link OffsetsCatalog#grpcRange}).
     */
    public BinaryVersions withGrpcRange(List<String> range) {
      Map<String, String> why = new HashMap<>(whyNot);
      why.remove(GRPC);
      return new BinaryVersions(null, xnet, goVersion, registerAbi, Map.copyOf(why),
          "grpc-go's struct layouts in the runtime type information (they match releases " + range.get(0) + " … " + range.get(1) + ")",
          List.copyOf(range));
    }

    /**
     * The versions of a binary from its build info; without module information (a GOPATH build),
     * grpc-go's version from its user agent when that names a release.
     *
     * @param userAgent what {@link GrpcUserAgent#find} found; null when not looked for
     */
    public static BinaryVersions of(BuildInfo info, boolean registerAbi, GrpcUserAgent.Found userAgent) {
      BinaryVersions v = of(info, registerAbi);
      if (info.hasModuleInfo() || userAgent == null) {
        return v;
      }
      Map<String, String> why = new HashMap<>(v.whyNot());
      if (userAgent.version() == null) {
        why.put(GRPC, why.get(GRPC) + "; " + userAgent.reason());
        return new BinaryVersions(null, null, v.goVersion(), registerAbi, Map.copyOf(why));
      }
      why.remove(GRPC);
      return new BinaryVersions(userAgent.version(), null, v.goVersion(), registerAbi, Map.copyOf(why),
          "grpc-go user agent " + userAgent.text());
    }

    /** The versions of a binary from its build info. */
    public static BinaryVersions of(BuildInfo info, boolean registerAbi) {
      Map<String, String> why = new HashMap<>();
      String grpc = moduleVersion(info, GRPC, why);
      String xnet = moduleVersion(info, XNET, why);
      String go = ModuleVersions.goToSemver(info.goVersion());
      if (go == null) {
        why.put(STD, "development or unknown Go toolchain " + info.goVersion());
      }
      return new BinaryVersions(grpc, xnet, info.goVersion(), registerAbi, Map.copyOf(why));
    }

    private static String moduleVersion(BuildInfo info, String path, Map<String, String> why) {
      if (!info.hasModuleInfo()) {
        why.put(path, "the binary has no module information (GOPATH build)");
        return null;
      }
      Module m = info.dependency(path).orElse(null);
      if (m == null) {
        why.put(path, path + " is not among the binary's modules (vendored or copied code?)");
        return null;
      }
      if (m.replace().isPresent()) {
        Module r = m.replace().get();
        if (r.version().isEmpty() || !r.path().equals(path)) {
          why.put(path, path + " " + m.version() + " is replaced by " + r.path() + (r.version().isEmpty() ? "" : " " + r.version())
              + ": its layout is not the catalogued one");
          return null;
        }
        return versionOrWhy(path, r.version(), why);
      }
      return versionOrWhy(path, m.version(), why);
    }

    private static String versionOrWhy(String path, String v, Map<String, String> why) {
      if (!ModuleVersions.valid(v)) {
        why.put(path, path + " has version " + v + ", not a release");
        return null;
      }
      return v;
    }

    /** The version keying a catalog module ({@link #STD}: Go, as a semantic version). */
    public String version(String module) {
      switch (module) {
        case GRPC:
          return grpc;
        case XNET:
          return xnet;
        case STD:
          return ModuleVersions.goToSemver(goVersion);
        default:
          return null;
      }
    }

    public String whyNoVersion(String module) {
      return whyNot.getOrDefault(module, "unknown");
    }
  }

  private record Entry(String since, Object value, boolean conflict) {
    @Override
    public boolean equals(Object o) {
      return this == o;
    }

    @Override
    public int hashCode() {
      return Objects.hashCode(since);
    }
  }

  private record Section(List<String> observed, Map<String, List<Entry>> fields) {}

  private static final class Embedded {
    static final OffsetsCatalog CATALOG = loadEmbedded();
    static final Map<String, OffsetsCatalog> BEFORE = new java.util.concurrent.ConcurrentHashMap<>();

    private static OffsetsCatalog loadEmbedded() {
      try (InputStream in = OffsetsCatalog.class.getResourceAsStream(RESOURCE)) {
        if (in == null) {
          return EMPTY;
        }
        return parse(in);
      } catch (IOException e) {
        throw new UncheckedIOException("the embedded offsets catalog " + RESOURCE + " is unreadable", e);
      }
    }
  }
}
