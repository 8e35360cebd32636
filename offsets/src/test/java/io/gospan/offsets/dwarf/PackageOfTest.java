package io.gospan.offsets.dwarf;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which DWARF unit (one per Go package) a symbol's subprogram lives in. */
class PackageOfTest {
  @Test
  void packagePathIsUpToTheFirstDotAfterTheLastSlash() {
    assertThat(NameDirectory.packageOf("google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader"))
        .isEqualTo("google.golang.org/grpc/internal/transport");
    assertThat(NameDirectory.packageOf("golang.org/x/net/http2/hpack.(*Encoder).WriteField"))
        .isEqualTo("golang.org/x/net/http2/hpack");
    assertThat(NameDirectory.packageOf("main.main")).isEqualTo("main");
    // A dot in the last path element makes the guess wrong; the lookup then scans every unit, so the answer
    // is still right, only slower.
    assertThat(NameDirectory.packageOf("gopkg.in/yaml.v3.Unmarshal")).isEqualTo("gopkg.in/yaml");
    assertThat(NameDirectory.packageOf("sync/atomic.(*Pointer[go.shape.struct { a/b.c int }]).Load"))
        .isEqualTo("sync/atomic");
    assertThat(NameDirectory.packageOf("nodot")).isEqualTo("nodot");
  }
}
