package io.gospan.offsets.buildinfo;

import java.util.Optional;

/**
 * A module as Go records it in build info (Go src/runtime/debug/mod.go, type Module).
 *
 * @param path module path, e.g. {@code google.golang.org/grpc}
 * @param version module version, e.g. {@code v1.60.1}; {@code (devel)} for the main module built from source
 * @param sum {@code h1:} checksum, empty when not recorded
 * @param replace the {@code =>} replacement, when the go.mod replaced this module
 */
public record Module(String path, String version, String sum, Optional<Module> replace) {
  /**
   * The version of the code actually linked: the replacement's version when replaced by a module version,
   * the original version otherwise (a directory replacement has no version).
   */
  public String effectiveVersion() {
    return replace.map(r -> r.version().isEmpty() ? version : r.version()).orElse(version);
  }
}
