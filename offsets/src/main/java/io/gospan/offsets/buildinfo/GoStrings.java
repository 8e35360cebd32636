package io.gospan.offsets.buildinfo;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Go string literal unquoting for build settings (Go src/strconv/quote.go: Unquote, QuotedPrefix), for the
 * escapes {@code strconv.Quote} produces: single-letter escapes (a b f n r t v, backslash, quote), hex
 * {@code \x} bytes, 4- and 8-digit unicode escapes and 3-digit octal bytes.
 */
final class GoStrings {
  private GoStrings() {}

  /** Length of the quoted literal at the start of {@code s}, or -1 when it is not closed. */
  static int quotedPrefixLength(String s) {
    char q = s.charAt(0);
    for (int i = 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (q == '"' && c == '\\') {
        i++;
      } else if (c == q) {
        return i + 1;
      } else if (q == '"' && c == '\n') {
        return -1;
      }
    }
    return -1;
  }

  /** Unquotes a complete Go string literal; null when malformed. */
  static String unquote(String s) {
    if (s.length() < 2) {
      return null;
    }
    char q = s.charAt(0);
    if (s.charAt(s.length() - 1) != q) {
      return null;
    }
    String body = s.substring(1, s.length() - 1);
    if (q == '`') {
      return body.indexOf('`') >= 0 ? null : body.replace("\r", "");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      for (int i = 0; i < body.length(); i++) {
        char c = body.charAt(i);
        if (c == '"') {
          return null;
        }
        if (c != '\\') {
          int cp = body.codePointAt(i);
          out.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
          i += Character.charCount(cp) - 1;
          continue;
        }
        char e = body.charAt(++i);
        switch (e) {
          case 'a': out.write(7); break;
          case 'b': out.write(8); break;
          case 'f': out.write(12); break;
          case 'n': out.write(10); break;
          case 'r': out.write(13); break;
          case 't': out.write(9); break;
          case 'v': out.write(11); break;
          case '\\': out.write('\\'); break;
          case '"': out.write('"'); break;
          case '\'': out.write('\''); break;
          case 'x':
            out.write(Integer.parseInt(body.substring(i + 1, i + 3), 16));
            i += 2;
            break;
          case 'u':
          case 'U': {
            int n = e == 'u' ? 4 : 8;
            int cp = Integer.parseInt(body.substring(i + 1, i + 1 + n), 16);
            out.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
            i += n;
            break;
          }
          default:
            if (e >= '0' && e <= '7') {
              out.write(Integer.parseInt(body.substring(i, i + 3), 8));
              i += 2;
              break;
            }
            return null;
        }
      }
    } catch (RuntimeException e) {
      return null; // bad escape: index or number format
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
