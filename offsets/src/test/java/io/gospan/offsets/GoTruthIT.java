package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.BuildSetting;
import io.gospan.offsets.buildinfo.Module;
import io.gospan.offsets.dwarf.CompileUnit;
import io.gospan.offsets.dwarf.FunctionParameters;
import io.gospan.offsets.dwarf.Member;
import io.gospan.offsets.dwarf.Parameter;
import io.gospan.offsets.dwarf.Piece;
import io.gospan.offsets.dwarf.StructType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Java inspector agrees with Go's own debug/elf, debug/dwarf, debug/buildinfo and debug/gosym (the
 * gotruth helper) on every value, for Go 1.16 (stack ABI) to 1.26 (DWARF 5) and grpc-go 1.40 to 1.85, each
 * binary also stripped with {@code -s -w}.
 */
class GoTruthIT {
  /** An unstripped binary and the same program linked with {@code -s -w}. */
  record Variant(String label, Supplier<Path[]> build) {
    @Override
    public String toString() {
      return label;
    }
  }

  private static final Map<String, Path[]> BUILT = new ConcurrentHashMap<>();

  static Stream<Variant> variants() {
    List<Variant> v = new ArrayList<>();
    for (String[] f : new String[][] {
        {"1.16.15", "v1.40.0"}, {"1.17.13", "v1.40.0"}, {"1.19.13", "v1.50.1"}, {"1.22.12", "v1.60.1"},
        {"1.26.8", "v1.85.0"}}) {
      v.add(new Variant("fixture go" + f[0] + " grpc " + f[1], () -> {
        Path dir = GoFixtures.fixture(f[0], f[1]);
        return new Path[] {dir.resolve("app"), dir.resolve("app.stripped")};
      }));
    }
    for (String[] f : new String[][] {{"1.22.12", "v1.60.1"}, {"1.26.8", "v1.85.0"}}) {
      v.add(new Variant("fixture go" + f[0] + " grpc " + f[1] + " uncompressed DWARF", () -> {
        Path dir = GoFixtures.fixture(f[0], f[1]);
        return new Path[] {dir.resolve("app.plaindwarf"), dir.resolve("app.stripped")};
      }));
    }
    for (String[] e : new String[][] {
        {}, {"--go", "1.22.12", "--grpc", "v1.60.1"}, {"--go", "1.16.15", "--grpc", "v1.40.0"},
        {"--go", "1.17.13", "--grpc", "v1.40.0"}, {"--go", "/usr/lib/go-1.19/bin/go", "--grpc", "v1.40.0"}}) {
      for (String program : new String[] {"greeter-server", "greeter-client"}) {
        String label = "examples " + (e.length == 0 ? "default" : String.join(" ", e)) + " " + program;
        v.add(new Variant(label, () -> {
          Path plain = GoFixtures.example(List.of(e));
          List<String> s = new ArrayList<>(List.of(e));
          s.add("--stripped");
          Path stripped = GoFixtures.example(s);
          return new Path[] {plain.resolve(program), stripped.resolve(program)};
        }));
      }
    }
    return v.stream();
  }

  private static Path[] build(Variant v) {
    return BUILT.computeIfAbsent(v.label(), k -> v.build().get());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("variants")
  void unstrippedBinaryMatchesGo(Variant variant) throws Exception {
    Path bin = build(variant)[0];
    JsonNode truth = GoFixtures.truth(bin);
    SoftAssertions soft = new SoftAssertions();
    try (GoBinary go = GoBinary.open(bin)) {
      assertThat(truth.path("has_symtab").asBoolean()).as("gotruth sees .symtab").isTrue();
      checkBuildInfo(soft, go.buildInfo(), truth.path("buildinfo"));
      checkFunctions(soft, go, truth, true);
      assertThat(truth.has("dwarf_error")).as("gotruth DWARF error: " + truth.path("dwarf_error")).isFalse();
      checkParams(soft, go, truth);
      checkUnits(soft, go, truth);
      int minor = go.buildInfo().goMinorVersion();
      soft.assertThat(go.dwarf().version()).as("DWARF version").isEqualTo(minor >= 25 ? 5 : 4);
      soft.assertThat(go.usesRegisterAbi()).as("register ABI").isEqualTo(minor >= 17);
      checkStructs(soft, go, truth);
      Map<String, Long> itabs = truthItabs(truth);
      ItabAddresses found = go.itabs(itabs.keySet());
      soft.assertThat(found.source()).isEqualTo(ItabAddresses.Source.SYMTAB);
      soft.assertThat(found.addresses()).as("itabs").isEqualTo(itabs);
      soft.assertThat(itabs).as("probe itabs present").containsKey(GoBinary.ITAB_TCP_CONN);
    }
    soft.assertAll();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("variants")
  void strippedBinaryStillGivesFunctionsAndBuildInfo(Variant variant) throws Exception {
    Path[] bins = build(variant);
    JsonNode full = GoFixtures.truth(bins[0]);
    JsonNode truth = GoFixtures.truth(bins[1]);
    SoftAssertions soft = new SoftAssertions();
    try (GoBinary go = GoBinary.open(bins[1])) {
      assertThat(truth.path("has_symtab").asBoolean()).as("stripped binary has no .symtab").isFalse();
      assertThat(truth.has("dwarf_error")).as("gotruth finds no DWARF").isTrue();
      checkBuildInfo(soft, go.buildInfo(), truth.path("buildinfo"));
      checkFunctions(soft, go, truth, false);
      for (JsonNode f : truth.path("functions")) {
        soft.assertThat(f.path("source").asText()).as("stripped source").isEqualTo("pclntab");
      }
      assertThatThrownBy(go::dwarf).isInstanceOf(DwarfUnavailableException.class)
          .hasMessageContaining("no DWARF");
      // -s -w leaves the loaded layout alone: the itabs found through moduledata.itablinks must be exactly
      // the symbols of the unstripped build.
      Map<String, Long> itabs = truthItabs(full);
      ItabAddresses found = go.itabs(itabs.keySet());
      soft.assertThat(found.source()).as(found.detail()).isEqualTo(ItabAddresses.Source.ITABLINKS);
      soft.assertThat(found.addresses()).as("itabs from itablinks").isEqualTo(itabs);
      soft.assertThat(go.itabs(List.of("*no.Such,net.Conn")).addresses()).isEmpty();
    }
    soft.assertAll();
  }

  private static Map<String, Long> truthItabs(JsonNode truth) {
    Map<String, Long> out = new HashMap<>();
    for (JsonNode i : truth.path("itabs")) {
      out.put(i.path("name").asText().substring("go:itab.".length()), i.path("address").asLong());
    }
    return out;
  }

  private static void checkBuildInfo(SoftAssertions soft, BuildInfo bi, JsonNode t) {
    soft.assertThat(bi.goVersion()).as("go_version").isEqualTo(t.path("go_version").asText());
    soft.assertThat(bi.path()).as("path").isEqualTo(t.path("path").asText());
    soft.assertThat(bi.main().map(GoTruthIT::module).orElse(null)).as("main")
        .isEqualTo(t.path("main").path("path").asText().isEmpty() ? null : moduleJson(t.path("main")));
    List<String> deps = new ArrayList<>();
    for (JsonNode d : t.path("deps")) {
      deps.add(moduleJson(d));
    }
    soft.assertThat(bi.deps().stream().map(GoTruthIT::module).toList()).as("deps").isEqualTo(deps);
    List<String> settings = new ArrayList<>();
    for (JsonNode s : t.path("settings")) {
      settings.add(s.path("key").asText() + "=" + s.path("value").asText());
    }
    soft.assertThat(bi.settings().stream().map(s -> s.key() + "=" + s.value()).toList()).as("settings")
        .isEqualTo(settings);
  }

  private static String module(Module m) {
    return m.path() + " " + m.version() + " " + m.sum() + m.replace().map(r -> " => " + module(r)).orElse("");
  }

  private static String moduleJson(JsonNode m) {
    String s = m.path("path").asText() + " " + m.path("version").asText() + " " + m.path("sum").asText();
    return m.path("replace").isObject() ? s + " => " + moduleJson(m.path("replace")) : s;
  }

  private static void checkFunctions(SoftAssertions soft, GoBinary go, JsonNode truth, boolean hasSymtab)
      throws GoBinaryException {
    Map<String, GoFunction> fns = go.functions(GoFixtures.FUNCTIONS);
    Map<String, GoFunction> pcln = go.functionsFromPclntab(GoFixtures.FUNCTIONS);
    for (JsonNode f : truth.path("functions")) {
      String name = f.path("name").asText();
      GoFunction fn = fns.get(name);
      if (!f.path("found").asBoolean()) {
        soft.assertThat(fn).as(name).isNull();
        continue;
      }
      soft.assertThat(fn).as(name).isNotNull();
      if (fn == null) {
        continue;
      }
      soft.assertThat(fn.entry()).as(name + " entry").isEqualTo(f.path("entry").asLong());
      soft.assertThat(fn.fileOffset()).as(name + " file offset").isEqualTo(f.path("file_offset").asLong());
      soft.assertThat(fn.source().name().toLowerCase()).as(name + " source").isEqualTo(f.path("source").asText());
      if (f.has("pclntab_entry")) {
        soft.assertThat(pcln.get(name)).as(name + " in pclntab").isNotNull();
        if (pcln.get(name) != null) {
          soft.assertThat(pcln.get(name).entry()).as(name + " pclntab entry")
              .isEqualTo(f.path("pclntab_entry").asLong());
        }
      }
    }
    soft.assertThat(fns).as("probe functions found")
        .containsKey("google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader");
  }

  private static void checkParams(SoftAssertions soft, GoBinary go, JsonNode truth) throws GoBinaryException {
    GoBinary.Dwarf dwarf = go.dwarf();
    for (JsonNode p : truth.path("params")) {
      String fn = p.path("func").asText();
      if (p.has("error")) {
        soft.assertThatThrownBy(() -> dwarf.parameters(fn)).as(fn + ": " + p.path("error").asText())
            .isInstanceOf(GoBinaryException.class);
        continue;
      }
      Optional<FunctionParameters> params = dwarf.parameters(fn);
      soft.assertThat(params.isPresent()).as(fn + " found").isEqualTo(p.path("found").asBoolean());
      if (params.isEmpty()) {
        continue;
      }
      soft.assertThat(params.get().lowPc()).as(fn + " low_pc").isEqualTo(p.path("low_pc").asLong());
      soft.assertThat(params.get().abi().name().toLowerCase()).as(fn + " abi").isEqualTo(p.path("abi").asText());
      List<String> expected = new ArrayList<>();
      for (JsonNode q : p.path("params")) {
        expected.add(paramJson(q));
      }
      soft.assertThat(params.get().parameters().stream().map(GoTruthIT::param).toList()).as(fn + " params")
          .isEqualTo(expected);
      checkAbiAgreesWithDwarf(soft, go, fn, params.get());
    }
  }

  /**
   * The calling-convention derivation gives a location for every input parameter, equal to DWARF's wherever
   * DWARF gives one — except Go 1.17/1.18, whose location lists may name a spill slot for a register argument.
   */
  private static void checkAbiAgreesWithDwarf(SoftAssertions soft, GoBinary go, String fn, FunctionParameters dwarf)
      throws GoBinaryException {
    FunctionParameters abi = go.dwarf().parametersByAbi(fn).orElseThrow();
    int minor = go.buildInfo().goMinorVersion();
    boolean spillQuirk = minor == 17 || minor == 18;
    List<Parameter> inputs = dwarf.parameters().stream().filter(p -> !p.isReturn()).toList();
    soft.assertThat(abi.parameters()).extracting(Parameter::name).as(fn + " ABI parameter names")
        .isEqualTo(inputs.stream().map(Parameter::name).toList());
    for (int i = 0; i < Math.min(inputs.size(), abi.parameters().size()); i++) {
      Parameter d = inputs.get(i);
      Parameter a = abi.parameters().get(i);
      soft.assertThat(a.pieces()).as(fn + " " + a.name() + " ABI location").isNotEmpty();
      boolean dwarfComplete = !d.pieces().isEmpty()
          && d.pieces().stream().noneMatch(x -> x.kind() == Piece.Kind.EMPTY);
      boolean dwarfSpill = spillQuirk && d.pieces().stream().anyMatch(x -> x.kind() == Piece.Kind.STACK);
      if (dwarfComplete && !dwarfSpill) {
        soft.assertThat(param(a).replace(" abi", "")).as(fn + " " + a.name() + " ABI vs DWARF")
            .isEqualTo(param(d).replace(" " + d.location().name().toLowerCase(), ""));
      }
    }
    if (fn.endsWith("(*loopyWriter).writeHeader") && go.usesRegisterAbi()) {
      soft.assertThat(abi.parameter("l").orElseThrow().pieces().get(0).registerName()).as("receiver").isEqualTo("RAX");
    }
  }

  private static String param(Parameter p) {
    StringBuilder b = new StringBuilder();
    b.append(p.name()).append(' ').append(p.typeName()).append(' ').append(p.size()).append(' ')
        .append(p.isReturn()).append(' ').append(p.location().name().toLowerCase());
    for (Piece x : p.pieces()) {
      b.append(" [").append(x.size()).append(' ').append(x.kind().name().toLowerCase());
      if (x.kind() == Piece.Kind.REGISTER) {
        b.append(' ').append(x.registerName()).append(' ').append(x.dwarfRegister());
      } else if (x.kind() == Piece.Kind.STACK) {
        b.append(" sp+").append(x.stackOffset()).append(" cfa+").append(x.cfaOffset());
      }
      b.append(']');
    }
    return b.toString();
  }

  private static String paramJson(JsonNode q) {
    StringBuilder b = new StringBuilder();
    b.append(q.path("name").asText()).append(' ').append(q.path("type").asText()).append(' ')
        .append(q.path("size").asLong()).append(' ').append(q.path("is_return").asBoolean()).append(' ')
        .append(q.path("location").asText());
    for (JsonNode x : q.path("pieces")) {
      b.append(" [").append(x.path("size").asLong()).append(' ').append(x.path("kind").asText());
      if (x.path("kind").asText().equals("register")) {
        b.append(' ').append(x.path("register").asText()).append(' ').append(x.path("dwarf_reg").asLong());
      } else if (x.path("kind").asText().equals("stack")) {
        b.append(" sp+").append(x.path("stack_offset").asLong()).append(" cfa+").append(x.path("cfa_offset").asLong());
      }
      b.append(']');
    }
    return b.toString();
  }

  private static void checkUnits(SoftAssertions soft, GoBinary go, JsonNode truth) throws GoBinaryException {
    List<String> expected = new ArrayList<>();
    for (JsonNode u : truth.path("units")) {
      StringBuilder b = new StringBuilder(u.path("name").asText());
      for (JsonNode r : u.path("ranges")) {
        b.append(" [").append(Long.toHexString(r.get(0).asLong())).append(',')
            .append(Long.toHexString(r.get(1).asLong())).append(')');
      }
      expected.add(b.toString());
    }
    List<String> actual = new ArrayList<>();
    for (CompileUnit u : go.dwarf().compileUnits()) {
      StringBuilder b = new StringBuilder(u.name());
      for (CompileUnit.Range r : u.ranges()) {
        b.append(" [").append(Long.toHexString(r.low())).append(',').append(Long.toHexString(r.high())).append(')');
      }
      actual.add(b.toString());
    }
    soft.assertThat(actual).as("compile units and ranges").isEqualTo(expected);
    soft.assertThat(expected).as("gotruth lists units").isNotEmpty();
    GoFunction writeHeader = go.function(GoFixtures.FUNCTIONS.get(0)).orElseThrow();
    soft.assertThat(go.dwarf().compileUnitAt(writeHeader.entry()).map(CompileUnit::name))
        .contains("google.golang.org/grpc/internal/transport");
  }

  private static void checkStructs(SoftAssertions soft, GoBinary go, JsonNode truth) throws GoBinaryException {
    GoBinary.Dwarf dwarf = go.dwarf();
    for (JsonNode s : truth.path("structs")) {
      String name = s.path("name").asText();
      Optional<StructType> st = dwarf.struct(name);
      soft.assertThat(st.isPresent()).as(name + " found").isEqualTo(s.path("found").asBoolean());
      if (st.isEmpty()) {
        continue;
      }
      soft.assertThat(st.get().size()).as(name + " size").isEqualTo(s.path("size").asLong());
      soft.assertThat(dwarf.typeSize(name)).as(name + " typeSize").isEqualTo(OptionalLong.of(s.path("size").asLong()));
      Map<String, String> expected = new LinkedHashMap<>();
      for (JsonNode m : s.path("members")) {
        expected.put(m.path("name").asText(), m.path("offset").asLong() + " " + m.path("type").asText() + " "
            + m.path("size").asLong() + " " + m.path("embedded").asBoolean());
        soft.assertThat(dwarf.memberOffset(name, m.path("name").asText())).as(name + "." + m.path("name").asText())
            .isEqualTo(OptionalLong.of(m.path("offset").asLong()));
        String typeName = m.path("type").asText();
        if (!typeName.isEmpty() && m.path("size").asLong() >= 0) {
          soft.assertThat(dwarf.typeSize(typeName)).as("size of " + typeName)
              .isEqualTo(OptionalLong.of(m.path("size").asLong()));
        }
      }
      Map<String, String> actual = new LinkedHashMap<>();
      for (Member m : st.get().members()) {
        actual.put(m.name(), m.offset() + " " + m.typeName() + " " + m.size() + " " + m.embedded());
      }
      soft.assertThat(actual).as(name + " members").isEqualTo(expected);
    }
    // A dotted path through the embedded net.conn: TCPConn.conn.fd is at conn's offset + fd's offset.
    Optional<StructType> tcp = dwarf.struct("net.TCPConn");
    Optional<StructType> conn = dwarf.struct("net.conn");
    if (tcp.isPresent() && conn.isPresent()) {
      long expected = tcp.get().member("conn").orElseThrow().offset() + conn.get().member("fd").orElseThrow().offset();
      soft.assertThat(dwarf.memberOffset("net.TCPConn", "conn.fd")).isEqualTo(OptionalLong.of(expected));
    }
    soft.assertThat(dwarf.memberOffset("net.TCPConn", "conn.nosuch")).isEmpty();
    soft.assertThat(dwarf.struct("no/such.Type")).isEmpty();
  }
}
