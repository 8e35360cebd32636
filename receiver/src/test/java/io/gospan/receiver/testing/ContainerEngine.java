package io.gospan.receiver.testing;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Container;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.testcontainers.DockerClientFactory;

/**
 * Test helper: the project's container engine, podman with the project's settings
 * ({@code scripts/container-engine.sh}), serving the Docker API on the unix socket {@code
 * DOCKER_HOST} names (set by the failsafe configuration, receiver/pom.xml) for as long as the
 * test holds this object: what testcontainers' Docker client and its local docker-compose talk
 * to. {@link #start()} first runs {@code scripts/container-images.sh} (cached: seconds when the
 * images are current), so a test finds {@code gospan:dev}, {@code gospan-examples:dev} and
 * Jaeger's image in the store.
 *
 * <p>testcontainers' reaper (Ryuk) is an image no registry here serves: it runs disabled
 * ({@code TESTCONTAINERS_RYUK_DISABLED=true}), so each test removes what it started and {@link
 * #leftovers(Set)} checks that it did.
 *
 * <p>An engine that cannot be started is an {@link AssertionError} naming what is missing
 * (podman, docker-compose: {@code scripts/install-container-engine.sh}); the test fails, it is
 * never skipped.
 */
public final class ContainerEngine implements AutoCloseable {
  private final Process service;
  private final Path log;
  private final Path socket;
  private final String images;

  private ContainerEngine(Process service, Path log, Path socket, String images) {
    this.service = service;
    this.log = log;
    this.socket = socket;
    this.images = images;
  }

  /** The socket DOCKER_HOST names ({@code unix:///...}); an AssertionError if it names none. */
  public static Path socketFromEnvironment() {
    String host = System.getenv("DOCKER_HOST");
    if (host == null || !host.startsWith("unix://")) {
      throw new AssertionError("DOCKER_HOST must name the unix socket the test's podman service listens on"
          + " (receiver/pom.xml sets it for failsafe), not " + host);
    }
    if (!"true".equals(System.getenv("TESTCONTAINERS_RYUK_DISABLED"))) {
      throw new AssertionError("TESTCONTAINERS_RYUK_DISABLED=true is needed: testcontainers' reaper image cannot be"
          + " pulled here (receiver/pom.xml sets it for failsafe)");
    }
    return Path.of(host.substring("unix://".length()));
  }

  /** Builds or finds the images, then starts podman's API service on DOCKER_HOST's socket. */
  public static ContainerEngine start() {
    Path root = ExampleApps.repoRoot();
    Path socket = socketFromEnvironment();
    String out = ExampleApps.run(List.of(root.resolve("scripts/container-images.sh").toString()), 3600);
    String[] lines = out.strip().split("\n");
    String images = lines[lines.length - 1];
    if (answers(socket)) {
      throw new AssertionError("something already serves the Docker API on " + socket
          + " (another ComposeIT? run the container tests under flock /tmp/gospan-it.lock)");
    }
    Path log;
    Process p;
    try {
      log = Files.createTempFile("gospan-podman-service-", ".log");
      p = new ProcessBuilder(root.resolve("scripts/container-engine.sh").toString(), "serve", socket.toString())
          .redirectErrorStream(true)
          .redirectOutput(log.toFile())
          .start();
    } catch (IOException e) {
      throw new AssertionError("cannot start scripts/container-engine.sh serve: " + e, e);
    }
    ContainerEngine engine = new ContainerEngine(p, log, socket, images);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!answers(socket)) {
      if (!p.isAlive() || System.nanoTime() > deadline) {
        String tail = engine.logTail();
        engine.close();
        throw new AssertionError("podman system service did not answer on " + socket + ":\n" + tail);
      }
      sleep(100);
    }
    return engine;
  }

  /** The last line of {@code scripts/container-images.sh}: each image's name and built/cached. */
  public String images() {
    return images;
  }

  /** testcontainers' Docker client, connected to this engine. */
  public DockerClient docker() {
    return DockerClientFactory.instance().client();
  }

  /** The id of the (only) container of compose service {@code service} in {@code project}, running or not. */
  public String containerOf(String project, String service) {
    List<Container> found = docker().listContainersCmd()
        .withShowAll(true)
        .withLabelFilter(Map.of("com.docker.compose.project", project, "com.docker.compose.service", service))
        .exec();
    if (found.size() != 1) {
      throw new AssertionError("compose project " + project + " has " + found.size() + " containers of service " + service);
    }
    return found.get(0).getId();
  }

  public InspectContainerResponse inspect(String containerId) {
    return docker().inspectContainerCmd(containerId).exec();
  }

  /** The last {@code lines} lines of a container's output (podman logs), for failure messages. */
  public String logs(String containerId, int lines) {
    return ExampleApps.run(List.of(ExampleApps.repoRoot().resolve("scripts/container-engine.sh").toString(),
        "podman", "logs", "--tail", Integer.toString(lines), containerId), 30);
  }

  /**
   * What the engine holds whose name starts with one of {@code prefixes} (compose project names or
   * their prefixes: docker-compose 1.29 names containers, networks and volumes {@code
   * <project>_<name>}): containers, networks and volumes, each as "kind name". Empty when every
   * test removed what it started.
   */
  public List<String> leftovers(Set<String> prefixes) {
    List<String> out = new ArrayList<>();
    for (String prefix : new TreeSet<>(prefixes)) {
      docker().listContainersCmd().withShowAll(true).exec().stream()
          .filter(c -> c.getNames() != null && java.util.Arrays.stream(c.getNames()).anyMatch(n -> n.startsWith("/" + prefix)))
          .forEach(c -> out.add("container " + String.join(",", c.getNames())));
      docker().listNetworksCmd().exec().stream()
          .filter(n -> n.getName().startsWith(prefix))
          .forEach(n -> out.add("network " + n.getName()));
      docker().listVolumesCmd().exec().getVolumes().stream()
          .filter(v -> v.getName().startsWith(prefix))
          .forEach(v -> out.add("volume " + v.getName()));
    }
    return out;
  }

  /** The last 8 KiB of the API service's log. */
  public String logTail() {
    try {
      String s = Files.readString(log, StandardCharsets.UTF_8);
      return s.length() <= 8192 ? s : s.substring(s.length() - 8192);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean answers(Path socket) {
    if (!Files.exists(socket)) {
      return false;
    }
    try {
      Process p = new ProcessBuilder("curl", "-sf", "--max-time", "2", "--unix-socket", socket.toString(), "http://d/_ping")
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      return p.waitFor(5, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      throw new AssertionError("cannot run curl (scripts/install-container-engine.sh installs it): " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Stops the API service (SIGTERM; the containers are the tests' to remove) and deletes its log. */
  @Override
  public void close() {
    service.destroy();
    try {
      if (!service.waitFor(20, TimeUnit.SECONDS)) {
        service.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      Files.deleteIfExists(socket);
      Files.deleteIfExists(log);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException ignored) {
      // a temp file
    }
  }
}
