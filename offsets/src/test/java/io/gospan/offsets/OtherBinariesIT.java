package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.ElfSection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Go binaries outside the main matrix: GOPATH mode (no modules) and other architectures. */
class OtherBinariesIT {
  private static final Path SRC = GoFixtures.OFFSETS.resolve("src/test/go/fixtures/hello");
  private static final Path OUT = GoFixtures.TARGET.resolve("go-fixtures/hello");

  private static Path build(String name, String... env) throws IOException {
    Path bin = OUT.resolve(name);
    if (Files.exists(bin)) {
      return bin;
    }
    Path gopath = OUT.resolve("gopath");
    Path pkg = gopath.resolve("src/hello");
    Files.createDirectories(pkg);
    Files.copy(SRC.resolve("main.go"), pkg.resolve("main.go"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    List<String> cmd = new ArrayList<>(List.of("env", "GOPATH=" + gopath, "GO111MODULE=off", "GOFLAGS=",
        "GOTOOLCHAIN=local", "CGO_ENABLED=0"));
    cmd.addAll(List.of(env)); // later assignments win in env(1)
    cmd.addAll(List.of("go", "build", "-o", bin.toString(), "."));
    GoFixtures.run(cmd, pkg, 10);
    return bin;
  }

  @Test
  void aGopathModeBinaryHasNoModuleList() throws Exception {
    Path bin = build("hello-gopath");
    JsonNode truth = GoFixtures.truth(bin).path("buildinfo");
    try (GoBinary go = GoBinary.open(bin)) {
      BuildInfo bi = go.buildInfo();
      assertThat(bi.goVersion()).isEqualTo(truth.path("go_version").asText());
      assertThat(bi.path()).isEqualTo(truth.path("path").asText()).isEqualTo("hello");
      assertThat(truth.path("main").path("path").asText()).as("Go sees no main module").isEmpty();
      assertThat(bi.hasModuleInfo()).isFalse();
      assertThat(bi.main()).isEmpty();
      assertThat(bi.deps()).isEmpty();
      assertThat(go.function("main.main")).isPresent();
      // position-dependent: the read-only segment holds .rodata, where string literals are
      assertThat(go.elf().type()).isEqualTo(ElfFile.ET_EXEC);
      assertThat(go.elf().positionIndependent()).isFalse();
      long[] ro = go.elf().readOnlyData().orElseThrow();
      ElfSection rodata = go.elf().section(".rodata").orElseThrow();
      assertThat(rodata.addr()).isGreaterThanOrEqualTo(ro[0]);
      assertThat(rodata.addr() + rodata.size()).isLessThanOrEqualTo(ro[1]);
    }
  }

  @Test
  void anExternallyLinkedPieFindsFunctionsThroughModuledata() throws Exception {
    // C start-up code precedes runtime.text in .text here, so pclntab offsets must be based on
    // moduledata.text, not on the section address.
    Path bin = build("hello-pie-external", "CGO_ENABLED=1", "GOFLAGS=-buildmode=pie -ldflags=-linkmode=external");
    List<String> names = List.of("main.main", "runtime.main", "fmt.Fprintln");
    JsonNode truth = GoFixtures.truth(bin, names, List.of());
    try (GoBinary go = GoBinary.open(bin)) {
      Map<String, GoFunction> fns = go.functions(names);
      Map<String, GoFunction> pcln = go.functionsFromPclntab(names);
      for (JsonNode f : truth.path("functions")) {
        String name = f.path("name").asText();
        assertThat(fns.get(name).entry()).as(name).isEqualTo(f.path("entry").asLong());
        assertThat(fns.get(name).fileOffset()).as(name).isEqualTo(f.path("file_offset").asLong());
        assertThat(pcln.get(name).entry()).as(name + " from pclntab").isEqualTo(f.path("pclntab_entry").asLong());
      }
      long runtimeText = go.elf().symbols(List.of("runtime.text")).get("runtime.text").value();
      assertThat(go.elf().section(".text").orElseThrow().addr()).as("C code before runtime.text")
          .isLessThan(runtimeText);
      // a PIE's addresses move with its load bias: the read-only range and the code's start are link-time
      // addresses, which the BPF programs compare after subtracting mm->start_code - executableStart()
      assertThat(go.elf().type()).isEqualTo(ElfFile.ET_DYN);
      assertThat(go.elf().positionIndependent()).isTrue();
      long[] ro = go.elf().readOnlyData().orElseThrow();
      ElfSection rodata = go.elf().section(".rodata").orElseThrow();
      assertThat(rodata.addr()).isBetween(ro[0], ro[1] - rodata.size());
      ElfSection text = go.elf().section(".text").orElseThrow();
      assertThat(go.elf().executableStart().orElseThrow()).isLessThanOrEqualTo(text.addr());
      assertThat(go.elf().loadSegmentFor(text.addr()).orElseThrow().vaddr())
          .isEqualTo(go.elf().executableStart().orElseThrow());
    }
  }

  @Test
  void otherArchitecturesAreRejected() throws Exception {
    Path arm64 = build("hello-arm64", "GOARCH=arm64");
    Path i386 = build("hello-386", "GOARCH=386");
    assertThatThrownBy(() -> GoBinary.open(arm64)).isInstanceOf(UnsupportedArchitectureException.class)
        .hasMessageContaining("e_machine 183");
    assertThatThrownBy(() -> GoBinary.open(i386)).isInstanceOf(UnsupportedArchitectureException.class)
        .hasMessageContaining("class 1");
  }
}
