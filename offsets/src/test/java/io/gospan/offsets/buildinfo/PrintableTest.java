package io.gospan.offsets.buildinfo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PrintableTest {

  @Test
  void printableTextIsReturnedAsIs() {
    String s = "google.golang.org/grpc v1.60.0 h1:abc+/= ü 日本 (devel)";
    assertThat(Printable.escape(s)).isSameAs(s);
    assertThat(Printable.isPrintable(s)).isTrue();
  }

  @Test
  void c0ControlsAndDelAreHexEscaped() {
    assertThat(Printable.escape("v1.0\u001b[2J\u001b]0;pwned\u0007")).isEqualTo("v1.0\\x1b[2J\\x1b]0;pwned\\x07");
    assertThat(Printable.escape("a\u0000b\u007fc")).isEqualTo("a\\x00b\\x7fc");
    assertThat(Printable.escape("line\nforged\r\tend")).isEqualTo("line\\nforged\\r\\tend");
  }

  @Test
  void c1ControlsBidiOverridesAndInvisibleCharactersAreUnicodeEscaped() {
    assertThat(Printable.escape("a\u009bb\u0085")).isEqualTo("a\\u009bb\\u0085");
    assertThat(Printable.escape("v1.\u202e0.6\u202c")).isEqualTo("v1.\\u202e0.6\\u202c");
    assertThat(Printable.escape("\u2066x\u2069\u200f\u200b\u00a0\u2028")).isEqualTo("\\u2066x\\u2069\\u200f\\u200b\\u00a0\\u2028");
    assertThat(Printable.escape("tag\udb40\udc01")).isEqualTo("tag\\U000e0001"); // U+E0001 LANGUAGE TAG (Cf)
    assertThat(Printable.escape("lone\ud800")).isEqualTo("lone\\ud800");
  }

  @Test
  void invalidUtf8StaysVisible() {
    String decoded = new String(new byte[] {'v', '1', (byte) 0xff, (byte) 0xc0, '.'}, StandardCharsets.UTF_8);
    assertThat(Printable.escape(decoded)).isEqualTo("v1\\ufffd\\ufffd.");
  }

  @Test
  void escapingTwiceChangesNothing() {
    String once = Printable.escape("x\u001b[31m\u202ey\u0085");
    assertThat(Printable.escape(once)).isEqualTo(once);
    assertThat(once.codePoints().allMatch(c -> c >= 0x20 && c < 0x7f)).isTrue();
  }

  @Test
  void nullStaysNull() {
    assertThat(Printable.escape((String) null)).isNull();
    assertThat(Printable.escape((Object) null)).isEqualTo("null");
  }
}
