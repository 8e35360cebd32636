package io.gospan.offsets.buildinfo;

/** Parsing of Go toolchain version strings ({@code go1.22.12}, {@code go1.26rc1}, {@code devel ...}). */
public final class GoVersions {
  private GoVersions() {}

  /** The minor version N of {@code go1.N[...]}, or -1 when the string has another form. */
  public static int minor(String goVersion) {
    if (goVersion == null || !goVersion.startsWith("go1.")) {
      return -1;
    }
    int i = 4;
    int v = 0;
    while (i < goVersion.length() && Character.isDigit(goVersion.charAt(i)) && v < 10_000) {
      v = v * 10 + (goVersion.charAt(i) - '0');
      i++;
    }
    return i == 4 ? -1 : v;
  }
}
