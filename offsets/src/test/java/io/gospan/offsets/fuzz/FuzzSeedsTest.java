package io.gospan.offsets.fuzz;

import static io.gospan.offsets.fuzz.FuzzSeeds.CLIENT_OPERATE;
import static io.gospan.offsets.fuzz.FuzzSeeds.FUNCTION_SIZE;
import static io.gospan.offsets.fuzz.FuzzSeeds.SERVER_OPERATE;
import static io.gospan.offsets.fuzz.FuzzSeeds.TEXT;
import static io.gospan.offsets.fuzz.FuzzSeeds.WRITE_HEADER;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.ItabAddresses;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.GrpcUserAgent;
import io.gospan.offsets.dwarf.CompileUnit;
import io.gospan.offsets.dwarf.FunctionParameters;
import io.gospan.offsets.dwarf.Piece;
import io.gospan.offsets.dwarf.StructType;
import io.gospan.offsets.dwarf.X86Register;
import io.gospan.offsets.pclntab.TypeLayouts;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The fuzz seeds are the committed files, and each reaches deep: the readers answer the probes'
 * questions from it (a seed that failed early would leave the fuzzer to rediscover the format).
 */
class FuzzSeedsTest {
  private static final Path RESOURCES = Path.of("src/test/resources");
  private static final Path INPUTS = RESOURCES.resolve("io/gospan/offsets/fuzz/GoBinaryFuzzTestInputs");

  private static Piece reg(long size, int dwarfRegister) {
    return new Piece(size, Piece.Kind.REGISTER, X86Register.ofDwarf(dwarfRegister).orElseThrow(), dwarfRegister, 0);
  }

  private static GoBinary open(String target, String seed) throws Exception {
    byte[] input = FuzzSeeds.all().get(target).get(seed);
    ByteBuffer image = target.equals("rawImage") ? ByteBuffer.wrap(input) : FuzzImage.elf(input);
    return GoBinary.of(Path.of(seed), image);
  }

  @Test
  void theCommittedSeedsAreWhatTheGeneratorWrites() throws Exception {
    if (Boolean.getBoolean("gospan.fuzz.writeSeeds")) {
      FuzzSeeds.write(RESOURCES);
    }
    List<String> differ = new ArrayList<>();
    for (Map.Entry<String, Map<String, byte[]>> t : FuzzSeeds.all().entrySet()) {
      for (Map.Entry<String, byte[]> s : t.getValue().entrySet()) {
        Path f = INPUTS.resolve(t.getKey()).resolve("seed-" + s.getKey());
        if (!Files.exists(f) || !java.util.Arrays.equals(Files.readAllBytes(f), s.getValue())) {
          differ.add(f.toString());
        }
      }
    }
    assertThat(differ).as("seed files to regenerate (-Dgospan.fuzz.writeSeeds=true)").isEmpty();
  }

  @Test
  void everySeedIsSmall() {
    FuzzSeeds.all().forEach((t, seeds) -> seeds.forEach((name, bytes) ->
        assertThat(bytes.length).as(t + "/" + name).isLessThan(8192)));
  }

  @Test
  void buildInfoSeedsGiveVersionsAndModules() throws Exception {
    BuildInfo inline = open("buildInfo", "inline-go1.26").buildInfo();
    assertThat(inline.goVersion()).isEqualTo("go1.26.8");
    assertThat(inline.path()).isEqualTo("github.com/example/app");
    assertThat(inline.dependency("google.golang.org/grpc").orElseThrow().version()).isEqualTo("v1.85.0");
    assertThat(inline.dependency("google.golang.org/grpc").orElseThrow().replace()).isPresent();
    assertThat(inline.setting("-ldflags")).contains("-s -X \"main.v=A\u00e9\"");
    assertThat(open("buildInfo", "pointer-go1.16").buildInfo().dependency("google.golang.org/grpc")
        .orElseThrow().version()).isEqualTo("v1.40.0");
    assertThat(open("buildInfo", "magic-search").buildInfo().goVersion()).isEqualTo("go1.22.12");
    GoBinary gopath = open("buildInfo", "gopath-user-agent");
    assertThat(gopath.buildInfo().hasModuleInfo()).isFalse();
    assertThat(GrpcUserAgent.find(gopath.elf()).version()).isEqualTo("v1.33.3");
    assertThat(open("rawImage", "inline-go1.26").buildInfo().goVersion()).isEqualTo("go1.26.8");
  }

  @Test
  void pclntabSeedsGiveEveryFunctionInEachFormat() throws Exception {
    List<String> names = FuzzOracle.FUNCTIONS;
    for (String seed : List.of("go1.2", "go1.16", "go1.18", "go1.26-moduledata")) {
      GoBinary bin = open("pclntab", seed);
      Map<String, GoFunction> found = bin.functionsFromPclntab(names);
      assertThat(found).as(seed).hasSize(names.size());
      for (int i = 0; i < names.size(); i++) {
        long entry = TEXT + (long) i * FUNCTION_SIZE;
        assertThat(found.get(names.get(i)).entry()).as(seed + " " + names.get(i)).isEqualTo(entry);
        assertThat(bin.nextFunctionEntry(entry)).as(seed).isEqualTo(OptionalLong.of(entry + FUNCTION_SIZE));
      }
    }
    GoBinary sym = open("pclntab", "symtab");
    assertThat(sym.functions(names).values()).allMatch(f -> f.source() == GoFunction.Source.SYMTAB)
        .hasSize(names.size());
    assertThat(sym.itabs(FuzzSeeds.CONN_ITABS).addresses()).containsOnlyKeys(GoBinary.ITAB_TCP_CONN,
        GoBinary.ITAB_TLS_CONN);
  }

  @Test
  void runtimeTypeSeedsGiveItabsAndStructLayouts() throws Exception {
    for (String seed : List.of("go1.16", "go1.18", "go1.22", "go1.26", "go1.27")) {
      GoBinary bin = open("runtimeTypes", seed);
      ItabAddresses itabs = bin.itabs(FuzzSeeds.CONN_ITABS);
      assertThat(itabs.source()).as(seed + " " + itabs.detail()).isEqualTo(ItabAddresses.Source.ITABLINKS);
      assertThat(itabs.addresses()).as(seed).containsOnlyKeys(GoBinary.ITAB_TCP_CONN, GoBinary.ITAB_TLS_CONN,
          GoBinary.ITAB_GRPC_SYSCALL_CONN);
      TypeLayouts layouts = bin.typeLayouts().orElseThrow();
      assertThat(layouts.memberOffset(List.of("net.TCPConn", "conn", "net.conn", "fd"))).as(seed)
          .contains(OptionalLong.of(0));
      assertThat(layouts.memberOffset(List.of("net.netFD", "pfd", "internal/poll.FD", "Sysfd"))).as(seed)
          .contains(OptionalLong.of(16));
      assertThat(layouts.struct("crypto/tls.Conn").fields()).as(seed).containsEntry("isClient", 16L);
      assertThat(layouts.struct("google.golang.org/grpc/internal/credentials.syscallConn").size()).isEqualTo(32);
      assertThat(open("rawImage", seed).itabs(FuzzSeeds.CONN_ITABS).addresses()).hasSize(3);
    }
  }

  @Test
  void dwarfSeedsGiveStructsParametersAndUnits() throws Exception {
    for (String seed : List.of("dwarf4", "dwarf4-zdebug")) {
      GoBinary bin = open("dwarf", seed);
      GoBinary.Dwarf d = bin.dwarf();
      assertThat(d.version()).isEqualTo(4);
      assertThat(d.compileUnits()).extracting(CompileUnit::name)
          .containsExactly("runtime", "google.golang.org/grpc/internal/transport", "main");
      assertThat(d.compileUnits().get(1).ranges()).hasSize(2);
      assertThat(d.compileUnitAt(TEXT + 3 * FUNCTION_SIZE).orElseThrow().name()).isEqualTo("main");
      assertThat(d.memberOffset("net.netFD", "pfd.Sysfd")).hasValue(16);
      assertThat(d.memberOffset("net.TCPConn", "conn.fd")).hasValue(0);
      assertThat(d.memberOffset("net.TCPConn", "conn.fd.pfd")).as("not through a pointer").isEmpty();
      assertThat(d.struct("internal/poll.FD").orElseThrow().members()).extracting(m -> m.offset())
          .containsExactly(0L, 16L, 24L);
      assertThat(d.struct("net.TCPConn").orElseThrow().members().get(0).embedded()).isTrue();
      assertThat(d.typeSize("[2]int")).hasValue(16);
      assertThat(d.typeSize("main.myint")).hasValue(8);
      assertThat(d.struct("runtime.g")).isEmpty();
      FunctionParameters p = d.parameters(WRITE_HEADER).orElseThrow();
      assertThat(p.parameter("l").orElseThrow().pieces()).containsExactly(reg(8, 0));
      assertThat(p.parameter("streamID").orElseThrow().pieces()).containsExactly(reg(4, 3));
      assertThat(p.parameter("hf").orElseThrow().pieces()).hasSize(3);
      assertThat(p.parameter("onWrite").orElseThrow().pieces().get(0).stackOffset()).isEqualTo(16);
      assertThat(p.parameter("~r0").orElseThrow().isReturn()).isTrue();
      FunctionParameters abi = d.parametersByAbi(WRITE_HEADER).orElseThrow();
      if (bin.usesRegisterAbi()) {
        assertThat(abi.parameter("hf").orElseThrow().pieces()).extracting(Piece::register)
            .containsExactly(X86Register.RDI, X86Register.RSI, X86Register.R8);
      } else { // go1.16: l at SP+8, streamID SP+16, endStream SP+20, hf SP+24
        assertThat(abi.parameter("hf").orElseThrow().pieces().get(0).stackOffset()).isEqualTo(24);
      }
      assertThat(abi.parameter("f").orElseThrow().pieces()).hasSize(1);
      assertThat(d.parameters(CLIENT_OPERATE).orElseThrow().parameter("frame").orElseThrow().pieces())
          .containsExactly(reg(8, 3));
      assertThat(d.parametersByAbi(SERVER_OPERATE).orElseThrow().parameters()).hasSize(4);
      assertThat(d.parameters("main.main")).isPresent();
    }
    GoBinary.Dwarf forms = open("dwarf", "dwarf-forms").dwarf();
    assertThat(forms.compileUnits()).extracting(CompileUnit::name)
        .containsExactly("runtime", "google.golang.org/grpc/internal/transport", "crypto/tls", "types", "partial");
    assertThat(forms.struct("net.netFD").orElseThrow().members()).extracting(m -> m.name() + "@" + m.offset())
        .containsExactly("pfd@0", "family@64", "sotype@68", "isConnected@72", "net@76", "laddr@40", "raddr@48");
    assertThat(forms.struct("internal/poll.FD").orElseThrow().members()).extracting(m -> m.name() + "@" + m.offset())
        .containsExactly("fdmu@0", "Sysfd@16", "isFile@24", "pd@32");
    assertThat(forms.memberOffset("net.netFD", "pfd.Sysfd")).hasValue(16);
    assertThat(forms.typeSize("uintptr")).hasValue(8);
    assertThat(forms.typeSize("main.fd")).as("typedef of a pointer without a size: the address size").hasValue(8);
    assertThat(forms.struct("golang.org/x/net/http2.MetaHeadersFrame").orElseThrow().members())
        .extracting(m -> m.name() + "@" + m.offset() + ":" + m.typeName() + (m.embedded() ? "*" : ""))
        .containsExactly("HeadersFrame@0:int*", "Fields@8:int");
    assertThat(forms.memberOffset("crypto/tls.Conn", "isClient")).hasValue(16);
    assertThat(forms.memberOffset("runtime.g", "goid")).hasValue(152);
    for (String seed : List.of("dwarf5", "dwarf5-compressed")) {
      GoBinary.Dwarf d = open("dwarf", seed).dwarf();
      assertThat(d.version()).isEqualTo(5);
      assertThat(d.compileUnits()).extracting(CompileUnit::name)
          .containsExactly("runtime", "google.golang.org/grpc/internal/transport");
      assertThat(d.compileUnits().get(0).ranges()).hasSize(5);
      assertThat(d.memberOffset("net.TCPConn", "conn.fd")).hasValue(0);
      assertThat(d.memberOffset("net.netFD", "pfd.Sysfd")).hasValue(16);
      assertThat(d.memberOffset("google.golang.org/grpc/internal/transport.loopyWriter", "framer")).hasValue(8);
      StructType tcp = d.struct("net.TCPConn").orElseThrow();
      assertThat(tcp.members().get(0).typeName()).isEqualTo("net.conn");
      FunctionParameters p = d.parameters(WRITE_HEADER).orElseThrow();
      assertThat(p.lowPc()).isEqualTo(TEXT);
      assertThat(p.parameter("l").orElseThrow().pieces()).containsExactly(reg(8, 0));
      assertThat(p.parameter("streamID").orElseThrow().pieces()).containsExactly(reg(8, 3));
      assertThat(p.parameter("onWrite").orElseThrow().pieces().get(0).stackOffset()).isEqualTo(16);
      assertThat(d.parametersByAbi(WRITE_HEADER).orElseThrow().parameters()).hasSize(5); // ~r0 unmarked here
    }
  }
}
