package io.gospan.offsets.catalog;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Builds the Go programs the catalog ITs inspect: the examples (examples/build.sh, cached in
 * examples/bin) and the catalog generator's probe program (src/catalog-gen/build-one.sh, cached in
 * target/). A build that fails fails the test with the reason; nothing is skipped.
 */
final class CatalogFixtures {
  static final Path OFFSETS = Paths.get("").toAbsolutePath();
  static final Path REPO = OFFSETS.getParent();

  private CatalogFixtures() {}

  /** examples/build.sh with these arguments; the directory holding greeter-server and greeter-client. */
  static Path examples(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(REPO.resolve("examples/build.sh").toString());
    cmd.addAll(List.of(args));
    Path dir = Path.of(lastLine(run(cmd, 1800)));
    if (!Files.isExecutable(dir.resolve("greeter-server"))) {
      throw new AssertionError("examples/build.sh " + String.join(" ", args) + " gave " + dir + " without greeter-server");
    }
    return dir;
  }

  /** The catalog generator's probe program built with this Go and grpc-go (unstripped). */
  static Path probe(String go, String grpc) {
    Path out = OFFSETS.resolve("target/catalog-drift/" + grpc + "-go" + go);
    run(List.of(OFFSETS.resolve("src/catalog-gen/build-one.sh").toString(), go, grpc, out.toString()), 1800);
    return out.resolve("probe");
  }

  /**
   * The probe program built with this Go and grpc-go, unstripped ({@code probe}) and with {@code -s -w}
   * ({@code probe.stripped}); their directory.
   */
  static Path probeWithStrippedTwin(String go, String grpc) {
    Path out = OFFSETS.resolve("target/catalog-patch/" + grpc + "-go" + go);
    List<String> cmd = List.of("env", "GOSPAN_STRIPPED=1", OFFSETS.resolve("src/catalog-gen/build-one.sh").toString(), go, grpc,
        out.toString());
    run(cmd, 1800);
    return out;
  }

  static String goOnPath() {
    String v = lastLine(run(List.of("go", "env", "GOVERSION"), 120));
    return v.startsWith("go") ? v.substring(2) : v;
  }

  private static String lastLine(String out) {
    String[] lines = out.strip().split("\n");
    return lines[lines.length - 1].strip();
  }

  static String run(List<String> cmd, int timeoutSeconds) {
    try {
      Path log = Files.createTempFile("gospan-catalog-it", ".log");
      Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(String.join(" ", cmd) + ": timed out after " + timeoutSeconds + " s");
      }
      String err = Files.readString(log);
      Files.deleteIfExists(log);
      if (p.exitValue() != 0) {
        throw new AssertionError(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "):\n" + tail(err) + "\n" + out);
      }
      return out;
    } catch (IOException e) {
      throw new AssertionError("cannot run " + String.join(" ", cmd) + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted: " + String.join(" ", cmd), e);
    }
  }

  private static String tail(String s) {
    String[] lines = s.split("\n");
    return String.join("\n", java.util.Arrays.asList(lines).subList(Math.max(0, lines.length - 15), lines.length));
  }
}
