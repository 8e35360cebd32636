package io.gospan.offsets;

import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Builds the Go binaries the integration tests inspect and runs the gotruth helper on them. Everything is
 * cached (under {@code offsets/target/} and {@code examples/bin/}); anything that cannot be built fails the
 * test with the reason (no skipping).
 */
public final class GoFixtures {
  /** The module directory {@code offsets/} (Maven runs tests there). */
  static final Path OFFSETS = Paths.get("").toAbsolutePath();
  static final Path REPO = OFFSETS.getParent();
  static final Path TARGET = OFFSETS.resolve("target");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Functions the probes attach to, plus two that exist in every Go binary. */
  static final List<String> FUNCTIONS = List.of(
      "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader",
      "google.golang.org/grpc/internal/transport.(*http2Client).operateHeaders",
      "google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders",
      "golang.org/x/net/http2/hpack.(*Encoder).WriteField",
      "main.main",
      "runtime.goexit");

  /** Struct types whose fields the probes read. */
  static final List<String> STRUCTS = List.of(
      "google.golang.org/grpc/internal/transport.loopyWriter",
      "google.golang.org/grpc/internal/transport.http2Client",
      "google.golang.org/grpc/internal/transport.http2Server",
      "golang.org/x/net/http2.MetaHeadersFrame",
      "golang.org/x/net/http2.FrameHeader",
      "golang.org/x/net/http2/hpack.HeaderField",
      "net.TCPConn",
      "net.conn",
      "net.netFD",
      "internal/poll.FD",
      "crypto/tls.Conn",
      "runtime.itab");

  private GoFixtures() {}

  /** A built executable and a label for reports. */
  record Binary(String label, Path path) {
    @Override
    public String toString() {
      return label;
    }
  }

  /**
   * Builds the offsets fixture (src/test/go/fixtures/grpcapp) with Go {@code goVersion} and grpc-go
   * {@code grpcVersion}; returns its directory holding {@code app}, {@code app.stripped},
   * {@code app.plaindwarf}.
   */
  public static Path fixture(String goVersion, String grpcVersion) {
    Path out = TARGET.resolve("go-fixtures/go" + goVersion + "-grpc" + grpcVersion.replaceFirst("^v", ""));
    run(List.of(OFFSETS.resolve("src/test/go/fixtures/build-fixture.sh").toString(), goVersion, grpcVersion,
        out.toString()), OFFSETS, 30);
    return out;
  }

  /**
   * Builds the example greeter server and client through {@code examples/build.sh}; returns the output
   * directory it prints last.
   */
  public static Path example(List<String> args) {
    List<String> cmd = new ArrayList<>();
    Path script = REPO.resolve("examples/build.sh");
    if (!Files.isExecutable(script)) {
      fail("examples/build.sh is missing or not executable: " + script);
    }
    cmd.add(script.toString());
    cmd.addAll(args);
    String out = run(cmd, REPO.resolve("examples"), 30);
    String[] lines = out.strip().split("\n");
    return Paths.get(lines[lines.length - 1].strip());
  }

  /** Runs gotruth on {@code binary} with {@link #FUNCTIONS} and {@link #STRUCTS}; cached per file. */
  static JsonNode truth(Path binary) {
    return truth(binary, FUNCTIONS, STRUCTS);
  }

  /** Runs gotruth on {@code binary} for the given functions and struct types; cached per file and arguments. */
  static JsonNode truth(Path binary, List<String> functions, List<String> structs) {
    try {
      Path tool = gotruth();
      String key = Integer.toHexString(binary.toAbsolutePath().toString().hashCode()) + "-"
          + Files.size(binary) + "-" + Files.getLastModifiedTime(binary).toMillis()
          + "-" + Files.getLastModifiedTime(tool).toMillis()
          + "-" + Integer.toHexString(functions.hashCode() * 31 + structs.hashCode());
      Path cache = TARGET.resolve("gotruth-cache/" + key + ".json");
      if (!Files.exists(cache)) {
        List<String> cmd = new ArrayList<>();
        cmd.add(tool.toString());
        for (String f : functions) {
          cmd.add("-func");
          cmd.add(f);
        }
        for (String s : structs) {
          cmd.add("-struct");
          cmd.add(s);
        }
        cmd.add(binary.toString());
        String json = run(cmd, OFFSETS, 5);
        Files.createDirectories(cache.getParent());
        Files.writeString(cache, json);
      }
      return JSON.readTree(cache.toFile());
    } catch (IOException e) {
      throw new AssertionError("gotruth on " + binary + ": " + e, e);
    }
  }

  private static synchronized Path gotruth() {
    Path tool = TARGET.resolve("gotruth/gotruth");
    Path src = OFFSETS.resolve("src/test/go/gotruth");
    try {
      if (!Files.exists(tool)
          || Files.getLastModifiedTime(tool).compareTo(Files.getLastModifiedTime(src.resolve("main.go"))) < 0) {
        Files.createDirectories(tool.getParent());
        run(List.of("go", "build", "-o", tool.toString(), "."), src, 5);
      }
    } catch (IOException e) {
      throw new AssertionError("building gotruth: " + e, e);
    }
    return tool;
  }

  /** Runs a command; fails the test with its output when it cannot start, times out or exits non-zero. */
  static String run(List<String> cmd, Path dir, int timeoutMinutes) {
    try {
      Path log = Files.createTempFile("gospan-cmd", ".log");
      Path outFile = Files.createTempFile("gospan-cmd", ".out");
      try {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
            .redirectError(log.toFile()).redirectOutput(outFile.toFile());
        pb.environment().putIfAbsent("GOFLAGS", "-buildvcs=false");
        Process p = pb.start();
        if (!p.waitFor(timeoutMinutes, TimeUnit.MINUTES)) {
          p.destroyForcibly();
          fail("timed out after " + timeoutMinutes + " min: " + String.join(" ", cmd));
        }
        String out = Files.readString(outFile, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
          String err = Files.readString(log, StandardCharsets.UTF_8);
          fail("exit " + p.exitValue() + ": " + String.join(" ", cmd) + "\n" + tail(err + out, 3000));
        }
        return out;
      } finally {
        Files.deleteIfExists(log);
        Files.deleteIfExists(outFile);
      }
    } catch (IOException e) {
      throw new AssertionError("cannot run " + String.join(" ", cmd) + " (is Go installed and on PATH?): " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted: " + String.join(" ", cmd), e);
    }
  }

  private static String tail(String s, int n) {
    return s.length() <= n ? s : "..." + s.substring(s.length() - n);
  }
}
