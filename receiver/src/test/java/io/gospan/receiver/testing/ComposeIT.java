package io.gospan.receiver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.command.InspectContainerResponse;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.DockerComposeContainer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.startupcheck.StartupCheckStrategy;
import org.testcontainers.utility.DockerImageName;

/**
 * The docker-compose demo, really up: {@code docker-compose.yml} as users run it, with the
 * project's engine (podman's Docker API, {@link ContainerEngine}) and Debian's docker-compose 1.29
 * driven by testcontainers' compose support, the images {@code scripts/container-images.sh} built
 * from the repository's Dockerfiles. Each test brings up its own compose project (a random name:
 * containers, network and volumes of its own; the host ports are the demo's fixed ones, so run
 * under {@code flock /tmp/gospan-it.lock}) and takes it down again; {@link #nothingLeftBehind()}
 * checks that nothing of any of them remains.
 *
 * <p>Over the demo's file, every test adds the override {@code scripts/container-engine.sh
 * host-limits} writes for this host, as {@code scripts/container-engine.sh compose} does: the
 * gospan containers' {@code memlock} at the host's hard limit instead of the demo's unlimited,
 * which a host without CAP_SYS_RESOURCE refuses to grant (kernels >= 5.11 account BPF memory to
 * the cgroup, not to memlock), and the open-file and process limits podman otherwise asks too
 * much of. The fault variants add a file of {@code src/test/resources/compose/}.
 */
class ComposeIT {
  static final String DEMO_CLIENT = "greeter-client";
  static final String DEMO_SERVER = "greeter-server";
  /** docker-compose.yml's client: 5 calls a second. */
  static final double RATE = 5;
  /** config/gospan.yaml's streams.link_wait. */
  static final Duration LINK_WAIT = Duration.ofSeconds(2);

  private static ContainerEngine engine;
  private static Path root;
  private static File hostOverride;
  private static final Set<String> projects = new HashSet<>();
  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @BeforeAll
  static void engineAndImages() {
    root = ExampleApps.repoRoot();
    engine = ContainerEngine.start();
    System.out.println("ComposeIT: images " + engine.images());
    String out = ExampleApps.run(List.of(root.resolve("scripts/container-engine.sh").toString(), "host-limits"), 30).strip();
    hostOverride = new File(out.substring(out.lastIndexOf('\n') + 1));
  }

  @AfterAll
  static void nothingLeftBehind() {
    if (engine == null) {
      return;
    }
    try {
      assertThat(engine.leftovers(projects)).as("containers, networks, volumes of the compose projects %s", projects).isEmpty();
    } finally {
      engine.close();
    }
  }

  // --- the demo ------------------------------------------------------------------------------

  /**
   * Up: both gospans healthy, each call of greeter-client one trace across the two gospan
   * containers (the client span, traced in greeter-client's container, the parent of the server
   * span, traced in greeter-server's) for >= 99 % of the calls of a 60 s window, both /metrics
   * answer. Down: nothing of the BPF programs, maps and links the two gospans held remains.
   */
  @Test
  void theDemoGivesWholeTracesAcrossTheTwoGospansAndLeavesNoBpfBehind() {
    Demo demo = Demo.up();
    List<BpfObjects.BpfObject> held;
    try {
      demo.awaitHealthy();
      demo.awaitWholeTraces();
      // the figures docs/containers.md gives: the sidecar's start to its first span, its memory
      Instant started = Instant.parse(engine.inspect(demo.containerId("gospan-server")).getState().getStartedAt());
      Instant first = demo.awaitFirstServerSpanAfter(started);
      System.out.printf("ComposeIT: gospan-server container started %s, first server span %s: %d ms%n", started, first,
          Duration.between(started, first).toMillis());
      Map<String, Long> pids = demo.gospanPids();
      held = BpfObjects.now().heldBy(pids.values());
      assertThat(held).as("BPF objects of the gospans %s", pids)
          .anyMatch(o -> o.kind().equals("prog")).anyMatch(o -> o.kind().equals("map")).anyMatch(o -> o.kind().equals("link"));

      Instant from = Instant.now();
      sleep(Duration.ofSeconds(60));
      Instant to = Instant.now();
      List<Call> calls = demo.awaitCallsSettled(from, to);
      long whole = calls.stream().filter(Call::whole).count();
      System.out.printf("ComposeIT: 60 s window: %d calls, %d whole traces (%.2f %%)%n", calls.size(), whole,
          100.0 * whole / Math.max(1, calls.size()));
      assertThat(calls.size()).as("client spans in 60 s at 5 calls/s").isGreaterThanOrEqualTo((int) (0.95 * 60 * RATE));
      assertThat(whole).as("whole traces among %d calls: %s", calls.size(), demo.describe(calls))
          .isGreaterThanOrEqualTo((long) Math.ceil(0.99 * calls.size()));
      // each end traced in its own container (container.id from the traced process's cgroup)
      Call c = calls.stream().filter(Call::whole).findFirst().orElseThrow();
      assertThat(c.clientContainer()).isEqualTo(demo.containerId(DEMO_CLIENT));
      assertThat(c.serverContainer()).isEqualTo(demo.containerId(DEMO_SERVER));

      pids.forEach((name, pid) -> System.out.printf("ComposeIT: %s after the window: %s%n", name, memory(pid)));
      // the image's class-data-sharing archive (receiver/Dockerfile): each sidecar maps it, and the
      // two share its clean pages (a mismatched archive would be silently left out by the JVM)
      pids.forEach((name, pid) -> {
        long[] archive = archivePages(pid);
        System.out.printf("ComposeIT: %s maps the CDS archive: %d KiB resident, %d KiB shared clean%n", name, archive[0], archive[1]);
        assertThat(archive[1]).as("%s: KiB of /opt/gospan/gospan.jsa resident and shared with the other sidecar", name)
            .isGreaterThanOrEqualTo(8 * 1024);
      });
      for (int port : List.of(9464, 9466)) {
        HttpResponse<String> m = get("http://127.0.0.1:" + port + "/metrics");
        assertThat(m.statusCode()).as("/metrics on %d", port).isEqualTo(200);
        assertThat(m.body()).as("/metrics on %d", port).contains("gospan_spans_finished");
      }
    } finally {
      demo.down();
    }
    await(Duration.ofSeconds(10), "no BPF object of the stopped gospans left", () -> BpfObjects.now().stillThere(held).isEmpty());
  }

  // --- capabilities ----------------------------------------------------------------------------

  /**
   * The sidecar with the capabilities docker-compose.yml gives it but SYS_ADMIN (the one every
   * uprobe needs on kernels with the 2025 fix): it says which capability is missing and exits
   * non-zero. Run by testcontainers as a plain container in greeter-server's PID namespace.
   */
  @Test
  void withoutSysAdminGospanNamesTheMissingCapabilityAndExitsNonZero() {
    Demo demo = Demo.up("greeter-server");
    try {
      String server = demo.containerId(DEMO_SERVER);
      try (GenericContainer<?> gospan = new GenericContainer<>(DockerImageName.parse("gospan:dev"))
          .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig()
              .withPidMode("container:" + server)
              .withCapAdd(com.github.dockerjava.api.model.Capability.SYS_PTRACE,
                  com.github.dockerjava.api.model.Capability.BPF, com.github.dockerjava.api.model.Capability.PERFMON))
          .withCommand("run", "--config", "/etc/gospan/gospan.yaml")
          .withStartupCheckStrategy(new ExitedCheck().withTimeout(Duration.ofSeconds(90)))) {
        gospan.start();
        InspectContainerResponse.ContainerState state = gospan.getCurrentContainerInfo().getState();
        String logs = gospan.getLogs();
        assertThat(state.getExitCodeLong()).as("exit code; log:\n%s", logs).isNotNull().isNotZero();
        assertThat(logs).contains("CAP_SYS_ADMIN");
      }
    } finally {
      demo.down();
    }
  }

  /** Ready when the container has stopped (its exit code is then the test's to judge). */
  static final class ExitedCheck extends StartupCheckStrategy {
    @Override
    public StartupStatus checkStartupState(com.github.dockerjava.api.DockerClient docker, String containerId) {
      InspectContainerResponse.ContainerState s = getCurrentState(docker, containerId);
      return Boolean.TRUE.equals(s.getRunning()) ? StartupStatus.NOT_YET_KNOWN : StartupStatus.SUCCESSFUL;
    }
  }

  // --- faults ----------------------------------------------------------------------------------

  /**
   * Jaeger stopped for 30 s and started again: every span made meanwhile arrives (the export
   * queue holds them): the client's calls of the outage, one every 200 ms without a gap, each a
   * whole trace, and neither gospan counts a dropped span.
   */
  @Test
  void jaegerDownFor30sLosesNoSpan() {
    Demo demo = Demo.up();
    try {
      demo.awaitHealthy();
      demo.awaitWholeTraces();
      String jaeger = demo.containerId("jaeger");
      engine.docker().stopContainerCmd(jaeger).withTimeout(10).exec();
      Instant stopped = Instant.now();
      sleep(Duration.ofSeconds(30));
      Instant restarted = Instant.now();
      engine.docker().startContainerCmd(jaeger).exec();
      demo.awaitJaeger();
      Instant from = stopped.plusSeconds(1);
      Instant to = restarted.minusSeconds(1);
      List<Call> calls = demo.awaitCallsSettled(from, to);
      assertNoGaps(calls, from, to, "client spans made while Jaeger was down");
      assertThat(calls).as("whole traces made while Jaeger was down: %s", demo.describe(calls)).allMatch(Call::whole);
      for (int port : List.of(9464, 9466)) {
        assertThat(counter(get("http://127.0.0.1:" + port + "/metrics").body(), "gospan_export_queue_dropped_total"))
            .as("spans the export queue of the gospan on %d dropped", port).isZero();
      }
    } finally {
      demo.down();
    }
  }

  /**
   * gospan-server killed (SIGKILL) mid-traffic while Jaeger is down, restarted by the engine
   * (restart: on-failure): no BPF object of the dead one remains; it traces again within 5 s of
   * its start; the spans its disk-backed export queue (a volume) held are delivered after the
   * restart (at least once). Spans not yet in the queue at the kill (waiting for their link or
   * their batch: up to link_wait + schedule_delay, 7 s) die with the process.
   */
  @Test
  void aKilledGospanIsRestartedLeavesNoBpfBehindAndDeliversItsDiskQueue() {
    Demo demo = Demo.up(List.of("disk-queue.yml"));
    try {
      demo.awaitHealthy();
      demo.awaitWholeTraces();
      String jaeger = demo.containerId("jaeger");
      String gospan = demo.containerId("gospan-server");
      engine.docker().stopContainerCmd(jaeger).withTimeout(10).exec();
      Instant jaegerStopped = Instant.now();
      sleep(Duration.ofSeconds(16));
      long deadPid = engine.inspect(gospan).getState().getPidLong();
      List<BpfObjects.BpfObject> held = BpfObjects.now().heldBy(List.of(deadPid));
      assertThat(held).as("BPF objects of gospan-server (pid %d)", deadPid).isNotEmpty();
      // SIGKILL from outside, as the OOM killer or a host's kill does (`docker kill` would mark the
      // container stopped by its user, and podman then leaves it stopped)
      ExampleApps.run(List.of("kill", "-KILL", Long.toString(deadPid)), 10);
      Instant killed = Instant.now();

      await(Duration.ofSeconds(60), "gospan-server restarted by the engine", () -> {
        InspectContainerResponse.ContainerState s = engine.inspect(gospan).getState();
        return Boolean.TRUE.equals(s.getRunning()) && s.getPidLong() != null && s.getPidLong() != deadPid;
      });
      Instant started = Instant.parse(engine.inspect(gospan).getState().getStartedAt());
      await(Duration.ofSeconds(5), "the dead gospan's BPF objects gone", () -> BpfObjects.now().stillThere(held).isEmpty());
      engine.docker().startContainerCmd(jaeger).exec();
      demo.awaitJaeger();

      // the spans of the queue: server spans of the calls made between Jaeger's stop and the kill,
      // less the last 8 s: a span reaches the queue after link_wait (2 s) and the batch
      // processor's schedule_delay (5 s); what the kill found before the queue is lost
      Instant from = jaegerStopped.plusSeconds(1);
      Instant to = killed.minus(LINK_WAIT).minusSeconds(6);
      List<Call> queued = demo.awaitCallsSettled(from, to);
      assertNoGaps(queued, from, to, "client spans before the kill");
      assertThat(queued).as("server spans queued on disk before the kill, delivered after the restart: %s",
          demo.describe(queued)).allMatch(Call::whole);

      // traced again within 5 s of the restarted container's start
      Instant firstAfter = demo.awaitFirstServerSpanAfter(started);
      System.out.printf("ComposeIT: restarted gospan-server started %s, first server span %s (%d ms)%n", started,
          firstAfter, Duration.between(started, firstAfter).toMillis());
      assertThat(Duration.between(started, firstAfter)).as("first traced call after the restart").isLessThanOrEqualTo(Duration.ofSeconds(5));
    } finally {
      demo.down();
    }
  }

  /**
   * Only the server has a gospan: its server spans are roots (no client span to link to), each
   * let go within link_wait + 1 s of its end (batches every 100 ms here, quick-export.yml), and
   * the unanswered link lookups are counted in gospan.link.*.
   */
  @Test
  void withoutTheClientsGospanServerSpansAreRootsExportedWithinLinkWait() {
    Demo demo = Demo.up(List.of("quick-export.yml"), "jaeger", "greeter-server", "greeter-client", "gospan-server");
    try {
      demo.awaitHealthy(9464);
      // the window opens once gospan-server traces (its start-up is not what this test measures)
      demo.awaitFirstServerSpanAfter(Instant.EPOCH);
      Jaeger jaeger = demo.jaeger();
      // a span first seen in poll k's answer reached Jaeger's store after poll k-1 read it (so
      // after poll k-1 was sent) and before poll k read it (so before poll k's answer came): its
      // arrival is bracketed by poll k-1's send and poll k's send (an answer's transfer and
      // parsing, 100s of ms on a loaded machine, are not the span's)
      Map<String, Instant> firstSeen = new HashMap<>();
      Map<String, Instant> notYetSeen = new HashMap<>();
      Map<String, JsonNode> spans = new HashMap<>();
      Instant previousSent = null;
      Instant until = Instant.now().plusSeconds(20);
      while (Instant.now().isBefore(until)) {
        // spans that started in the last 10 s
        Instant sent = Instant.now();
        for (JsonNode t : jaeger.tracesSince(DEMO_SERVER, sent.minusSeconds(10))) {
          for (JsonNode s : t.path("spans")) {
            String id = s.path("spanID").asText();
            if (firstSeen.putIfAbsent(id, sent) == null) {
              spans.put(id, s);
              if (previousSent != null) {
                notYetSeen.put(id, previousSent);
              }
            }
          }
        }
        previousSent = sent;
        sleep(Duration.ofMillis(100));
      }
      // spans that ended after the first poll (earlier ones were already there when it looked)
      Instant firstPoll = firstSeen.values().stream().min(Instant::compareTo).orElseThrow();
      List<Long> delaysMs = new ArrayList<>();
      List<Long> surelyAfterMs = new ArrayList<>();
      spans.forEach((id, s) -> {
        assertThat(s.path("references")).as("server span %s references", id).isEmpty();
        Instant end = micros(s.path("startTime").asLong() + s.path("duration").asLong());
        if (end.isAfter(firstPoll.plusSeconds(1))) {
          delaysMs.add(Duration.between(end, firstSeen.get(id)).toMillis());
          surelyAfterMs.add(Duration.between(end, notYetSeen.get(id)).toMillis());
        }
      });
      delaysMs.sort(Long::compare);
      surelyAfterMs.sort(Long::compare);
      System.out.printf("ComposeIT: without the client's gospan: %d server spans, end -> in Jaeger: median %d ms, max %d ms"
              + " (not yet in Jaeger: max %d ms after the end)%n",
          delaysMs.size(), delaysMs.isEmpty() ? -1 : delaysMs.get(delaysMs.size() / 2),
          delaysMs.isEmpty() ? -1 : delaysMs.get(delaysMs.size() - 1),
          surelyAfterMs.isEmpty() ? -1 : surelyAfterMs.get(surelyAfterMs.size() - 1));
      assertThat(delaysMs).as("server spans seen").hasSizeGreaterThanOrEqualTo(30);
      // gospan lets a span go within link_wait + 1 s (link_wait + 500 ms for a remote link's
      // answer, then up to 500 ms to the expiry timer's next run at this rate); + 100 ms to its
      // batch (quick-export.yml), + 200 ms in Jaeger's batch processor (its all-in-one config's
      // `batch`, the collector's default timeout). Asserted on what is certain: no span was still
      // missing from Jaeger longer than that after its end (the poll before the one that saw it)
      assertThat(surelyAfterMs.get(surelyAfterMs.size() - 1)).as("longest time a span was not yet in Jaeger after its end, ms")
          .isLessThanOrEqualTo(LINK_WAIT.plusSeconds(1).plusMillis(100 + 200).toMillis());
      String metrics = get("http://127.0.0.1:9464/metrics").body();
      assertThat(counter(metrics, "gospan_link_lookups_sent_total")).as("link lookups sent").isPositive();
      assertThat(counter(metrics, "gospan_link_lookups_unanswered_total") + counter(metrics, "gospan_link_peers_unreachable_total"))
          .as("link lookups unanswered or peers unreachable:\n%s", metrics).isPositive();
    } finally {
      demo.down();
    }
  }

  /**
   * The traced container restarted (a new greeter-server process of the same image) while its
   * gospan runs on, in the pod layout of pod.yml (in docker-compose.yml the restart would take
   * gospan-server down with it): the first call the new process serves is traced and linked, and
   * so is every later one.
   */
  @Test
  void aRestartedTracedContainerIsTracedFromItsFirstCall() {
    Demo demo = Demo.upFiles(List.of(resource("pod.yml"), hostOverride));
    try {
      demo.awaitHealthy();
      demo.awaitWholeTraces();
      String server = demo.containerId(DEMO_SERVER);
      long gospanPid = demo.gospanPids().get("gospan-server");
      engine.docker().restartContainerCmd(server).withTimeout(5).exec();
      Instant started = Instant.parse(engine.inspect(server).getState().getStartedAt());
      sleep(Duration.ofSeconds(10));
      assertThat(demo.gospanPids().get("gospan-server")).as("gospan-server ran on").isEqualTo(gospanPid);
      List<Call> after = demo.awaitCallsSettled(started, Instant.now()).stream().filter(Call::ok).toList();
      System.out.printf("ComposeIT: greeter-server restarted at %s; first served call %s%n", started,
          after.isEmpty() ? "none" : after.get(0));
      assertThat(after).as("calls served after the restart").hasSizeGreaterThanOrEqualTo(10);
      assertThat(after).as("calls served after the restart, each a whole trace: %s", demo.describe(after)).allMatch(Call::whole);
    } finally {
      demo.down();
    }
  }

  // --- the compose project ---------------------------------------------------------------------

  /** One compose project of docker-compose.yml (+ the host override + variants), up. */
  static final class Demo {
    final DockerComposeContainer<?> compose;
    /** The compose project: testcontainers' name, our prefix and a random suffix. */
    String project;

    private Demo(DockerComposeContainer<?> compose, String project) {
      this.compose = compose;
      this.project = project;
    }

    static Demo up(String... services) {
      return up(List.of(), services);
    }

    /** Up with {@code variants} (files of src/test/resources/compose) over the demo, only {@code services} if any. */
    static Demo up(List<String> variants, String... services) {
      List<File> files = new ArrayList<>();
      files.add(root.resolve("docker-compose.yml").toFile());
      files.add(hostOverride);
      variants.forEach(v -> files.add(resource(v)));
      return upFiles(files, services);
    }

    static Demo upFiles(List<File> files, String... services) {
      String project = "gospanit" + Long.toHexString(System.nanoTime() & 0xffffffL);
      projects.add(project); // until the full name is known
      @SuppressWarnings("deprecation")
      DockerComposeContainer<?> compose = new DockerComposeContainer<>(project, files)
          .withPull(false)
          .withBuild(false)
          .withRemoveVolumes(true);
      if (services.length > 0) {
        compose.withServices(services);
      }
      Demo demo = new Demo(compose, project);
      try {
        compose.start();
      } catch (RuntimeException e) {
        AssertionError failure = new AssertionError("docker-compose up failed (its output is in the test's log)", e);
        try {
          demo.down();
        } catch (RuntimeException | AssertionError d) {
          failure.addSuppressed(d);
        }
        throw failure;
      }
      demo.project = demo.actualProject();
      projects.add(demo.project);
      return demo;
    }

    private String actualProjectOr(String otherwise) {
      try {
        return actualProject();
      } catch (AssertionError e) {
        return otherwise;
      }
    }

    /** The project name testcontainers gave docker-compose (our prefix and its random suffix), from a container's label. */
    private String actualProject() {
      return engine.docker().listContainersCmd().withShowAll(true).exec().stream()
          .filter(c -> c.getNames() != null && java.util.Arrays.stream(c.getNames()).anyMatch(n -> n.startsWith("/" + project)))
          .map(c -> c.getLabels().get("com.docker.compose.project"))
          .findFirst().orElseThrow(() -> new AssertionError("no container of compose project " + project + "*"));
    }

    String containerId(String service) {
      return engine.containerOf(project, service);
    }

    Jaeger jaeger() {
      return Jaeger.attach(16686, () -> engine.logs(containerId("jaeger"), 50));
    }

    /** The host pids of the gospan containers' JVMs (the containers' first process). */
    Map<String, Long> gospanPids() {
      Map<String, Long> pids = new TreeMap<>();
      for (String s : List.of("gospan-server", "gospan-client")) {
        pids.put(s, engine.inspect(containerId(s)).getState().getPidLong());
      }
      return pids;
    }

    void awaitHealthy(int... ports) {
      int[] p = ports.length > 0 ? ports : new int[] {9464, 9466};
      for (int port : p) {
        await(Duration.ofSeconds(90), "/healthz on " + port, () -> {
          try {
            return get("http://127.0.0.1:" + port + "/healthz").statusCode() == 200;
          } catch (AssertionError e) {
            return false;
          }
        });
      }
    }

    void awaitJaeger() {
      await(Duration.ofSeconds(60), "Jaeger's query API", () -> {
        try {
          return get("http://127.0.0.1:16686/api/services").statusCode() == 200;
        } catch (AssertionError e) {
          return false;
        }
      });
    }

    /** Until Jaeger holds a whole trace of a call (the first after both gospans attached). */
    void awaitWholeTraces() {
      Jaeger j = jaeger();
      await(Duration.ofSeconds(90), "a whole trace of greeter-client's calls in Jaeger",
          () -> calls(j.traces(DEMO_CLIENT)).stream().anyMatch(Call::whole));
    }

    /**
     * The calls whose client span started in [from, to), once Jaeger's answer stopped changing
     * (after the gospans' batches and link waits, at most 60 s).
     */
    List<Call> awaitCallsSettled(Instant from, Instant to) {
      Jaeger j = jaeger();
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      List<Call> last = List.of();
      int stable = 0;
      while (System.nanoTime() < deadline) {
        List<Call> now = calls(j.traces(DEMO_CLIENT)).stream()
            .filter(c -> !c.start().isBefore(from) && c.start().isBefore(to))
            .sorted((a, b) -> a.start().compareTo(b.start()))
            .toList();
        long whole = now.stream().filter(Call::whole).count();
        if (!now.isEmpty() && now.size() == last.size() && whole == last.stream().filter(Call::whole).count()) {
          if (++stable >= 3 && Duration.between(to, Instant.now()).compareTo(LINK_WAIT.plusSeconds(8)) > 0) {
            return now;
          }
        } else {
          stable = 0;
        }
        last = now;
        sleep(Duration.ofSeconds(2));
      }
      return last;
    }

    /** The start of the first server span that started at or after {@code t}. */
    Instant awaitFirstServerSpanAfter(Instant t) {
      Jaeger j = jaeger();
      Instant[] first = new Instant[1];
      await(Duration.ofSeconds(60), "a server span after " + t, () -> {
        first[0] = j.traces(DEMO_SERVER).stream()
            .flatMap(tr -> iterable(tr.path("spans")).stream())
            .map(s -> micros(s.path("startTime").asLong()))
            .filter(s -> !s.isBefore(t))
            .min(Instant::compareTo).orElse(null);
        return first[0] != null;
      });
      return first[0];
    }

    String describe(List<Call> calls) {
      List<Call> notWhole = calls.stream().filter(c -> !c.whole()).limit(5).toList();
      return calls.size() + " calls, not whole e.g. " + notWhole + "\ngospan-server log:\n"
          + engine.logs(containerId("gospan-server"), 30) + "\ngospan-client log:\n" + engine.logs(containerId("gospan-client"), 30);
    }

    /**
     * docker-compose down -v (testcontainers), then checks this project left nothing. First the
     * containers that use another's namespaces (the sidecars) are stopped and removed through the
     * Docker API: docker-compose 1.29 removes a project's containers all at once, and podman
     * refuses to remove a container whose namespaces another container still uses.
     */
    void down() {
      if (!project.equals(actualProjectOr(project))) {
        project = actualProjectOr(project);
      }
      try {
        for (com.github.dockerjava.api.model.Container c : engine.docker().listContainersCmd().withShowAll(true)
            .withLabelFilter(Map.of("com.docker.compose.project", project)).exec()) {
          InspectContainerResponse i = engine.inspect(c.getId());
          String pid = i.getHostConfig().getPidMode();
          String net = i.getHostConfig().getNetworkMode();
          if ((pid != null && pid.startsWith("container:")) || (net != null && net.startsWith("container:"))) {
            if (Boolean.TRUE.equals(i.getState().getRunning())) {
              engine.docker().stopContainerCmd(c.getId()).withTimeout(20).exec();
            }
            engine.docker().removeContainerCmd(c.getId()).withRemoveVolumes(true).exec();
          }
        }
      } finally {
        try {
          compose.stop();
        } finally {
          assertThat(engine.leftovers(Set.of(project))).as("after down of %s", project).isEmpty();
        }
      }
    }
  }

  static File resource(String name) {
    return root.resolve("receiver/src/test/resources/compose").resolve(name).toFile();
  }

  /** One client call in Jaeger: its client span, the server span that is its child if any. */
  record Call(String traceId, Instant start, boolean ok, boolean whole, String clientContainer, String serverContainer) {}

  /** The client spans of greeter-client in {@code traces}, each with whether a greeter-server span is its child. */
  static List<Call> calls(List<JsonNode> traces) {
    List<Call> out = new ArrayList<>();
    for (JsonNode t : traces) {
      Map<String, JsonNode> processes = new HashMap<>();
      t.path("processes").fields().forEachRemaining(e -> processes.put(e.getKey(), e.getValue()));
      for (JsonNode c : t.path("spans")) {
        JsonNode cp = processes.get(c.path("processID").asText());
        if (cp == null || !DEMO_CLIENT.equals(cp.path("serviceName").asText()) || !"client".equals(tag(c, "span.kind"))) {
          continue;
        }
        String serverContainer = null;
        for (JsonNode s : t.path("spans")) {
          JsonNode sp = processes.get(s.path("processID").asText());
          if (sp != null && DEMO_SERVER.equals(sp.path("serviceName").asText()) && "server".equals(tag(s, "span.kind"))
              && childOf(s, c.path("spanID").asText())) {
            serverContainer = tag(sp, "container.id");
          }
        }
        out.add(new Call(t.path("traceID").asText(), micros(c.path("startTime").asLong()), !"true".equals(tag(c, "error")),
            serverContainer != null, tag(cp, "container.id"), serverContainer));
      }
    }
    return out;
  }

  private static boolean childOf(JsonNode span, String parentId) {
    for (JsonNode r : span.path("references")) {
      if ("CHILD_OF".equals(r.path("refType").asText()) && parentId.equals(r.path("spanID").asText())) {
        return true;
      }
    }
    return false;
  }

  private static String tag(JsonNode spanOrProcess, String key) {
    for (JsonNode t : spanOrProcess.path("tags")) {
      if (key.equals(t.path("key").asText())) {
        return t.path("value").asText();
      }
    }
    return null;
  }

  /** The client calls every 1/RATE s: no two successive calls in [from, to) more than 1.5 periods apart. */
  static void assertNoGaps(List<Call> calls, Instant from, Instant to, String what) {
    long expected = (long) (Duration.between(from, to).toMillis() / 1000.0 * RATE);
    assertThat((long) calls.size()).as("%s, %d expected at %s calls/s", what, expected, RATE)
        .isGreaterThanOrEqualTo(expected - 1);
    for (int i = 1; i < calls.size(); i++) {
      assertThat(Duration.between(calls.get(i - 1).start(), calls.get(i).start()).toMillis())
          .as("%s: gap after %s", what, calls.get(i - 1)).isLessThanOrEqualTo((long) (1500 / RATE));
    }
  }

  /** VmRSS and Pss of a process (/proc/<pid>/status, smaps_rollup), for the figures. */
  static String memory(long pid) {
    try {
      String status = Files.readString(Path.of("/proc", Long.toString(pid), "status"));
      String rollup = Files.readString(Path.of("/proc", Long.toString(pid), "smaps_rollup"));
      Matcher rss = Pattern.compile("(?m)^VmRSS:\\s+(\\d+) kB").matcher(status);
      Matcher pss = Pattern.compile("(?m)^Pss:\\s+(\\d+) kB").matcher(rollup);
      return (rss.find() ? Long.parseLong(rss.group(1)) / 1024 + " MiB RSS" : "?") + ", "
          + (pss.find() ? Long.parseLong(pss.group(1)) / 1024 + " MiB PSS" : "?");
    } catch (IOException e) {
      return "(" + e + ")";
    }
  }

  /**
   * KiB of a process's mappings of the image's CDS archive ({@code gospan.jsa}): resident, and
   * resident and shared clean (other processes map the same pages), from /proc/<pid>/smaps.
   */
  static long[] archivePages(long pid) {
    try {
      long rss = 0;
      long sharedClean = 0;
      boolean archive = false;
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps"))) {
        if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) { // a mapping's header: its path is the last field
          archive = line.endsWith("gospan.jsa");
        } else if (archive && line.startsWith("Rss:")) {
          rss += Long.parseLong(line.replaceAll("\\D", ""));
        } else if (archive && line.startsWith("Shared_Clean:")) {
          sharedClean += Long.parseLong(line.replaceAll("\\D", ""));
        }
      }
      return new long[] {rss, sharedClean};
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static Instant micros(long us) {
    return Instant.ofEpochSecond(us / 1_000_000, (us % 1_000_000) * 1000);
  }

  private static List<JsonNode> iterable(JsonNode array) {
    List<JsonNode> out = new ArrayList<>();
    array.forEach(out::add);
    return out;
  }

  /** The sum of a Prometheus counter's samples (all label sets) in a /metrics answer; 0 when absent. */
  static long counter(String metrics, String name) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? ([0-9.eE+-]+)").matcher(metrics);
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(2));
    }
    return (long) sum;
  }

  static HttpResponse<String> get(String url) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new AssertionError("GET " + url + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  static void await(Duration timeout, String what, BooleanSupplier until) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!until.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + ": not within " + timeout);
      }
      sleep(Duration.ofMillis(200));
    }
  }

  static void sleep(Duration d) {
    ContainerEngine.sleep(d.toMillis());
  }
}
