package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.code.CapstoneDecoder;
import io.gospan.offsets.code.FunctionCode;
import io.gospan.offsets.resolve.Probe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link FunctionCode} agrees with Go's own disassembler ({@code go tool objdump}, golang.org/x/arch's
 * x86asm) on every function of the probed packages and a sample of the runtime, in real binaries from Go 1.16
 * (stack ABI) to Go 1.26: the function's end, the number of instructions (so every instruction boundary),
 * the address of every {@code RET} and the end of the stack-check prologue. The truth for the prologue is
 * read from objdump's Go-syntax listing ({@code [MOVQ FS:0xfffffff8, CX] [LEAQ -N(SP), R12|AX]
 * CMPQ SP|R12|AX, 0x10(R14|CX) JBE}). The same program linked with {@code -s -w} (no {@code .symtab}, which
 * objdump needs) is decoded from its {@code .gopclntab} entries and must give the same entry-relative
 * answers.
 */
class FunctionCodeIT {
  /** Functions compared: the probed packages, grpc itself (NewStream), main, and the whole runtime. */
  static final String SAMPLE = "^(google\\.golang\\.org/grpc/internal/transport\\.|google\\.golang\\.org/grpc\\."
      + "|golang\\.org/x/net/http2\\.|golang\\.org/x/net/http2/hpack\\.|net/http\\.\\(\\*http2"
      + "|vendor/golang\\.org/x/net/http2/hpack\\.|main\\.|runtime\\.)";

  record Pair(String label, Path plain, Path stripped) {
    @Override
    public String toString() {
      return label;
    }
  }

  static Stream<Pair> binaries() {
    List<Pair> out = new ArrayList<>();
    for (String[] f : new String[][] {
        {"1.16.15", "v1.40.0"}, {"1.17.13", "v1.40.0"}, {"1.22.12", "v1.60.1"}, {"1.26.8", "v1.85.0"}}) {
      Path dir = GoFixtures.fixture(f[0], f[1]);
      out.add(new Pair("fixture go" + f[0] + " grpc " + f[1], dir.resolve("app"), dir.resolve("app.stripped")));
    }
    for (String[] e : new String[][] {
        {}, {"--go", "1.22.12", "--grpc", "v1.60.1"}, {"--go", "1.17.13", "--grpc", "v1.40.0"},
        {"--go", "1.16.15", "--grpc", "v1.40.0"}}) {
      Path plain = GoFixtures.example(List.of(e));
      List<String> s = new ArrayList<>(List.of(e));
      s.add("--stripped");
      Path stripped = GoFixtures.example(s);
      for (String program : List.of("greeter-server", "greeter-client")) {
        out.add(new Pair("examples " + (e.length == 0 ? "default" : String.join(" ", e)) + " " + program,
            plain.resolve(program), stripped.resolve(program)));
      }
    }
    return out.stream();
  }

  /** One function as objdump lists it. */
  record Truth(String name, long entry, long end, int instructions, List<Long> returns, long prologueEnd,
      boolean undecodable) {}

  private static final Pattern TEXT = Pattern.compile("^TEXT (.+)\\(SB\\) .*$");
  private static final Pattern LINE = Pattern.compile("^\\s+\\S+\\t+0x([0-9a-f]+)\\t+([0-9a-f]+)\\t+(.*?)\\s*$");
  private static final Pattern LEA = Pattern.compile("LEAQ (?:-0x[0-9a-f]+|0xf[0-9a-f]{7})\\(SP\\), (R12|AX)");
  private static final Pattern CMP = Pattern.compile("CMPQ (SP|R12|AX), 0x10\\((R14|CX)\\)");

  static Map<String, Truth> objdump(Path binary) throws Exception {
    String out = GoFixtures.run(List.of("go", "tool", "objdump", "-s", SAMPLE, binary.toString()),
        GoFixtures.OFFSETS, 10);
    Map<String, Truth> truth = new LinkedHashMap<>();
    String name = null;
    List<long[]> ins = new ArrayList<>(); // address, length
    List<String> asm = new ArrayList<>();
    boolean vex = false;
    for (String line : (out + "\nTEXT end(SB) -").split("\n")) {
      Matcher t = TEXT.matcher(line);
      if (t.matches()) {
        if (name != null && !ins.isEmpty()) {
          truth.putIfAbsent(name, truth(name, ins, asm, vex));
        }
        name = t.group(1);
        ins = new ArrayList<>();
        asm = new ArrayList<>();
        vex = false;
        continue;
      }
      Matcher l = LINE.matcher(line);
      if (l.matches()) {
        ins.add(new long[] {Long.parseUnsignedLong(l.group(1), 16), l.group(2).length() / 2});
        asm.add(l.group(3));
        // c4/c5 (VEX) and 62 (EVEX) start no other instruction in 64-bit mode; x86asm does not decode them
        // and goes on out of step (e.g. "c5f9ef OUTL AX, DX" for a 4-byte vpxor).
        String b = l.group(2);
        vex |= b.startsWith("c4") || b.startsWith("c5") || b.startsWith("62");
      }
    }
    return truth;
  }

  private static Truth truth(String name, List<long[]> ins, List<String> asm, boolean vex) {
    long entry = ins.get(0)[0];
    long[] last = ins.get(ins.size() - 1);
    List<Long> rets = new ArrayList<>();
    for (int i = 0; i < ins.size(); i++) {
      if (asm.get(i).equals("RET") || asm.get(i).startsWith("RET ")) {
        rets.add(ins.get(i)[0]);
      }
    }
    // The prologue as Go's disassembler prints it.
    long prologueEnd = entry;
    int i = 0;
    boolean tls = false;
    if (i < asm.size() && asm.get(i).equals("MOVQ FS:0xfffffff8, CX")) {
      tls = true;
      i++;
    }
    String reg = "SP";
    Matcher lea = i < asm.size() ? LEA.matcher(asm.get(i)) : null;
    if (lea != null && lea.matches()) {
      reg = lea.group(1);
      i++;
    }
    Matcher cmp = i < asm.size() ? CMP.matcher(asm.get(i)) : null;
    if (cmp != null && cmp.matches() && cmp.group(1).equals(reg) && cmp.group(2).equals(tls ? "CX" : "R14")
        && i + 1 < asm.size() && asm.get(i + 1).startsWith("JBE ")) {
      long target = Long.parseUnsignedLong(asm.get(i + 1).substring(6).trim(), 16);
      long jbeEnd = ins.get(i + 1)[0] + ins.get(i + 1)[1];
      if (target >= jbeEnd && target < last[0] + last[1]) {
        prologueEnd = jbeEnd;
      }
    }
    return new Truth(name, entry, last[0] + last[1], ins.size(), rets, prologueEnd, vex || asm.contains("?"));
  }

  @ParameterizedTest
  @MethodSource("binaries")
  void agreesWithGoObjdump(Pair pair) throws Exception {
    assertThat(pair.plain()).exists();
    assertThat(pair.stripped()).exists();
    Map<String, Truth> truth = objdump(pair.plain());
    List<String> probed = Stream.of(Probe.values()).map(Probe::function).toList();
    List<String> mismatches = new ArrayList<>();
    int rets = 0;
    int prologues = 0;
    int instructions = 0;
    int strippedChecked = 0;
    Map<String, Object> plainCode = new LinkedHashMap<>();
    Map<String, Object> strippedCode = new LinkedHashMap<>();
    Map<String, GoFunction> abi0Entries = new LinkedHashMap<>();
    try (GoBinary plain = GoBinary.open(pair.plain()); GoBinary stripped = GoBinary.open(pair.stripped())) {
      assertThat(stripped.elf().hasSymbols()).as("%s is stripped", pair.stripped()).isFalse();
      Map<String, GoFunction> fns = plain.functions(truth.keySet());
      assertThat(fns.keySet()).as("functions objdump lists, found in .symtab").containsAll(truth.keySet());
      decodeEach(plain, fns.values(), plainCode);
      abi0Entries.putAll(plain.functions(truth.keySet().stream().map(n -> n + ".abi0").toList()));
      decodeEach(stripped, stripped.functionsFromPclntab(truth.keySet()).values(), strippedCode);
    }
    int notComparable = 0;
    int abi0Named = 0;
    for (Truth t : truth.values()) {
      Object c = plainCode.get(t.name());
      if (t.undecodable()) {
        // Go's disassembler printed "?" or met VEX/EVEX (AVX) encodings it does not decode: no truth here.
        notComparable++;
        continue;
      }
      if (!(c instanceof FunctionCode code)) {
        mismatches.add(pair + ": " + t.name() + ": " + c);
        continue;
      }
      String diff = compare(t, code);
      if (diff != null) {
        mismatches.add(pair + ": " + t.name() + ": " + diff);
      }
      rets += t.returns().size();
      instructions += t.instructions();
      if (t.prologueEnd() != t.entry()) {
        prologues++;
      }
      Object s = strippedCode.get(t.name());
      if (s != null) {
        strippedChecked++;
        String rs = s instanceof FunctionCode sc ? relative(sc) : String.valueOf(s);
        if (s instanceof FunctionCode sc && sc.entry() != code.entry()) {
          // .gopclntab names an assembly body like its Go wrapper (runtime.reflectcall for .symtab's
          // runtime.reflectcall.abi0) and the first one wins: then the stripped lookup found the ABI0 body.
          GoFunction abi0 = abi0Entries.get(t.name() + ".abi0");
          if (abi0 == null || abi0.entry() != sc.entry()) {
            mismatches.add(pair + " stripped: " + t.name() + " at 0x" + Long.toHexString(sc.entry())
                + ", neither its .symtab entry nor its .abi0 body's");
          }
          abi0Named++;
        } else if (!rs.equals(relative(code))) {
          mismatches.add(pair + " stripped: " + t.name() + ": " + rs + " vs " + relative(code));
        }
      }
    }
    List<String> probedHere = probed.stream().filter(truth::containsKey).toList();
    String summary = String.format("%s: %d functions compared (%d probed), %d instructions, %d RETs, %d prologues;"
        + " stripped: %d functions from .gopclntab (%d named like an ABI0 body found first); %d not comparable (objdump printed ?"
        + " or met VEX/EVEX); %d mismatches", pair, truth.size() - notComparable, probedHere.size(), instructions,
        rets, prologues, strippedChecked, abi0Named, notComparable, mismatches.size());
    System.out.println("FunctionCodeIT " + summary);
    Path report = GoFixtures.TARGET.resolve("function-code-it.txt");
    Files.writeString(report, summary + "\n" + String.join("\n", mismatches.subList(0, Math.min(15,
        mismatches.size()))) + (mismatches.isEmpty() ? "" : "\n"), java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    assertThat(mismatches).as(summary).isEmpty();
    assertThat(probedHere).as("the transport probes are in the sample")
        .contains(Probe.LOOPY_WRITER_WRITE_HEADER.function(), Probe.HTTP2_SERVER_OPERATE_HEADERS.function());
    // The first function whose result a probe needs (the client stream): its returns are where to read it.
    String newStream = "google.golang.org/grpc/internal/transport.(*http2Client).NewStream";
    assertThat(truth).as("%s in the sample", newStream).containsKey(newStream);
    assertThat(plainCode.get(newStream)).isInstanceOfSatisfying(FunctionCode.class, c -> {
      assertThat(c.returns()).as("RETs of NewStream").isNotEmpty().isEqualTo(truth.get(newStream).returns());
      assertThat(c.hasStackCheck()).isTrue();
    });
    for (String p : probedHere) {
      assertThat(truth.get(p).prologueEnd()).as("%s has a stack-check prologue per objdump", p)
          .isGreaterThan(truth.get(p).entry());
    }
    assertThat(strippedChecked).as("functions found in the stripped binary's .gopclntab")
        .isGreaterThan(truth.size() * 9 / 10);
    assertThat(notComparable).as("functions objdump cannot decode").isLessThan(truth.size() / 20);
    assertThat(abi0Named).as("names that find an ABI0 body in .gopclntab").isLessThan(truth.size() / 50);
  }

  /** Decodes each function on its own: a function that cannot be decoded is recorded, with the reason. */
  private static void decodeEach(GoBinary bin, java.util.Collection<GoFunction> fns, Map<String, Object> out)
      throws Exception {
    for (FunctionCode.CodeRange r : FunctionCode.ranges(bin, fns).values()) {
      try {
        out.put(r.function().name(), FunctionCode.of(bin, r, CapstoneDecoder.get()));
      } catch (io.gospan.offsets.code.UndecodableCodeException e) {
        out.put(r.function().name(), "undecodable: " + e.getMessage());
      }
    }
  }

  private static String compare(Truth t, FunctionCode c) {
    List<String> d = new ArrayList<>();
    if (c.entry() != t.entry()) {
      d.add("entry 0x" + Long.toHexString(c.entry()) + " vs objdump 0x" + Long.toHexString(t.entry()));
    }
    if (c.end() != t.end()) {
      d.add("end 0x" + Long.toHexString(c.end()) + " vs objdump 0x" + Long.toHexString(t.end()));
    }
    if (c.instructions() != t.instructions()) {
      d.add(c.instructions() + " instructions vs objdump " + t.instructions());
    }
    if (!c.returns().equals(t.returns())) {
      d.add("RETs " + hex(c.returns()) + " vs objdump " + hex(t.returns()));
    }
    if (c.prologueEnd() != t.prologueEnd()) {
      d.add("prologue end +" + (c.prologueEnd() - c.entry()) + " vs objdump +" + (t.prologueEnd() - t.entry()));
    }
    return d.isEmpty() ? null : String.join("; ", d);
  }

  /** The answers relative to the entry. */
  private static String relative(FunctionCode c) {
    return "size " + (c.end() - c.entry()) + ", prologue " + c.prologueLength() + ", RETs at "
        + c.returns().stream().map(r -> "+" + (r - c.entry())).collect(Collectors.joining(","))
        + ", " + c.instructions() + " instructions";
  }

  private static String hex(List<Long> l) {
    return l.stream().map(x -> "0x" + Long.toHexString(x)).collect(Collectors.joining(",", "[", "]"));
  }
}
