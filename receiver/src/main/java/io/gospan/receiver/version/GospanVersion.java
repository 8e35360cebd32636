package io.gospan.receiver.version;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * gospan's own version, as the build that made these classes set it: {@code project.version}
 * of {@code receiver/pom.xml}, written by Maven resource filtering into {@code
 * io/gospan/receiver/version/gospan-version.properties}. The one source for {@code gospan
 * version}, {@code --version} and the exported resource's {@code service.version}.
 *
 * <p>Depends on nothing else of gospan, so every package may use it.
 */
public final class GospanVersion {
  private static final String RESOURCE = "gospan-version.properties";
  private static final String UNKNOWN = "unknown";
  private static final String VERSION = load();

  private GospanVersion() {}

  /**
   * The build's version, e.g. {@code 0.1.0-SNAPSHOT}; {@code "unknown"} when the classes were
   * compiled without Maven's resource step (the properties file missing or unfiltered, e.g. an
   * IDE build). {@code GospanVersionTest} checks a Maven build sets it.
   */
  public static String get() {
    return VERSION;
  }

  private static String load() {
    Properties p = new Properties();
    try (InputStream in = GospanVersion.class.getResourceAsStream(RESOURCE)) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      return UNKNOWN;
    }
    String v = p.getProperty("version", "").strip();
    return v.isEmpty() || v.contains("${") ? UNKNOWN : v;
  }
}
