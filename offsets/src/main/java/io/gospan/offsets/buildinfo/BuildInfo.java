package io.gospan.offsets.buildinfo;

import java.util.List;
import java.util.Optional;

/**
 * What a Go binary says about how it was built, from its {@code .go.buildinfo} blob (Go
 * src/debug/buildinfo/buildinfo.go and src/runtime/debug/mod.go, go1.26).
 *
 * @param goVersion toolchain version, e.g. {@code go1.22.12}
 * @param path main package path, empty when not recorded
 * @param main the main module; empty for a binary built in GOPATH mode (no module information at all)
 * @param deps every dependency module, in the order the binary lists them
 * @param settings build settings (go1.18+; empty before)
 */
public record BuildInfo(
    String goVersion, String path, Optional<Module> main, List<Module> deps, List<BuildSetting> settings) {

  /** False for a binary built in GOPATH mode: module versions are unknown, not absent. */
  public boolean hasModuleInfo() {
    return main.isPresent();
  }

  /** The dependency with this module path. */
  public Optional<Module> dependency(String modulePath) {
    return deps.stream().filter(m -> m.path().equals(modulePath)).findFirst();
  }

  /** The value of a build setting. */
  public Optional<String> setting(String key) {
    return settings.stream().filter(s -> s.key().equals(key)).map(BuildSetting::value).findFirst();
  }

  /**
   * Go minor version, e.g. 22 for {@code go1.22.12}, 26 for {@code go1.26rc1}; -1 when the string is not
   * {@code go1.N...} (a development toolchain).
   */
  public int goMinorVersion() {
    return GoVersions.minor(goVersion);
  }
}
