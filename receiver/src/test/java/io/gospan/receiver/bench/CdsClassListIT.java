package io.gospan.receiver.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The class list the image's class-data-sharing archive is dumped from
 * ({@code receiver/src/main/cds/gospan.classlist}) is not missing gospan's own classes: this
 * build's jar, run as {@link CdsTraining} runs it (the recommended JVM settings, OTLP/gRPC to a
 * counting receiver, the telemetry endpoint and linking on) with {@code -Xlog:class+load}, traces
 * the example server while the example client makes each call type, and is stopped with SIGTERM;
 * every {@code io.gospan} class it loaded must be in the list. A class missing from the list still
 * works (the JVM loads it from the jar), but each sidecar then pays its private copy, and nothing
 * else would notice: {@link CdsClassListTest} catches classes listed that no longer exist, this
 * catches the other way round, for gospan's own classes (the libraries' change only when a
 * dependency is upgraded, which regenerating the list after an upgrade covers).
 */
class CdsClassListIT {
  /** The calls made below, each a server span (the configuration selects the server by its port). */
  private static final long SERVER_SPANS = 4 * (50 + 5);

  /** {@code [0.123s][info][class,load] NAME source: ...}. */
  private static final Pattern LOADED = Pattern.compile("\\[class,load\\s*\\]\\s+(\\S+)\\s+source:");

  @Test
  void everyGospanClassARunLoadsIsListed() throws Exception {
    Path listFile = ExampleApps.repoRoot().resolve("receiver/src/main/cds/gospan.classlist");
    Set<String> listed = Files.readAllLines(listFile).stream()
        .filter(l -> !l.isEmpty() && !l.startsWith("#") && !l.startsWith("@"))
        .map(l -> l.split(" ")[0].replace('/', '.'))
        .collect(Collectors.toSet());

    Path dir = ExampleApps.build();
    Path log = Files.createTempFile("gospan-cds-classes", ".log");
    LoadBenchmark.Build plain = LoadBenchmark.builds().values().iterator().next();
    List<String> jvm = new ArrayList<>(plain.jvm());
    jvm.add("-Xlog:class+load=info:file=" + log);
    LoadBenchmark.Build build = new LoadBenchmark.Build(plain.jar(), List.copyOf(jvm), plain.env(), null);
    CountingOtlpReceiver receiver = new CountingOtlpReceiver();
    Path config = Files.createTempFile("gospan-cds-classes", ".yaml");
    int telemetry = LoadBenchmark.freePort();
    Set<String> loaded;
    try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
      Files.writeString(config, PssBenchmark.configYaml(dir, receiver, telemetry, LoadBenchmark.freePort(), server.port()));
      Process gospan = LoadBenchmark.startGospan(build, config, telemetry);
      try {
        for (String rpc : List.of("unary", "server-stream", "client-stream", "bidi")) {
          ExampleApps.runClient(dir, server.address(), "-rpc", rpc, "-n", "50", "-concurrency", "4", "-quiet");
          ExampleApps.runClient(dir, server.address(), "-rpc", rpc, "-n", "5", "-fail-code", "NOT_FOUND", "-quiet");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (receiver.spans.sum() < SERVER_SPANS && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
        LoadBenchmark.scrape(telemetry);
      } finally {
        gospan.destroy();
        if (!gospan.waitFor(60, TimeUnit.SECONDS)) {
          gospan.destroyForcibly().waitFor();
        }
      }
      assertThat(receiver.spans.sum()).as("spans received: the run traced the calls").isGreaterThanOrEqualTo(SERVER_SPANS);
      try (var lines = Files.lines(log)) {
        loaded = lines.map(LOADED::matcher).filter(Matcher::find).map(m -> m.group(1)).collect(Collectors.toSet());
      }
    } finally {
      receiver.close();
      Files.deleteIfExists(config);
      Files.deleteIfExists(log);
    }
    Set<String> gospan = loaded.stream()
        // not lambdas and not jnr-ffi's stubs, which it generates at run time (no archive can hold them)
        .filter(c -> c.startsWith("io.gospan.") && !c.contains("$$Lambda") && !c.contains("/") && !c.contains("$jnr$ffi$"))
        .collect(Collectors.toCollection(TreeSet::new));
    assertThat(gospan).as("gospan's classes the run loaded").hasSizeGreaterThan(100);
    assertThat(gospan.stream().filter(c -> !listed.contains(c)).toList())
        .as("gospan classes a run loads that " + listFile + " lacks: run scripts/cds-classlist.sh")
        .isEmpty();
  }
}
