package io.gospan.receiver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One {@code gospan run} as a separate process, started from this clone's jar ({@code
 * receiver/target/gospan.jar}, built by {@code mvn package} before the integration tests), its
 * stdout and stderr read line by line into a log by a daemon thread.
 *
 * <pre>{@code
 * try (SidecarProcess gospan = SidecarProcess.start(config)) {   // waits until it is ready
 *   gospan.await(() -> gospan.traces(server.pid()), "server traced");
 *   ...
 *   gospan.stop(Duration.ofSeconds(30));                          // SIGTERM, exit 0 asserted
 * }
 * }</pre>
 *
 * <p>Failures are {@link AssertionError}s that carry the sidecar's log: it exited before it was
 * ready, a wait timed out, it did not exit after SIGTERM or exited non-zero.
 */
public final class SidecarProcess implements AutoCloseable {
  /** The line gospan logs once discovery runs (its start-up is over). */
  public static final String READY = "waiting for Go gRPC processes";

  private final String name;
  private final Process process;
  private final List<String> log = new ArrayList<>(); // guarded by itself
  private final Thread reader;

  private SidecarProcess(String name, Process process) {
    this.name = name;
    this.process = process;
    this.reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          synchronized (log) {
            log.add(line);
          }
        }
      } catch (Exception ignored) {
        // the process exited
      }
    }, "sidecar-log-" + name);
    reader.setDaemon(true);
    reader.start();
  }

  /** {@code receiver/target/gospan.jar} of this clone; an AssertionError when it was not built. */
  public static Path jar() {
    Path jar = ExampleApps.repoRoot().resolve("receiver/target/gospan.jar");
    assertThat(jar).as("the gospan jar (mvn package runs before the integration tests)").exists();
    return jar;
  }

  /** {@code java -jar gospan.jar run --config CONFIG}, ready ({@link #READY} logged). */
  public static SidecarProcess start(Path config) throws Exception {
    return start("gospan", List.of(), List.of(), config);
  }

  /**
   * {@code PREFIX... java JVMARGS... -jar gospan.jar run --config CONFIG}, waited for until it
   * logs {@link #READY} (at most 45 s).
   *
   * @param name names the sidecar in failure messages (e.g. its tier)
   * @param prefix a command that runs the JVM, e.g. {@code ip netns exec NS}; empty for none
   * @param jvmArgs options for the JVM, e.g. {@code -Xmx128m}
   * @throws AssertionError when the sidecar exits before it is ready or is not ready in time (the
   *     process is killed then), with its log
   */
  public static SidecarProcess start(String name, List<String> prefix, List<String> jvmArgs, Path config) throws Exception {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmArgs);
    cmd.addAll(List.of("-jar", jar().toString(), "run", "--config", config.toString()));
    SidecarProcess s = new SidecarProcess(name, new ProcessBuilder(cmd).redirectErrorStream(true).start());
    try {
      s.await(() -> s.logged(READY) || !s.process.isAlive(), name + " started", Duration.ofSeconds(45));
      assertThat(s.process.isAlive()).as("%s is running; its log:\n%s", name, s.logText()).isTrue();
    } catch (AssertionError e) {
      s.close();
      throw e;
    }
    return s;
  }

  /** A copy of the log so far (the reader thread appends meanwhile). */
  public List<String> log() {
    synchronized (log) {
      return List.copyOf(log);
    }
  }

  /** The log so far, one line per line. */
  public String logText() {
    return String.join("\n", log());
  }

  /** Whether a line logged so far contains {@code fragment}. */
  public boolean logged(String fragment) {
    synchronized (log) {
      return log.stream().anyMatch(l -> l.contains(fragment));
    }
  }

  /** Whether the sidecar logged that it traces {@code pid} ({@code tracing pid N ...}). */
  public boolean traces(long pid) {
    return logged("tracing pid " + pid + " ");
  }

  /** {@link #await(BooleanSupplier, String, Duration)} for at most 30 s. */
  public void await(BooleanSupplier ok, String what) throws InterruptedException {
    await(ok, what, Duration.ofSeconds(30));
  }

  /**
   * Polls {@code ok} every 50 ms until it holds.
   *
   * @throws AssertionError after {@code timeout}, naming {@code what}, with the log
   */
  public void await(BooleanSupplier ok, String what, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!ok.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what + "; " + name + " log:\n" + logText());
      }
      Thread.sleep(50);
    }
  }

  public Process process() {
    return process;
  }

  public long pid() {
    return process.pid();
  }

  /**
   * SIGTERM (gospan flushes, detaches and exits 0), then waits for the exit and the log's last
   * line.
   *
   * @return the time from the signal to the exit
   * @throws AssertionError when it does not exit within {@code timeout} (it is killed then) or exits
   *     non-zero, with the log
   */
  public Duration stop(Duration timeout) throws InterruptedException {
    long t0 = System.nanoTime();
    process.destroy();
    boolean exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    if (!exited) {
      close();
    }
    reader.join(5000);
    assertThat(exited).as("%s exits within %s of SIGTERM; its log:\n%s", name, timeout, logText()).isTrue();
    assertThat(process.exitValue()).as("%s's exit status; its log:\n%s", name, logText()).isZero();
    return took;
  }

  /** Kills the process when it still runs (a test that failed before {@link #stop}). */
  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }
}
