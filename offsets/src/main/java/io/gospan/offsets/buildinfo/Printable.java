package io.gospan.offsets.buildinfo;

/**
 * Makes text read from a binary (module paths and versions, build settings, the Go version, symbol and
 * section names, error messages that embed them) safe to print on a terminal or write to a log: every code
 * point that is not printable is replaced by a Go-style escape, so a crafted build info cannot move the
 * cursor, rewrite the screen, reorder text (bidi overrides) or forge log lines.
 *
 * <p>Printable is what Go's {@code strconv.IsPrint} accepts (src/strconv/quote.go, go1.26): letters, marks,
 * numbers, punctuation, symbols and the ASCII space. Everything else is escaped:
 *
 * <ul>
 *   <li>C0 controls and DEL as {@code \xNN} ({@code \t}, {@code \n}, {@code \r} by letter; ESC is {@code \x1b});
 *   <li>other non-printable BMP code points (C1 controls, format characters such as bidi overrides and
 *       isolates U+202A..U+202E, U+2066..U+2069, zero-width characters, line/paragraph separators, spaces
 *       other than U+0020, private use, unassigned, lone surrogates) as <code>&#92;uNNNN</code>;
 *   <li>non-printable supplementary code points as <code>&#92;UNNNNNNNN</code>;
 *   <li>U+FFFD, which is what an invalid UTF-8 byte decodes to (every string read from a binary is decoded
 *       as UTF-8 with replacement), as <code>&#92;ufffd</code>, so a malformed byte stays visible.
 * </ul>
 *
 * <p>The backslash itself is not escaped: {@link #escape} maps printable text to itself, so applying it
 * again (a reason built from escaped parts, escaped once more where it is printed) changes nothing.
 */
public final class Printable {
  private Printable() {}

  /**
   * The printable form of {@code s}: {@code s} itself when every code point is printable (no copy).
   *
   * @return the escaped text; null for null
   */
  public static String escape(String s) {
    if (s == null) {
      return null;
    }
    int i = 0;
    int n = s.length();
    while (i < n) {
      int cp = s.codePointAt(i);
      if (!isPrintable(cp)) {
        break;
      }
      i += Character.charCount(cp);
    }
    if (i == n) {
      return s;
    }
    StringBuilder b = new StringBuilder(n + 16).append(s, 0, i);
    while (i < n) {
      int cp = s.codePointAt(i);
      if (isPrintable(cp)) {
        b.appendCodePoint(cp);
      } else {
        appendEscape(b, cp);
      }
      i += Character.charCount(cp);
    }
    return b.toString();
  }

  /** {@link #escape(String)} of {@code String.valueOf(o)} ({@code "null"} for null, as printing it would). */
  public static String escape(Object o) {
    return escape(String.valueOf(o));
  }

  /** Whether {@code s} is printed as is by {@link #escape(String)}. */
  public static boolean isPrintable(String s) {
    return s.codePoints().allMatch(Printable::isPrintable);
  }

  /** Whether one code point is printed as is: Go's strconv.IsPrint, minus U+FFFD (see the class doc). */
  public static boolean isPrintable(int cp) {
    if (cp < 0x7f) {
      return cp >= 0x20;
    }
    if (cp == 0xfffd) {
      return false;
    }
    switch (Character.getType(cp)) {
      case Character.CONTROL:
      case Character.FORMAT:
      case Character.SURROGATE:
      case Character.PRIVATE_USE:
      case Character.UNASSIGNED:
      case Character.LINE_SEPARATOR:
      case Character.PARAGRAPH_SEPARATOR:
      case Character.SPACE_SEPARATOR:
        return false;
      default:
        return true;
    }
  }

  private static void appendEscape(StringBuilder b, int cp) {
    switch (cp) {
      case '\t':
        b.append("\\t");
        return;
      case '\n':
        b.append("\\n");
        return;
      case '\r':
        b.append("\\r");
        return;
      default:
        break;
    }
    if (cp <= 0x7f) {
      b.append("\\x").append(hex(cp, 2));
    } else if (cp <= 0xffff) {
      b.append("\\u").append(hex(cp, 4));
    } else {
      b.append("\\U").append(hex(cp, 8));
    }
  }

  private static String hex(int v, int digits) {
    String h = Integer.toHexString(v);
    return "0".repeat(Math.max(0, digits - h.length())) + h;
  }
}
