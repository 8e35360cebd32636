package io.gospan.offsets.catalog;

import java.util.Comparator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Orders Go module versions (semantic versions, including pseudo-versions such as
 * {@code v0.0.0-20200822124328-c89045814202}) and Go toolchain versions ({@code go1.21.13},
 * {@code go1.26rc1}) as the go command does (golang.org/x/mod/semver, go/version).
 */
public final class ModuleVersions {
  private ModuleVersions() {}

  /** Semantic-version order; build metadata ({@code +incompatible}) is ignored. */
  public static final Comparator<String> ORDER = ModuleVersions::compare;

  // compiled once: the catalog's parse and each lookup compare versions thousands of times (a pattern
  // compiled per call made ~10,500 compilations for the parse and one binary's inspection, docs/benchmarks.md
  // "Cold start")
  private static final Pattern VALID = Pattern.compile("v[0-9]+(\\.[0-9]+){0,2}(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?");
  private static final Pattern GO = Pattern.compile("go1\\.([0-9]+)(?:\\.([0-9]+))?((?:rc|beta)[0-9]+)?");

  /** Whether this is a version the order understands ({@code vMAJOR[.MINOR[.PATCH]][-pre][+meta]}). */
  public static boolean valid(String v) {
    return v != null && VALID.matcher(v).matches();
  }

  /**
   * A Go toolchain version as a semantic version: {@code go1.21.13} → {@code v1.21.13}, {@code go1.21}
   * → {@code v1.21.0}, {@code go1.26rc1} → {@code v1.26.0-rc1}; null for anything else (a development
   * toolchain, {@code devel go1.27-abcdef}).
   */
  public static String goToSemver(String go) {
    if (go == null) {
      return null;
    }
    Matcher m = GO.matcher(go);
    if (!m.matches()) {
      return null;
    }
    String v = "v1." + m.group(1) + "." + (m.group(2) != null ? m.group(2) : "0");
    return m.group(3) != null ? v + "-" + m.group(3) : v;
  }

  public static int compare(String a, String b) {
    String[] pa = split(a);
    String[] pb = split(b);
    String[] ca = pa[0].split("\\.");
    String[] cb = pb[0].split("\\.");
    for (int i = 0; i < 3; i++) {
      long x = i < ca.length ? Long.parseLong(ca[i]) : 0;
      long y = i < cb.length ? Long.parseLong(cb[i]) : 0;
      if (x != y) {
        return Long.compare(x, y);
      }
    }
    if (pa[1] == null || pb[1] == null) {
      return pa[1] == null ? (pb[1] == null ? 0 : 1) : -1;
    }
    String[] ia = pa[1].split("\\.");
    String[] ib = pb[1].split("\\.");
    for (int i = 0; i < Math.min(ia.length, ib.length); i++) {
      int c = compareIdentifier(ia[i], ib[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(ia.length, ib.length);
  }

  private static int compareIdentifier(String x, String y) {
    boolean nx = numeric(x);
    boolean ny = numeric(y);
    if (nx && ny) {
      return x.length() != y.length() ? Integer.compare(x.length(), y.length()) : x.compareTo(y);
    }
    if (nx != ny) {
      return nx ? -1 : 1;
    }
    return x.compareTo(y);
  }

  /** Whether {@code s} is one or more ASCII digits. */
  private static boolean numeric(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
    }
    return true;
  }

  /** [MAJOR.MINOR.PATCH, prerelease or null]. */
  private static String[] split(String v) {
    if (!valid(v)) {
      throw new IllegalArgumentException("not a module version: " + v);
    }
    String s = v.substring(1);
    int plus = s.indexOf('+');
    if (plus >= 0) {
      s = s.substring(0, plus);
    }
    int dash = s.indexOf('-');
    return dash < 0 ? new String[] {s, null} : new String[] {s.substring(0, dash), s.substring(dash + 1)};
  }
}
