package io.gospan.receiver.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The class list the image's class-data-sharing archive is dumped from
 * ({@code receiver/src/main/cds/gospan.classlist}) is not missing gospan's own classes: {@link
 * CdsTraining#run}, the run the list is recorded from with a shorter workload (the recommended JVM
 * settings, OTLP/gRPC to a counting receiver, the telemetry endpoint and linking on, each call type,
 * failing calls, SIGTERM), under {@code -Xlog:class+load}; every {@code io.gospan} class it loaded
 * must be in the list. A class missing from the list still
 * works (the JVM loads it from the jar), but each sidecar then pays its private copy, and nothing
 * else would notice: {@link CdsClassListTest} catches classes listed that no longer exist, this
 * catches the other way round, for gospan's own classes (the libraries' change only when a
 * dependency is upgraded, which regenerating the list after an upgrade covers).
 */
class CdsClassListIT {
  /** The run's calls that succeed or fail at once, each a server span (the server alone is selected). */
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

    Path log = Files.createTempFile("gospan-cds-classes", ".log");
    Set<String> loaded;
    try {
      long spans = CdsTraining.run(List.of("-Xlog:class+load=info:file=" + log), 50, 0);
      assertThat(spans).as("spans received: the run traced the calls").isGreaterThanOrEqualTo(SERVER_SPANS);
      try (var lines = Files.lines(log)) {
        loaded = lines.map(LOADED::matcher).filter(Matcher::find).map(m -> m.group(1)).collect(Collectors.toSet());
      }
    } finally {
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
