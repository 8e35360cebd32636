package io.gospan.contractgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The generator on small BPF objects compiled here (clang -target bpf -g, read back with
 * bpftool, as the build does): what it derives from the tags, and that it refuses tags and enums
 * that disagree.
 */
class ContractGeneratorIT {

  @TempDir Path dir;

  private static final String PRELUDE =
      """
      typedef unsigned char __u8;
      typedef int __s32;
      typedef unsigned long long __u64;
      #define SEC(n) __attribute__((section(n), used))
      #define GOSPAN_TAG(t) __attribute__((btf_decl_tag(t)))
      #define GOSPAN_PROBE(id, function) GOSPAN_TAG("gospan:probe=" #id) GOSPAN_TAG("gospan:function=" function)
      #define GOSPAN_SERVER(copy) GOSPAN_TAG("gospan:server=" #copy)
      #define GOSPAN_EVENT(kind) GOSPAN_TAG("gospan:event=" #kind)
      #define GOSPAN_LAZY GOSPAN_TAG("gospan:lazy")
      #define GO_ARG(probe, param, word) GOSPAN_TAG("gospan:arg=" #probe " " param " " #word)
      #define GO_MEMBER(path) GOSPAN_TAG("gospan:member=" path)
      #define GO_NEEDS(...) GOSPAN_TAG("gospan:needs=" #__VA_ARGS__)
      #define GO_COPY(name, http2, hpack, embed) GOSPAN_TAG("gospan:copy=" #name ";" http2 ";" hpack ";" embed)
      char LICENSE[] SEC("license") = "GPL";
      struct go_loc { __u8 kind; __u8 dwarf_reg; __u8 _pad[2]; __s32 sp_offset; };
      """;

  private static final String TWO_PROBES =
      PRELUDE
          + """
          enum gospan_probe { PROBE_A = 0, PROBE_B_X = 1, PROBE_COUNT = 2 };
          struct copy_offsets { struct go_loc a_x GO_ARG(PROBE_COPY_X, "x", 1); __s32 m GO_MEMBER("{http2}T f") GO_NEEDS(PROBE_COPY_X); };
          struct go_offsets {
            struct go_loc a_x GO_ARG(PROBE_A, "x", 0);
            __s32 t_f GO_MEMBER("pkg.T f pkg.U g") GO_NEEDS(PROBE_A, PROBE_B_X);
            __s32 opt GO_MEMBER("pkg.T h");
            struct copy_offsets b GO_COPY(B, "x.y/http2.", "", "");
          };
          enum gospan_side { SIDE_CLIENT = 0, SIDE_SERVER = 1 };
          enum gospan_probe_set { PROBE_SET_STREAMS = 0, PROBE_SET_HEADERS = 1 };
          struct gospan_contract { struct go_offsets o; enum gospan_probe p; enum gospan_side s; enum gospan_probe_set ps; };
          struct gospan_contract *unused_contract __attribute__((unused));
          SEC("uprobe") GOSPAN_PROBE(PROBE_A, "pkg.(*T).a") GOSPAN_EVENT(KIND_A) int uprobe_a(void *ctx) { return 0; }
          SEC("uprobe") GOSPAN_PROBE(PROBE_B_X, "pkg.(*T).b") GOSPAN_SERVER(srv) GOSPAN_LAZY int uprobe_b(void *ctx) { return 0; }
          """;

  private static final List<String> SETS = List.of("streams", "headers");

  private Btf compile(String c) throws Exception {
    Path src = dir.resolve("t.c");
    Path obj = dir.resolve("t.o");
    Files.writeString(src, c, StandardCharsets.UTF_8);
    Process p = new ProcessBuilder("clang", "-O2", "-g", "-target", "bpf", "-c", src.toString(), "-o", obj.toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("clang: " + out).isZero();
    return Btf.read(obj, ContractGenerator.defaultBpftool());
  }

  @Test
  void derivesProbesAndFieldsFromTheTags() throws Exception {
    Btf btf = compile(TWO_PROBES);
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    assertThat(probes).containsExactly(
        new ProbeTags.ProbeSpec("A", 0, "uprobe_a", "pkg.(*T).a", null, "KIND_A", false),
        new ProbeTags.ProbeSpec("B_X", 1, "uprobe_b", "pkg.(*T).b", "srv", null, true));
    assertThat(GoFacts.fields(btf, probes)).containsExactly(
        new GoFacts.FieldSpec("A_X", "a_x", "arg", List.of("x"), 0, List.of("A"), true, false, null),
        new GoFacts.FieldSpec("T_F", "t_f", "member", List.of("pkg.T", "f", "pkg.U", "g"), 0, List.of("A", "B_X"), true, false, null),
        new GoFacts.FieldSpec("OPT", "opt", "member", List.of("pkg.T", "h"), 0, List.of(), true, false, null),
        new GoFacts.FieldSpec("B_A_X", "b.a_x", "arg", List.of("x"), 1, List.of("B_X"), true, false, "B"),
        new GoFacts.FieldSpec("B_M", "b.m", "member", List.of("x.y/http2.T", "f"), 0, List.of("B_X"), true, false, "B"));
    String probeEnum = ProbeWriter.write(probes, SETS);
    assertThat(probeEnum).contains("A(0, \"uprobe_a\", \"pkg.(*T).a\", null, false, false, false, false, null, false, true, EnumSet.noneOf(ProbeSet.class), EnumSet.noneOf(ProbeSet.class))")
        .contains("B_X(1, \"uprobe_b\", \"pkg.(*T).b\", HttpServer.SRV, true, false, false, false, null, false, false, EnumSet.noneOf(ProbeSet.class), EnumSet.noneOf(ProbeSet.class))");
    assertThat(GrpcProbeWriter.write(probes)).contains("A(Probe.A, ProbeKind.KIND_A, false)")
        .contains("B_X(Probe.B_X, null, false)");
  }

  @Test
  void atReturnsRegisterAbiParentsAndPointerFacts() throws Exception {
    Btf btf = compile(TWO_PROBES
        .replace("#define GO_NEEDS", "#define GO_POINTER(path) GOSPAN_TAG(\"gospan:pointer=\" path)\n#define GO_NEEDS")
        .replace("__s32 opt GO_MEMBER(\"pkg.T h\");", "__s32 opt GO_MEMBER(\"pkg.T h\"); __s32 opt_ptr GO_POINTER(\"pkg.T h\") GO_NEEDS(PROBE_B_X);")
        .replace("GOSPAN_SERVER(srv) GOSPAN_LAZY", "GOSPAN_TAG(\"gospan:at_returns\") GOSPAN_TAG(\"gospan:register_abi\") GOSPAN_TAG(\"gospan:parents\") GOSPAN_TAG(\"gospan:in_process\")"));
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    assertThat(probes.get(1)).isEqualTo(
        new ProbeTags.ProbeSpec("B_X", 1, "uprobe_b", "pkg.(*T).b", null, null, false, true, true, true, true));
    assertThat(GoFacts.fields(btf, probes)).contains(
        new GoFacts.FieldSpec("OPT_PTR", "opt_ptr", "pointer", List.of("pkg.T", "h"), 0, List.of("B_X"), true, false, null));
    assertThat(ProbeWriter.write(probes, SETS))
        .contains("B_X(1, \"uprobe_b\", \"pkg.(*T).b\", null, false, true, true, true, null, false, false, EnumSet.noneOf(ProbeSet.class), EnumSet.noneOf(ProbeSet.class))");
    assertThat(GrpcProbeWriter.write(probes)).contains("B_X(Probe.B_X, null, true)");
    assertThat(ProbeFieldWriter.write(GoFacts.fields(btf, probes)))
        .contains("OPT_PTR(Kind.POINTER, EnumSet.of(Probe.B_X), true, false, null, 0, \"pkg.T\", \"h\")");
  }

  @Test
  void runtimeTypesTagOnAMemberOnly() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("__s32 opt GO_MEMBER(\"pkg.T h\");",
        "__s32 opt GO_MEMBER(\"pkg.T h\") GOSPAN_TAG(\"gospan:uncatalogued\") GOSPAN_TAG(\"gospan:rtype\");"));
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    assertThat(GoFacts.fields(btf, probes)).contains(
        new GoFacts.FieldSpec("OPT", "opt", "member", List.of("pkg.T", "h"), 0, List.of(), false, true, null));
    assertThat(ProbeFieldWriter.write(GoFacts.fields(btf, probes)))
        .contains("OPT(Kind.MEMBER, EnumSet.noneOf(Probe.class), false, true, null, 0, \"pkg.T\", \"h\")");
    Btf onArg = compile(TWO_PROBES.replace("GO_ARG(PROBE_A, \"x\", 0);", "GO_ARG(PROBE_A, \"x\", 0) GOSPAN_TAG(\"gospan:rtype\");"));
    assertThatThrownBy(() -> GoFacts.fields(onArg, ProbeTags.probes(onArg)))
        .hasMessageContaining("GO_RTYPE is for a GO_MEMBER");
  }

  @Test
  void aProbeMaySendHeaderEventsAndStreamParents() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("GOSPAN_EVENT(KIND_A)", "GOSPAN_EVENT(KIND_A) GOSPAN_TAG(\"gospan:parents\")"));
    assertThat(GrpcProbeWriter.write(ProbeTags.probes(btf))).contains("A(Probe.A, ProbeKind.KIND_A, true)");
  }

  @Test
  void probeSetsPastGuardAndAlternativeFunctions() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("GOSPAN_PROBE(PROBE_A, \"pkg.(*T).a\")",
        "GOSPAN_PROBE(PROBE_A, \"pkg.(*T).a|pkg.(*T).A\") GOSPAN_TAG(\"gospan:set=streams\") GOSPAN_TAG(\"gospan:past_guard\")"));
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    assertThat(probes.get(0)).isEqualTo(new ProbeTags.ProbeSpec("A", 0, "uprobe_a", "pkg.(*T).a|pkg.(*T).A", null, "KIND_A",
        false, false, false, false, false, "streams", true));
    assertThat(ProbeWriter.write(probes, SETS))
        .contains("A(0, \"uprobe_a\", \"pkg.(*T).a|pkg.(*T).A\", null, false, false, false, false, ProbeSet.STREAMS, true, true, EnumSet.noneOf(ProbeSet.class), EnumSet.noneOf(ProbeSet.class))")
        .contains("B_X(1, \"uprobe_b\", \"pkg.(*T).b\", HttpServer.SRV, true, false, false, false, null, false, false, EnumSet.noneOf(ProbeSet.class), EnumSet.noneOf(ProbeSet.class))");
    Btf badSet = compile(TWO_PROBES.replace("GOSPAN_EVENT(KIND_A)", "GOSPAN_EVENT(KIND_A) GOSPAN_TAG(\"gospan:set=fast\")"));
    assertThatThrownBy(() -> ProbeTags.probes(badSet)).hasMessageContaining("GOSPAN_SET(fast) is none of [headers, streams]");
    Btf both = compile(TWO_PROBES.replace("GOSPAN_EVENT(KIND_A)",
        "GOSPAN_EVENT(KIND_A) GOSPAN_TAG(\"gospan:past_guard\") GOSPAN_TAG(\"gospan:at_returns\")"));
    assertThatThrownBy(() -> ProbeTags.probes(both)).hasMessageContaining("one attach point per probe");
    Btf empty = compile(TWO_PROBES.replace("\"pkg.(*T).a\"", "\"pkg.(*T).a|\""));
    assertThatThrownBy(() -> ProbeTags.probes(empty)).hasMessageContaining("an empty alternative");
  }

  @Test
  void refusesAnIdWithoutAProgram() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("GOSPAN_PROBE(PROBE_B_X, \"pkg.(*T).b\") GOSPAN_SERVER(srv) GOSPAN_LAZY", ""));
    assertThatThrownBy(() -> ProbeTags.probes(btf)).hasMessageContaining("PROBE_B_X has no program");
  }

  @Test
  void refusesTwoProgramsForOneId() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("GOSPAN_PROBE(PROBE_B_X, \"pkg.(*T).b\")", "GOSPAN_PROBE(PROBE_A, \"pkg.(*T).b\")"));
    assertThatThrownBy(() -> ProbeTags.probes(btf)).hasMessageContaining("PROBE_A is the probe of two programs");
  }

  @Test
  void refusesATagNamingNoProbe() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("GO_NEEDS(PROBE_A, PROBE_B_X)", "GO_NEEDS(PROBE_A, PROBE_C)"));
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    assertThatThrownBy(() -> GoFacts.fields(btf, probes)).hasMessageContaining("PROBE_C is not a probe");
  }

  @Test
  void refusesIdsThatAreNotACountFromZero() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("PROBE_COUNT = 2", "PROBE_COUNT = 3"));
    assertThatThrownBy(() -> ProbeTags.probes(btf)).hasMessageContaining("not 0..PROBE_COUNT-1");
  }

  @Test
  void refusesAMemberWithoutItsGoFact() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("__s32 opt GO_MEMBER(\"pkg.T h\");", "__s32 opt;"));
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    assertThatThrownBy(() -> GoFacts.fields(btf, probes)).hasMessageContaining("go_offsets.opt: needs exactly one of");
  }

  @Test
  void startsSpansAndRawMessageFromTheTags() throws Exception {
    Btf btf = compile(TWO_PROBES.replace("GOSPAN_EVENT(KIND_A)",
        "GOSPAN_EVENT(KIND_A) GOSPAN_TAG(\"gospan:starts=client\") GOSPAN_TAG(\"gospan:spans=any client, server\") "
            + "GOSPAN_TAG(\"gospan:raw_message\")"));
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    assertThat(probes.get(0).starts()).isEqualTo("client");
    assertThat(probes.get(0).rawMessage()).isTrue();
    assertThat(probes.get(0).spanSets("client")).containsExactly("streams", "headers");
    assertThat(probes.get(0).spanSets("server")).containsExactly("streams", "headers");
    assertThat(probes.get(1).spans()).isEmpty();
    assertThat(ProbeWriter.write(probes, SETS))
        .contains("true, EnumSet.of(ProbeSet.STREAMS, ProbeSet.HEADERS), EnumSet.of(ProbeSet.STREAMS, ProbeSet.HEADERS))")
        .contains("    /** {@code PROBE_SET_STREAMS}. */\n    STREAMS,\n");
    assertThat(ProbeKindWriter.write(probes)).contains("  KIND_A(Side.CLIENT, true);");

    Btf inSet = compile(TWO_PROBES.replace("GOSPAN_EVENT(KIND_A)",
        "GOSPAN_EVENT(KIND_A) GOSPAN_TAG(\"gospan:set=headers\") GOSPAN_TAG(\"gospan:spans=any server\")"));
    assertThat(ProbeTags.probes(inSet).get(0).spanSets("server")).containsExactly("headers");
    Btf otherSet = compile(TWO_PROBES.replace("GOSPAN_EVENT(KIND_A)",
        "GOSPAN_EVENT(KIND_A) GOSPAN_TAG(\"gospan:set=headers\") GOSPAN_TAG(\"gospan:spans=streams server\")"));
    assertThatThrownBy(() -> ProbeTags.probes(otherSet)).hasMessageContaining("a probe set the probe is in ([headers], or any)");
    Btf badSide = compile(TWO_PROBES.replace("GOSPAN_EVENT(KIND_A)", "GOSPAN_EVENT(KIND_A) GOSPAN_TAG(\"gospan:spans=any peer\")"));
    assertThatThrownBy(() -> ProbeTags.probes(badSide)).hasMessageContaining("peer is none of [client, server] (enum gospan_side)");
    Btf noEvent = compile(TWO_PROBES.replace("GOSPAN_LAZY", "GOSPAN_LAZY GOSPAN_TAG(\"gospan:starts=server\")"));
    assertThatThrownBy(() -> ProbeTags.probes(noEvent)).hasMessageContaining("GOSPAN_STARTS(server) needs a GOSPAN_EVENT");
    Btf disagree = compile(TWO_PROBES.replace("GOSPAN_LAZY", "GOSPAN_LAZY GOSPAN_EVENT(KIND_A) GOSPAN_TAG(\"gospan:starts=server\")"));
    assertThatThrownBy(() -> ProbeTags.probes(disagree)).hasMessageContaining("send GOSPAN_EVENT(KIND_A) but disagree");
  }

  @Test
  void accessorsInTheMembersWidths() throws Exception {
    String structs = GrpcStructsWriter.write(compile(TWO_PROBES));
    assertThat(structs).contains("  public static final class GoLoc {")
        .contains("    public static int kind(ByteBuffer b, int at) {\n      return Byte.toUnsignedInt(b.get(at + 0));")
        .contains("    public static void spOffset(ByteBuffer b, int at, int v) {\n      b.putInt(at + 4, v);")
        .doesNotContain("_pad(");
  }

  @Test
  void mapsAndSettingsByTheirNamesAndSizes() throws Exception {
    Btf btf = compile(TWO_PROBES + """
        struct { int type; int max_entries; } my_map SEC(".maps");
        const volatile __u8 my_flag = 1;
        const volatile __u64 my_bytes = 0;
        """);
    assertThat(GrpcObjectWriter.write(btf)).contains("    /** {@code my_map}. */\n    MY_MAP(\"my_map\");\n")
        .contains("    MY_FLAG(\"my_flag\", 1),\n").contains("    MY_BYTES(\"my_bytes\", 8);\n");
  }

  @Test
  void aJavaEnumPerTaggedContractMember() throws Exception {
    String tagged = TWO_PROBES.replace("enum gospan_probe_set ps; };",
        "enum gospan_probe_set ps; enum conn_status cs GOSPAN_TAG(\"gospan:java_enum=io.gospan.receiver.probe.ConnStatus CONN_\"); };")
        .replace("struct gospan_contract {", "enum conn_status { CONN_OK = 0, CONN_TOO_MANY_WRAPPERS = 3 };\nstruct gospan_contract {");
    Btf btf = compile(tagged);
    Map<String, String> receiver = JavaEnumWriter.write(btf, "io.gospan.receiver.");
    assertThat(receiver).containsOnlyKeys("io/gospan/receiver/probe/ConnStatus.java");
    assertThat(receiver.get("io/gospan/receiver/probe/ConnStatus.java")).contains("package io.gospan.receiver.probe;")
        .contains("public enum ConnStatus {").contains("  /** {@code CONN_OK}. */\n  OK(0),\n")
        .contains("  TOO_MANY_WRAPPERS(3);\n");
    assertThat(JavaEnumWriter.write(btf, "io.gospan.offsets.")).isEmpty();
    Btf badPrefix = compile(tagged.replace("ConnStatus CONN_", "ConnStatus STATUS_"));
    assertThatThrownBy(() -> JavaEnumWriter.write(badPrefix, "io.gospan.receiver."))
        .hasMessageContaining("CONN_OK does not start with STATUS_");
  }

  /**
   * The repository's own C (bpf/*.h, bpf/*.c, built by its Makefile) with one value added to {@code
   * enum conn_status} and one to {@code enum stream_parent_via}, nothing else: the generated Java has
   * them, compiles, and decodes the new values (the receiver's {@code gospan.connection.unidentified}
   * is the constant's name in lower case: HeaderEventDecoderTest).
   */
  @Test
  void aValueAddedInCIsInTheGeneratedJavaWithNoHandEdit() throws Exception {
    Path bpf = dir.resolve("bpf");
    Files.createDirectories(bpf);
    try (var files = Files.list(Path.of("..").toRealPath())) {
      for (Path f : files.filter(f -> f.toString().matches(".*(\\.h|\\.c|Makefile)$")).toList()) {
        Files.copy(f, bpf.resolve(f.getFileName()));
      }
    }
    Path header = bpf.resolve("grpc_events.h");
    String c = Files.readString(header);
    String lastStatus = "\tCONN_NO_LOAD_BIAS = 7,";
    String lastVia = "\tVIA_PARENT_GOROUTINE = 2,";
    assertThat(c).contains(lastStatus, lastVia);
    Files.writeString(header, c.replace(lastStatus, lastStatus + "\n\tCONN_PEER_VANISHED = 8, /* added by a test */")
        .replace(lastVia, lastVia + "\n\tVIA_SCHEDULER = 3, /* added by a test */"));
    Path object = dir.resolve("out/grpc.bpf.o");
    Process make = new ProcessBuilder("make", "-C", bpf.toString(), "OUTPUT=" + dir.resolve("out"), object.toString())
        .redirectErrorStream(true).start();
    String log = new String(make.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(make.waitFor(300, TimeUnit.SECONDS)).isTrue();
    assertThat(make.exitValue()).as("make: " + log).isZero();

    Path java = dir.resolve("java");
    ContractGenerator.main(new String[] {object.toString(), java.toString(), "receiver"});
    Path status = java.resolve("io/gospan/receiver/probe/ConnStatus.java");
    Path via = java.resolve("io/gospan/receiver/event/StreamParentVia.java");
    assertThat(Files.readString(status)).contains("  PEER_VANISHED(8);");
    assertThat(Files.readString(via)).contains("  SCHEDULER(3);");

    Path classes = dir.resolve("classes");
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertThat(javac.run(null, null, null, "-d", classes.toString(), status.toString(), via.toString())).isZero();
    try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, null)) {
      assertThat(decode(loader, "io.gospan.receiver.probe.ConnStatus", 8)).isEqualTo("PEER_VANISHED");
      assertThat(decode(loader, "io.gospan.receiver.probe.ConnStatus", 7)).isEqualTo("NO_LOAD_BIAS");
      assertThat(decode(loader, "io.gospan.receiver.probe.ConnStatus", 9)).isNull();
      assertThat(decode(loader, "io.gospan.receiver.event.StreamParentVia", 3)).isEqualTo("SCHEDULER");
    }
  }

  /** {@code cls.of(value).name()}, null when {@code of} returns null. */
  private static String decode(ClassLoader loader, String cls, int value) throws Exception {
    Object constant = loader.loadClass(cls).getMethod("of", int.class).invoke(null, value);
    return constant == null ? null : ((Enum<?>) constant).name();
  }
}
