package io.gospan.offsets.buildinfo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.offsets.CorruptBinaryException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Module info text as cmd/go writes it (runtime/debug.BuildInfo.String, go1.26). */
class BuildInfoReaderTest {
  private static final String MODINFO = String.join("\n",
      "path\texample.com/greeter/cmd/server",
      "mod\texample.com/greeter\t(devel)\t",
      "dep\tgolang.org/x/net\tv0.17.0\th1:pVaXccu2ozPjCXewfr1S7xoRvbM9dktEXn0CIjkQ34c=",
      "dep\tgoogle.golang.org/grpc\tv1.60.1\th1:26+wFr+cNqSGFcOXcabYC0lUVJVRa2Sb2ortSK7WrEA=",
      "=>\tgithub.com/fork/grpc-go\tv1.60.1-fork\th1:abc=",
      "dep\texample.com/local\tv0.0.0",
      "=>\t../local\t\t",
      "build\t-compiler=gc",
      "build\t-ldflags=\"-s -w\"",
      "build\t\"key with space\"=\"tab\\there\"",
      "build\tCGO_ENABLED=0",
      "build\tvcs.modified=",
      "");

  @Test
  void parsesModulesReplacementsAndSettings() throws Exception {
    BuildInfo bi = BuildInfoReader.parse("go1.22.12", MODINFO, "test");
    assertThat(bi.goVersion()).isEqualTo("go1.22.12");
    assertThat(bi.goMinorVersion()).isEqualTo(22);
    assertThat(bi.path()).isEqualTo("example.com/greeter/cmd/server");
    assertThat(bi.main()).contains(new Module("example.com/greeter", "(devel)", "", Optional.empty()));
    assertThat(bi.deps()).hasSize(3);
    Module grpc = bi.dependency("google.golang.org/grpc").orElseThrow();
    assertThat(grpc.version()).isEqualTo("v1.60.1");
    assertThat(grpc.replace()).contains(new Module("github.com/fork/grpc-go", "v1.60.1-fork", "h1:abc=",
        Optional.empty()));
    assertThat(grpc.effectiveVersion()).isEqualTo("v1.60.1-fork");
    Module local = bi.dependency("example.com/local").orElseThrow();
    assertThat(local.sum()).isEmpty();
    assertThat(local.replace().orElseThrow().path()).isEqualTo("../local");
    assertThat(local.effectiveVersion()).isEqualTo("v0.0.0");
    assertThat(bi.settings()).containsExactly(
        new BuildSetting("-compiler", "gc"),
        new BuildSetting("-ldflags", "-s -w"),
        new BuildSetting("key with space", "tab\there"),
        new BuildSetting("CGO_ENABLED", "0"),
        new BuildSetting("vcs.modified", ""));
    assertThat(bi.setting("-ldflags")).contains("-s -w");
  }

  @Test
  void gopathModeHasNoModuleInformation() throws Exception {
    BuildInfo bi = BuildInfoReader.parse("go1.16.15", "", "test");
    assertThat(bi.hasModuleInfo()).isFalse();
    assertThat(bi.main()).isEmpty();
    assertThat(bi.deps()).isEmpty();
  }

  @Test
  void malformedLinesAreCorrupt() {
    assertThatThrownBy(() -> BuildInfoReader.parse("go1.22", "=>\ta\tb\tc\n", "t"))
        .isInstanceOf(CorruptBinaryException.class).hasMessageContaining("no module on previous line");
    assertThatThrownBy(() -> BuildInfoReader.parse("go1.22", "dep\tonly-path\n", "t"))
        .isInstanceOf(CorruptBinaryException.class).hasMessageContaining("line 1");
    assertThatThrownBy(() -> BuildInfoReader.parse("go1.22", "build\tnoequals\n", "t"))
        .isInstanceOf(CorruptBinaryException.class);
    assertThatThrownBy(() -> BuildInfoReader.parse("go1.22", "build\tk=\"bad\\q\"\n", "t"))
        .isInstanceOf(CorruptBinaryException.class);
  }

  @Test
  void goVersionsParse() {
    assertThat(GoVersions.minor("go1.26rc1")).isEqualTo(26);
    assertThat(GoVersions.minor("go1.9")).isEqualTo(9);
    assertThat(GoVersions.minor("devel go1.27-abc")).isEqualTo(-1);
    assertThat(List.of(GoVersions.minor("go2"), GoVersions.minor("go1."))).containsOnly(-1);
  }
}
