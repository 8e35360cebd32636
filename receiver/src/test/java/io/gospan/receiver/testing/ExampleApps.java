package io.gospan.receiver.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Test helper: builds the Go programs of {@code examples/} with {@code examples/build.sh} and
 * runs them. Any failure is an {@link AssertionError} naming the command and its output: a
 * test that cannot build or start the examples fails, it is never skipped.
 */
public final class ExampleApps {
  private ExampleApps() {}

  /** The repository root: the first parent of the working directory holding examples/build.sh. */
  public static Path repoRoot() {
    Path dir = Path.of("").toAbsolutePath();
    for (Path d = dir; d != null; d = d.getParent()) {
      if (Files.isRegularFile(d.resolve("examples/build.sh"))) {
        return d;
      }
    }
    throw new AssertionError("no examples/build.sh above " + dir);
  }

  /**
   * Builds the examples (incremental) and returns the folder holding greeter-server,
   * greeter-client and greeter-relay.
   *
   * @param args build.sh variant flags, e.g. {@code --grpc v1.60.1 --stripped}; none for the default
   */
  public static Path build(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(repoRoot().resolve("examples/build.sh").toString());
    cmd.addAll(List.of(args));
    String out = run(cmd, 900);
    String[] lines = out.strip().split("\n");
    Path dir = Path.of(lines[lines.length - 1].strip());
    if (!dir.isAbsolute()) {
      dir = repoRoot().resolve("examples").resolve(dir);
    }
    if (!Files.isExecutable(dir.resolve("greeter-server")) || !Files.isExecutable(dir.resolve("greeter-client"))
        || !Files.isExecutable(dir.resolve("greeter-relay"))) {
      throw new AssertionError("build.sh printed " + dir + " but it holds no greeter-server/client/relay:\n" + out);
    }
    return dir;
  }

  private static final java.util.Map<String, Path> GO_TOOLS = new java.util.HashMap<>();

  /**
   * A Go program of the repository's tests ({@code srcDir}, relative to the repository root), built
   * once per JVM into {@code receiver/target/<name>}; the built executable's path.
   *
   * @throws AssertionError when {@code go build} fails or takes over 300 s (as {@link #run})
   */
  public static synchronized Path goTool(String srcDir, String name) {
    return GO_TOOLS.computeIfAbsent(name, n -> {
      Path out = repoRoot().resolve("receiver/target").resolve(n);
      run(List.of("go", "-C", repoRoot().resolve(srcDir).toString(), "build", "-o", out.toString(), "."), 300);
      return out;
    });
  }

  /** Runs a command to completion; returns stdout. Fails on a non-zero exit or timeout. */
  public static String run(List<String> cmd, int timeoutSeconds) {
    return run(cmd, java.util.Map.of(), timeoutSeconds);
  }

  /** As {@link #run(List, int)}, with extra environment variables. */
  public static String run(List<String> cmd, java.util.Map<String, String> env, int timeoutSeconds) {
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(false);
      pb.environment().putAll(env);
      Process p = pb.start();
      CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p, true));
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(String.join(" ", cmd) + " did not finish in " + timeoutSeconds + " s");
      }
      String stdout = new String(out, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new AssertionError(
            String.join(" ", cmd) + " exited " + p.exitValue() + "\nstdout:\n" + stdout + "\nstderr:\n"
                + new String(err.join(), StandardCharsets.UTF_8));
      }
      return stdout;
    } catch (IOException e) {
      throw new AssertionError("cannot run " + cmd + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static byte[] readAll(Process p, boolean stderr) {
    try {
      return (stderr ? p.getErrorStream() : p.getInputStream()).readAllBytes();
    } catch (IOException e) {
      return new byte[0];
    }
  }

  /**
   * A running greeter-server (or greeter-relay) on 127.0.0.1 and a free port. Closing it stops it
   * (SIGTERM, then kill).
   */
  public static final class Server implements AutoCloseable {
    private final Process process;
    private final int port;

    private Server(Process process, int port) {
      this.process = process;
      this.port = port;
    }

    public int port() {
      return port;
    }

    public long pid() {
      return process.pid();
    }

    public String address() {
      return "127.0.0.1:" + port;
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Starts {@code dir/greeter-server -addr 127.0.0.1:0 extraFlags...} and waits for its
   * {@code listening on HOST:PORT} line.
   */
  public static Server startServer(Path dir, String... extraFlags) {
    return startServer(dir, java.util.Map.of(), extraFlags);
  }

  /** As {@link #startServer(Path, String...)}, with extra environment variables. */
  public static Server startServer(Path dir, java.util.Map<String, String> env, String... extraFlags) {
    return startListening(dir.resolve("greeter-server"), env, extraFlags);
  }

  /**
   * Starts {@code dir/greeter-relay -addr 127.0.0.1:0 -upstream UPSTREAM extraFlags...} (the
   * middle tier: every call it serves becomes two calls to {@code upstream}, plus background
   * calls every {@code -background}, 1 s by default) and waits for its {@code listening on} line.
   */
  public static Server startRelay(Path dir, java.util.Map<String, String> env, String upstream, String... extraFlags) {
    List<String> flags = new ArrayList<>(List.of("-upstream", upstream));
    flags.addAll(List.of(extraFlags));
    return startListening(dir.resolve("greeter-relay"), env, flags.toArray(String[]::new));
  }

  private static Server startListening(Path exe, java.util.Map<String, String> env, String... extraFlags) {
    return startListening(List.of(), exe, "127.0.0.1:0", env, extraFlags);
  }

  /**
   * Starts {@code prefix... exe -addr listen extraFlags...} (e.g. with the prefix {@code ip netns
   * exec NS}, which execs the program: the pid is the program's) and waits for its {@code
   * listening on} line.
   */
  public static Server startListening(List<String> prefix, Path exe, String listen, java.util.Map<String, String> env,
      String... extraFlags) {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.add(exe.toString());
    cmd.add("-addr");
    cmd.add(listen);
    cmd.addAll(List.of(extraFlags));
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
      pb.environment().putAll(env);
      Process p = pb.start();
      BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
        try {
          return r.readLine();
        } catch (IOException e) {
          return null;
        }
      });
      String first = line.get(30, TimeUnit.SECONDS);
      if (first == null || !first.startsWith("listening on ")) {
        p.destroyForcibly();
        throw new AssertionError(exe.getFileName() + " did not report its address; first line: " + first);
      }
      // keep draining stdout so the server never blocks on a full pipe
      CompletableFuture.runAsync(() -> {
        try {
          while (r.readLine() != null) {
            // discard
          }
        } catch (IOException ignored) {
          // the server exited
        }
      });
      String addr = first.substring("listening on ".length()).strip();
      int port = Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
      return new Server(p, port);
    } catch (Exception e) {
      throw new AssertionError("cannot start " + cmd + ": " + e, e);
    }
  }

  /**
   * Runs {@code dir/greeter-client -addr ADDR flags...}, returns its JSON summary line. The
   * client exits non-zero when a call ends with an unexpected code: that fails the test.
   */
  public static JsonNode runClient(Path dir, String address, String... flags) {
    return runClient(dir, java.util.Map.of(), address, flags);
  }

  /** As {@link #runClient(Path, String, String...)}, with extra environment variables. */
  public static JsonNode runClient(Path dir, java.util.Map<String, String> env, String address, String... flags) {
    List<String> cmd = new ArrayList<>();
    cmd.add(dir.resolve("greeter-client").toString());
    cmd.add("-addr");
    cmd.add(address);
    cmd.addAll(List.of(flags));
    String out = run(cmd, env, 300);
    String[] lines = out.strip().split("\n");
    try {
      return new ObjectMapper().readTree(lines[lines.length - 1]);
    } catch (IOException e) {
      throw new AssertionError("greeter-client printed no JSON summary:\n" + out, e);
    }
  }
}
