package io.gospan.receiver;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package graph of docs/architecture.md ("Package graph"), checked on the compiled main
 * classes (ArchUnit reads the bytecode: imports, fully-qualified names, signatures, constants'
 * owners all count). Any dependency between gospan packages that {@link #ALLOWED} does not list
 * fails, unless {@link #KNOWN_EXCEPTIONS} names it.
 */
class ArchitectureTest {

  /**
   * Which gospan packages each package may use. A package is {@code io.gospan.receiver.<name>}, or
   * {@code offsets} for all of {@code io.gospan.offsets}. The composition root ({@code cli} today,
   * {@code app} later) may use every package.
   */
  static final Map<String, Set<String>> ALLOWED =
      Map.ofEntries(
          Map.entry("event", Set.of()),
          // gospan's own version, from the build: a leaf every package may use (LEAVES)
          Map.entry("version", Set.of()),
          // log helpers (LogLimiter): a leaf every package may use (LEAVES)
          Map.entry("logging", Set.of()),
          Map.entry("bpf", Set.of()),
          // config validates headers.allow with event.HeaderPolicy (the one credential policy), and nothing else
          Map.entry("config", Set.of("event")),
          Map.entry("probe", Set.of("bpf", "event", "offsets")),
          Map.entry("discovery", Set.of("probe", "offsets", "event")),
          Map.entry("span", Set.of("event")),
          // linking across gospans: answers from and hands answers to span assembly (RemoteLinks, declared in span)
          Map.entry("link", Set.of("span")),
          Map.entry("metrics", Set.of("span", "event")),
          // export builds the SDK pipeline from the configuration's records and feeds span assembly
          // the probes' events (event is the vocabulary both sides share)
          Map.entry("export", Set.of("span", "event", "metrics", "config")));

  static final Set<String> COMPOSITION_ROOTS = Set.of("cli", "app");

  /** Packages that depend on nothing of gospan and that every package may use. */
  static final Set<String> LEAVES = Set.of("version", "logging");

  /** Of {@code config}'s dependencies on {@code event}, the one allowed. */
  static final String CONFIG_MAY_USE = "io.gospan.receiver.event.HeaderPolicy";

  /**
   * Dependencies today's code still has against the graph; span, event and metrics have none, and
   * config's only one is the offsets preference. Each entry is "origin class → target package"; remove an
   * entry when its cause goes (the test then fails if the dependency is still there, see {@link
   * #knownExceptionsAreStillNeeded}).
   */
  static final Set<String> KNOWN_EXCEPTIONS = Set.of();

  static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    // the main classes' directory (target/classes)
    java.nio.file.Path main;
    try {
      main = java.nio.file.Path.of(io.gospan.receiver.span.SpanAssembler.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (java.net.URISyntaxException e) {
      throw new AssertionError(e);
    }
    classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPath(main);
    assertThat(classes.contain(io.gospan.receiver.span.SpanAssembler.class)).isTrue();
  }

  /** The gospan package a class belongs to, or {@code null} for a class outside gospan. */
  static String packageOf(JavaClass c) {
    String p = c.getPackageName();
    if (p.equals("io.gospan.offsets") || p.startsWith("io.gospan.offsets.")) {
      return "offsets";
    }
    String prefix = "io.gospan.receiver.";
    if (!p.startsWith(prefix)) {
      return p.equals("io.gospan.receiver") ? "" : null;
    }
    String rest = p.substring(prefix.length());
    int dot = rest.indexOf('.');
    return dot < 0 ? rest : rest.substring(0, dot);
  }

  /** Every dependency between two gospan packages the graph does not allow, as "origin → target package". */
  static Map<String, String> violations() {
    Map<String, String> out = new java.util.TreeMap<>();
    for (JavaClass c : classes) {
      String from = packageOf(c);
      if (from == null || COMPOSITION_ROOTS.contains(from)) {
        continue;
      }
      for (Dependency d : c.getDirectDependenciesFromSelf()) {
        JavaClass target = d.getTargetClass().getBaseComponentType();
        String to = packageOf(target);
        if (to == null || to.equals(from) || LEAVES.contains(to)) {
          continue;
        }
        Set<String> allowed = ALLOWED.get(from);
        boolean ok = allowed != null && allowed.contains(to);
        if (ok && from.equals("config") && to.equals("event")) {
          ok = target.getName().equals(CONFIG_MAY_USE);
        }
        if (!ok) {
          String origin = c.getName();
          int inner = origin.indexOf('$');
          String outerName = inner < 0 ? origin : origin.substring(0, inner);
          // a lambda or anonymous class counts as its outer class; a named nested class as itself
          String key = (isSynthetic(origin) ? outerName : origin) + " -> " + to;
          out.putIfAbsent(key, d.getDescription());
        }
      }
    }
    return out;
  }

  private static boolean isSynthetic(String name) {
    int inner = name.lastIndexOf('$');
    return inner >= 0 && name.substring(inner + 1).chars().allMatch(Character::isDigit);
  }

  @Test
  void everyPackageListedInTheGraphExists() {
    Set<String> present = new TreeSet<>();
    classes.forEach(c -> {
      String p = packageOf(c);
      if (p != null) {
        present.add(p);
      }
    });
    assertThat(present).containsAll(ALLOWED.keySet());
    // a new package must be placed in the graph (or be a composition root) before it is used
    Set<String> unplaced = new TreeSet<>(present);
    unplaced.removeAll(ALLOWED.keySet());
    unplaced.removeAll(COMPOSITION_ROOTS);
    unplaced.remove("");
    assertThat(unplaced).as("packages missing from ALLOWED").isEmpty();
  }

  @Test
  void noDependencyOutsideTheGraph() {
    Map<String, String> v = violations();
    v.keySet().removeAll(KNOWN_EXCEPTIONS);
    assertThat(v).as("dependencies outside the package graph of docs/architecture.md").isEmpty();
  }

  @Test
  void knownExceptionsAreStillNeeded() {
    Set<String> stale = new TreeSet<>(KNOWN_EXCEPTIONS);
    stale.removeAll(violations().keySet());
    assertThat(stale).as("exceptions whose dependency is gone: delete them from KNOWN_EXCEPTIONS").isEmpty();
  }

  @Test
  void spanUsesOnlyTheOpenTelemetryApiTheSdksTraceDataTypesAndGrpcStatusCodes() {
    List<String> allowedPrefixes =
        List.of(
            "java.",
            "io.gospan.receiver.span.",
            "io.gospan.receiver.event.",
            "io.gospan.receiver.version.",
            "io.grpc.Status", // grpc-java's status codes (Status.Code, Status.fromCodeValue)
            "io.opentelemetry.api.",
            "io.opentelemetry.context.",
            "io.opentelemetry.sdk.trace.data.",
            "io.opentelemetry.sdk.trace.IdGenerator",
            "io.opentelemetry.sdk.trace.samplers.", // sampling.*: the SDK's samplers decide, span assembly asks them
            "io.opentelemetry.sdk.common.InstrumentationScopeInfo",
            "io.opentelemetry.sdk.common.InstrumentationLibraryInfo",
            "io.opentelemetry.sdk.resources.Resource",
            "org.slf4j.");
    Set<String> bad = new TreeSet<>();
    for (JavaClass c : classes) {
      if (!"span".equals(packageOf(c))) {
        continue;
      }
      for (Dependency d : c.getDirectDependenciesFromSelf()) {
        String target = d.getTargetClass().getBaseComponentType().getName();
        if (d.getTargetClass().getBaseComponentType().isPrimitive()
            || allowedPrefixes.stream().anyMatch(target::startsWith)) {
          continue;
        }
        bad.add(c.getSimpleName() + " -> " + target);
      }
    }
    assertThat(bad).as("span may use the OpenTelemetry API, the SDK's trace data types and grpc-java's status codes only").isEmpty();
  }

  @Test
  void eventUsesNothingButTheJdk() {
    Set<String> bad = new TreeSet<>();
    for (JavaClass c : classes) {
      if (!"event".equals(packageOf(c))) {
        continue;
      }
      for (Dependency d : c.getDirectDependenciesFromSelf()) {
        JavaClass t = d.getTargetClass().getBaseComponentType();
        if (!t.isPrimitive() && !t.getName().startsWith("java.") && !t.getPackageName().equals(c.getPackageName())) {
          bad.add(c.getSimpleName() + " -> " + t.getName());
        }
      }
    }
    assertThat(bad).isEmpty();
  }

  @Test
  void noCyclesBetweenPackages() {
    SlicesRuleDefinition.slices()
        .matching("io.gospan.receiver.(*)..")
        .should()
        .beFreeOfCycles()
        .check(classes);
  }
}
