package io.gospan.receiver.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.ExampleApps;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (not a test): the traced application's throughput, latency and CPU per call
 * without gospan, with empty uprobes at the points gospan attaches to (the floor: the traps
 * alone), and with gospan attached (a separate {@code java -jar gospan.jar run} process, one or
 * several builds), alternating in the same run over several rounds, per workload; and the
 * sidecar's own CPU per span, RSS and losses under that load: events lost in the ring buffer,
 * spans dropped, and spans the OTLP receiver did not get. Prints a Markdown table per build and
 * one summary line per build and workload.
 *
 * <p>Run: {@code scripts/bench-load.sh [rounds]} (root).
 */
public final class LoadBenchmark {
  private LoadBenchmark() {}

  /**
   * The JVM settings the README recommends for the sidecar and {@code receiver/Dockerfile} runs it
   * with ({@code RecommendedJvmSettingsTest} checks that the three agree). {@code
   * TrimNativeHeapInterval} (ms; a product flag since JDK 17.0.9): the JVM returns the C heap's
   * free memory to the kernel ({@code malloc_trim}) every 5 s, so what the JIT compilers' arenas
   * freed stops counting in the RSS. {@code -XX:-UsePerfData}: no {@code hsperfdata} counters,
   * whose sampling woke the JVM's periodic task thread 20 times a second (a third of the idle
   * sidecar's wake-ups; {@code jcmd <pid>} still works, {@code jps}/{@code jstat} do not see it).
   */
  public static final List<String> JVM =
      List.of("-Xms32m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:MaxMetaspaceSize=96m", "-Xss512k",
          "-XX:TrimNativeHeapInterval=5000", "-XX:-UsePerfData");

  /**
   * What the image's {@code ENTRYPOINT} adds to {@link #JVM}: the class-data-sharing archive it
   * dumps from {@code receiver/src/main/cds/gospan.classlist}, mapped at the address it was dumped
   * for ({@code ArchiveRelocationMode=0}, a diagnostic flag: this JDK maps archives at a random
   * address by default and then rewrites their pointers, which makes most of their pages private
   * to each JVM). docs/benchmarks.md, "Memory a node pays".
   */
  public static final List<String> IMAGE_CDS =
      List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:ArchiveRelocationMode=0", "-XX:SharedArchiveFile=/opt/gospan/gospan.jsa");

  /**
   * The environment of the sidecar's JVM, as {@code receiver/Dockerfile} sets it: glibc's malloc
   * with at most 2 arenas instead of 8 per core (each thread that mallocs, JIT compiler threads
   * above all, would otherwise keep its own arena of freed memory).
   */
  static final Map<String, String> ENV = Map.of("MALLOC_ARENA_MAX", "2");

  /**
   * A tracer to measure: a gospan build (its jar, its JVM options and environment), or a peer
   * ({@code peer}: an executable, as {@code scripts/bench-peers.sh} builds OBI, {@code jar} null)
   * started with {@code env} only.
   */
  record Build(Path jar, List<String> jvm, Map<String, String> env, Path peer) {
    boolean gospan() {
      return peer == null;
    }
  }

  record Workload(String name, List<String> clientArgs) {
    /** The client's flags for this workload, with {@code -quiet} (no log line per unexpected result). */
    String[] quietArgs() {
      List<String> args = new ArrayList<>(clientArgs);
      args.add("-quiet");
      return args.toArray(new String[0]);
    }
  }

  static List<Workload> selectedWorkloads() {
    String only = System.getProperty("gospan.bench.workloads");
    if (only == null || only.isBlank()) {
      return ALL_WORKLOADS;
    }
    List<String> prefixes = List.of(only.split(";"));
    return ALL_WORKLOADS.stream().filter(w -> prefixes.stream().anyMatch(p -> w.name().startsWith(p))).toList();
  }

  static final List<Workload> ALL_WORKLOADS =
      List.of(
          new Workload("unary, 1 caller, full speed", List.of("-rpc", "unary", "-n", "4000", "-concurrency", "1")),
          new Workload("unary, 16 callers, full speed", List.of("-rpc", "unary", "-n", "40000", "-concurrency", "16", "-conns", "4")),
          new Workload("unary, 500 calls/s (1,000 spans/s)", List.of("-rpc", "unary", "-n", "12000", "-rate", "500", "-concurrency", "16", "-conns", "4")),
          new Workload("unary, 2,000 calls/s", List.of("-rpc", "unary", "-n", "10000", "-rate", "2000", "-concurrency", "16", "-conns", "4")),
          new Workload("unary, 10,000 calls/s (20,000 spans/s)", List.of("-rpc", "unary", "-n", "50000", "-rate", "10000", "-concurrency", "16", "-conns", "4")),
          new Workload("server-streaming (10 replies), 4 callers", List.of("-rpc", "server-stream", "-reply-count", "10", "-n", "8000", "-concurrency", "4")));

  /**
   * The workloads measured: {@link #ALL_WORKLOADS}, or with {@code -Dgospan.bench.workloads="a;b"} those
   * whose name starts with one of the given prefixes (e.g. {@code "unary, 1 caller;unary, 16"}).
   */
  static final List<Workload> WORKLOADS = selectedWorkloads();

  /**
   * One measured run; {@code threadCpuUsPerCall}: the sidecar's CPU by thread name (digits dropped),
   * µs per call; {@code spansExported}: what the OTLP receiver counted (-1 with another exporter);
   * {@code receiverCpuUsPerSpan}: this JVM's CPU (the OTLP receiver, on the same cores as the traced
   * program) per span it counted, from the run's start until the last span came (NaN without one).
   */
  record Run(double callsPerS, double p50Us, double p99Us, double cpuUsPerCall, long calls,
             double sidecarCpuUsPerCall, long sidecarRssKb, double eventsPerS, long eventsLost, long spansDropped,
             Map<String, Double> threadCpuUsPerCall, long spansExported, double receiverCpuUsPerSpan) {
    /** The sidecar's CPU less its JIT compiler threads' ({@code C1/C2 CompilerThread}): the work per call itself. */
    double sidecarCpuWithoutJitUsPerCall() {
      return sidecarCpuUsPerCall - threadCpuUsPerCall.entrySet().stream()
          .filter(e -> e.getKey().contains("CompilerThre")).mapToDouble(Map.Entry::getValue).sum();
    }

    /** Spans a run should give: a client and a server span per call (unary and streaming alike). */
    long spansExpected() {
      return 2 * calls;
    }

    double sidecarCpuUsPerSpan() {
      return sidecarCpuUsPerCall * calls / spansExpected();
    }

    double sidecarCpuWithoutJitUsPerSpan() {
      return sidecarCpuWithoutJitUsPerCall() * calls / spansExpected();
    }

    /** Spans the receiver did not get (0 when not counted). */
    long spansMissing() {
      return spansExported < 0 ? 0 : Math.max(0, spansExpected() - spansExported);
    }
  }

  /**
   * The "spans not received" column: the spans the receiver did not get; for a build sampling at a
   * ratio ({@code gospan.bench.ratios}), the fraction of the calls' spans it got instead ("kept 0.098").
   */
  static String received(Build build, List<Run> runs, boolean counted) {
    if (!counted) {
      return "-";
    }
    if (build.env().containsKey("OTEL_TRACES_SAMPLER_ARG")) {
      return String.format("kept %.3f", runs.stream().mapToLong(Run::spansExported).sum()
          / (double) runs.stream().mapToLong(Run::spansExpected).sum());
    }
    return Long.toString(runs.stream().mapToLong(Run::spansMissing).sum());
  }

  static final long TICK_NS = 10_000_000L; // USER_HZ = 100

  /** How long the idle sidecar's CPU is read after each warm-up (10 ms ticks: 0.1 % of a core per tick). */
  static final long IDLE_MILLIS = 10_000;

  /** The sidecar's telemetry port: a free one, so that benchmarks of other clones can run alongside. */
  static final int TELEMETRY_PORT = freePort();

  static int freePort() {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * The builds to measure: {@code -Dgospan.bench.jars=label=path,label2=path2} measures several
   * builds alternating in the same run; default: this build's jar. {@code
   * -Dgospan.bench.jvm.LABEL="-Xmx128m ... NAME=VALUE"}: that build's JVM options and environment
   * (words without a leading '-' are environment variables) instead of {@link #JVM} and {@link #ENV};
   * {@code -Dgospan.bench.jvm.add.LABEL=-XX:A,-XX:B}: options added to that build's (no spaces,
   * so that a script's {@code GOSPAN_BENCH_OPTS} carries them, e.g. a CDS archive).
   * {@code -Dgospan.bench.config.LABEL=FILE}: that build's configuration adds FILE's YAML (the same
   * jar under two labels measures two configurations in one run); {@code
   * -Dgospan.bench.protocol.LABEL=http/protobuf}: that build exports over OTLP/HTTP (the JDK's
   * HTTP client) to the same receiver.
   * {@code -Dgospan.bench.ratios=1,0.1,0.01}: each build once per sampling ratio ({@code
   * OTEL_TRACES_SAMPLER=traceidratio}, {@code OTEL_TRACES_SAMPLER_ARG}), labelled {@code build@ratio};
   * "spans not received" then counts against that ratio of the spans.
   */
  static Map<String, Build> builds() {
    Map<String, Path> jars = new LinkedHashMap<>();
    String jarsProperty = System.getProperty("gospan.bench.jars");
    if (jarsProperty == null || jarsProperty.isBlank()) {
      jars.put("gospan", ExampleApps.repoRoot().resolve("receiver/target/gospan.jar"));
    } else {
      for (String item : jarsProperty.split(",")) {
        int eq = item.indexOf('=');
        jars.put(item.substring(0, eq), Path.of(item.substring(eq + 1)));
      }
    }
    Map<String, Build> builds = new LinkedHashMap<>();
    for (Map.Entry<String, Path> jar : jars.entrySet()) {
      if (!Files.exists(jar.getValue())) {
        throw new IllegalStateException(jar.getValue() + " missing: mvn -DskipTests package");
      }
      String options = System.getProperty("gospan.bench.jvm." + jar.getKey());
      List<String> jvm = new ArrayList<>(JVM);
      Map<String, String> env = new LinkedHashMap<>(ENV);
      if (options != null) {
        jvm.clear();
        env.clear();
        for (String word : options.trim().split("\\s+")) {
          if (word.startsWith("-")) {
            jvm.add(word);
          } else if (!word.isEmpty()) {
            env.put(word.substring(0, word.indexOf('=')), word.substring(word.indexOf('=') + 1));
          }
        }
      }
      String added = System.getProperty("gospan.bench.jvm.add." + jar.getKey());
      if (added != null && !added.isBlank()) {
        jvm.addAll(List.of(added.trim().split(",")));
      }
      builds.put(jar.getKey(), new Build(jar.getValue(), List.copyOf(jvm), Map.copyOf(env), null));
    }
    String ratios = System.getProperty("gospan.bench.ratios");
    if (ratios != null && !ratios.isBlank()) {
      // each build again per sampling ratio (OTEL_TRACES_SAMPLER=traceidratio): what sampling saves, in one run
      Map<String, Build> sampled = new LinkedHashMap<>();
      for (Map.Entry<String, Build> b : builds.entrySet()) {
        for (String ratio : ratios.split(",")) {
          Map<String, String> env = new LinkedHashMap<>(b.getValue().env());
          env.put("OTEL_TRACES_SAMPLER", "traceidratio");
          env.put("OTEL_TRACES_SAMPLER_ARG", ratio.trim());
          sampled.put(b.getKey() + "@" + ratio.trim(), new Build(b.getValue().jar(), b.getValue().jvm(), Map.copyOf(env), null));
        }
      }
      builds = sampled;
    }
    String peers = System.getProperty("gospan.bench.peers");
    if (peers != null && !peers.isBlank()) {
      for (String item : peers.split(",")) {
        int eq = item.indexOf('=');
        Path exe = Path.of(item.substring(eq + 1));
        if (!Files.isExecutable(exe)) {
          throw new IllegalStateException(exe + " missing or not executable: scripts/bench-peers.sh builds it");
        }
        builds.put(item.substring(0, eq), new Build(null, List.of(), Map.of(), exe));
      }
    }
    return builds;
  }

  /**
   * A peer's environment (OBI's settings, {@code OTEL_EBPF_*} and the SDK's {@code OTEL_*}): only
   * the programs in {@code dir}, OTLP/gRPC traces to {@code receiver}, nothing else exported or
   * printed. OBI looks for new processes every 5 s and leaves a process alone until it is 5 s old
   * by default: the benchmark's clients run for 1–3 s, so it polls every 500 ms and takes
   * processes at any age (with a kprobe-less kernel it has no other way to see them,
   * scripts/peers/obi-poll-proc.patch). gospan's counterpart is its exec notices and lingering
   * binaries.
   */
  static Map<String, String> peerEnv(Path dir, String endpoint) throws IOException {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("OTEL_EBPF_AUTO_TARGET_EXE", dir.toRealPath() + "/*");
    env.put("OTEL_EBPF_DISCOVERY_POLL_INTERVAL", "500ms");
    env.put("OTEL_EBPF_MIN_PROCESS_AGE", "0s");
    env.put("OTEL_EBPF_TRACE_PRINTER", "disabled");
    env.put("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint);
    env.put("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
    env.put("OTEL_SERVICE_NAME", "bench");
    return env;
  }

  /**
   * The sidecar's configuration: {@code exporter} ({@code otlp} to {@code receiver}), the telemetry
   * endpoint on {@link #TELEMETRY_PORT}, only the programs in {@code dir} traced (the machine may
   * run other Go gRPC programs).
   */
  static String configYaml(Path dir, String exporter, CountingOtlpReceiver receiver) throws IOException {
    return configYaml(dir, exporter, receiver, "grpc");
  }

  /** The same, exporting over OTLP {@code protocol} ({@code grpc} or {@code http/protobuf}) to {@code receiver}. */
  static String configYaml(Path dir, String exporter, CountingOtlpReceiver receiver, String protocol) throws IOException {
    boolean http = protocol.equals("http/protobuf");
    return "exporter:\n  type: " + exporter + "\n  file:\n    path: /dev/null\n"
        + (receiver != null
            ? "  otlp:\n    protocol: " + protocol + "\n    endpoint: " + (http ? receiver.httpEndpoint() : receiver.endpoint()) + "\n"
            : "")
        + "metrics:\n  enabled: false\n"
        + "telemetry:\n  http:\n    enabled: true\n    address: 127.0.0.1:" + TELEMETRY_PORT + "\n"
        + "discovery:\n  instrument:\n    - exe_path: \"" + dir.toRealPath() + "/*\"\n";
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    Path dir = ExampleApps.build();
    Map<String, Build> builds = builds();
    Path config = Files.createTempFile("gospan-bench", ".yaml");
    // -Dgospan.bench.exporter=otlp (the default) exports over OTLP/gRPC to a receiver in this JVM
    // that only counts; =file writes OTLP JSON to /dev/null; =none leaves the span encoding out
    String exporter = System.getProperty("gospan.bench.exporter", "otlp");
    CountingOtlpReceiver receiver = exporter.equals("otlp") ? new CountingOtlpReceiver() : null;
    // only the benchmark's own programs are traced: the machine may run other Go gRPC programs
    Files.writeString(config, configYaml(dir, exporter, receiver));
    // -Dgospan.bench.config.LABEL=FILE (builds()): FILE holds top-level keys not set above;
    // -Dgospan.bench.protocol.LABEL=http/protobuf: that build exports over OTLP/HTTP to the receiver
    Map<String, Path> configs = new LinkedHashMap<>();
    for (String label : builds.keySet()) {
      String extra = System.getProperty("gospan.bench.config." + label);
      String protocol = System.getProperty("gospan.bench.protocol." + label, "grpc");
      if (extra != null || !protocol.equals("grpc")) {
        Path c = Files.createTempFile("gospan-bench-" + label, ".yaml");
        Files.writeString(c, configYaml(dir, exporter, receiver, protocol) + (extra != null ? Files.readString(Path.of(extra)) : ""));
        configs.put(label, c);
      }
    }
    receiverSpans = receiver != null ? receiver.spans : null;
    // -Dgospan.bench.floor=false leaves out the empty-uprobes runs
    boolean floor = Boolean.parseBoolean(System.getProperty("gospan.bench.floor", "true"));
    Map<String, List<Run>> empty = new LinkedHashMap<>();
    Map<String, List<Run>> without = new LinkedHashMap<>();
    Map<String, Map<String, List<Run>>> with = new LinkedHashMap<>();
    Map<String, List<Long>> idleRss = new LinkedHashMap<>();
    Map<String, List<Double>> jitSettle = new LinkedHashMap<>();
    Map<String, List<Double>> idleCpu = new LinkedHashMap<>();
    Map<String, List<Double>> warmupDropped = new LinkedHashMap<>();
    Map<String, List<Double>> warmups = new LinkedHashMap<>();
    Map<String, List<Double>> jitSeconds = new LinkedHashMap<>();
    try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
      ExampleApps.runClient(dir, server.address(), "-n", "2000", "-concurrency", "8"); // warm-up
      for (int round = 0; round < rounds; round++) {
        for (Workload w : WORKLOADS) {
          without.computeIfAbsent(w.name(), k -> new ArrayList<>()).add(run(dir, server, w, null, false));
          if (floor) {
            try (EmptyProbes probes = EmptyProbes.attach(dir)) {
              empty.computeIfAbsent(w.name(), k -> new ArrayList<>()).add(run(dir, server, w, null, false));
            }
          }
          // the builds' order turns by one each round, so that none always runs first
          List<Map.Entry<String, Build>> order = new ArrayList<>(builds.entrySet());
          java.util.Collections.rotate(order, -round);
          for (Map.Entry<String, Build> jar : order) {
            Build build = jar.getValue();
            Process gospan = build.gospan()
                ? startGospan(build, configs.getOrDefault(jar.getKey(), config))
                : startPeer(build, dir, server, receiver);
            try {
              // one call so the client binary is known too; then a warm-up load so the measured
              // run sees the sidecar's steady state (a sidecar runs for days), not its JIT compiling
              ExampleApps.runClient(dir, server.address(), "-n", "1");
              Thread.sleep(1500);
              // 20,000 calls at 8 in flight, repeated until the JIT compiler threads took less than
              // a tenth of the sidecar's CPU in one repetition: the exporter's per-request code
              // (grpc-java, Netty: a few calls per 2,048-span request) reaches the JIT's thresholds
              // only after tens of requests, so one repetition left the measured run compiling for
              // twice the CPU of its spans' own work (2026-11-26: 15.9 of 23.8 µs per span at 16
              // callers; docs/benchmarks.md, "The benchmark's receiver and warm-up")
              warmups.computeIfAbsent(jar.getKey(), k -> new ArrayList<>()).add((double) warmUp(dir, server, gospan.pid()));
              // and the measured workload itself once: its own code paths (batch sizes, export
              // rates) are compiled before it is measured, not during
              ExampleApps.runClient(dir, server.address(), w.quietArgs());
              if (build.gospan()) {
                // what a cold sidecar under ~30,000 spans/s dropped (shed whole traces, mostly)
                warmupDropped.computeIfAbsent(jar.getKey(), k -> new ArrayList<>()).add(dropped(scrape()));
              }
              // with -Dgospan.bench.steady=S: the workload again and again for S s, the "steady load"
              // after which issue 37's targets count the JIT (the exporter's per-request code reaches
              // C2 only after minutes at 10 requests a second)
              steadyLoad(dir, server, w, gospan.pid());
              // the JIT compiles the warm-up's hot code for seconds after it (tens of seconds on a
              // loaded machine): wait until its compiler threads are idle, so the measured run is not
              // mostly compilation; then one malloc trim period (5 s) before the idle RSS
              jitSettle.computeIfAbsent(jar.getKey(), k -> new ArrayList<>()).add(waitForJit(gospan.pid()));
              jitSeconds.computeIfAbsent(jar.getKey(), k -> new ArrayList<>()).add(jitNs(gospan.pid()) / 1e9);
              Thread.sleep(6000);
              idleRss.computeIfAbsent(jar.getKey(), k -> new ArrayList<>()).add(rssKb(gospan.pid()));
              // idle: the traced programs wait (the server runs, no calls); % of one core
              long idle0 = cpuNs(gospan.pid());
              Thread.sleep(IDLE_MILLIS);
              idleCpu.computeIfAbsent(jar.getKey(), k -> new ArrayList<>())
                  .add((cpuNs(gospan.pid()) - idle0) / 1e6 / IDLE_MILLIS * 100);
              // with -Dgospan.bench.repeat=N: N measured runs back to back, each its own entry
              for (int r = 0; r < MEASURED_RUNS; r++) {
                with.computeIfAbsent(jar.getKey(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(w.name(), k -> new ArrayList<>())
                    .add(run(dir, server, w, gospan, build.gospan()));
              }
            } finally {
              gospan.destroy();
              if (!gospan.waitFor(20, TimeUnit.SECONDS)) {
                System.err.println("gospan pid " + gospan.pid() + " did not stop on SIGTERM within 20 s; killing it");
                gospan.destroyForcibly().waitFor();
              }
            }
          }
        }
      }
    }
    if (receiver != null) {
      System.out.printf("%nOTLP/gRPC receiver counted %d spans; %s%n", receiver.spans.sum(), receiver.sizes());
      receiver.close();
    }
    List<String> summary = new ArrayList<>();
    for (Map.Entry<String, Build> jar : builds.entrySet()) {
      Build build = jar.getValue();
      if (build.gospan()) {
        System.out.printf("%n%s (%s): %d rounds, %d cores, gospan JVM %s %s, exporter %s, %d s of steady load before the measured runs,"
            + " %d measured run(s) per start; median of rounds and runs%n%n",
            jar.getKey(), build.jar(), rounds, Runtime.getRuntime().availableProcessors(), build.env(), String.join(" ", build.jvm()), exporter,
            STEADY_SECONDS, MEASURED_RUNS);
      } else {
        System.out.printf("%n%s (%s, a peer; \"sidecar\" below is this tracer, its events and drops are not read): %d rounds, %d cores,"
            + " environment %s; median of rounds and runs%n%n", jar.getKey(), build.peer(), rounds, Runtime.getRuntime().availableProcessors(),
            peerEnv(dir, "(the receiver)"));
      }
      System.out.println("| workload | calls/s without → empty uprobes → with (with / without; with / empty) | p50 µs without → with | p99 µs without → with | target CPU µs/call without → empty uprobes → with (with / without; with / empty) | sidecar CPU µs/span (without JIT compiler threads) | sidecar RSS MiB | events/s | events lost | spans dropped | spans not received |");
      System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
      for (Workload w : WORKLOADS) {
        List<Run> a = without.get(w.name());
        List<Run> f = empty.get(w.name());
        List<Run> b = with.get(jar.getKey()).get(w.name());
        double floorCalls = f != null ? med(f, Run::callsPerS) : Double.NaN;
        double floorCpu = f != null ? med(f, Run::cpuUsPerCall) : Double.NaN;
        System.out.printf("| %s | %.0f → %.0f → %.0f (%.2f; %.2f) | %.0f → %.0f | %.0f → %.0f | %.1f → %.1f → %.1f (%.2f; %.2f) | %.1f (%.1f) | %.0f | %.0f | %d | %d | %s |%n",
            w.name(),
            med(a, Run::callsPerS), floorCalls, med(b, Run::callsPerS), med(b, Run::callsPerS) / med(a, Run::callsPerS),
            med(b, Run::callsPerS) / floorCalls,
            med(a, Run::p50Us), med(b, Run::p50Us), med(a, Run::p99Us), med(b, Run::p99Us),
            med(a, Run::cpuUsPerCall), floorCpu, med(b, Run::cpuUsPerCall), med(b, Run::cpuUsPerCall) / med(a, Run::cpuUsPerCall),
            med(b, Run::cpuUsPerCall) / floorCpu, med(b, Run::sidecarCpuUsPerSpan), med(b, Run::sidecarCpuWithoutJitUsPerSpan), med(b, r -> r.sidecarRssKb() / 1024.0), med(b, Run::eventsPerS),
            b.stream().mapToLong(Run::eventsLost).sum(), b.stream().mapToLong(Run::spansDropped).sum(),
            received(build, b, receiver != null));
        summary.add(String.format("SUMMARY %s | %s | %.0f spans/s | sidecar CPU %.1f µs/span, %.1f without JIT | RSS %.0f MiB (max %.0f) | "
                + "lost: %d events, %d spans dropped, %s not received | throughput %.2f × without gospan, %.2f × empty uprobes | the OTLP receiver %.1f µs/span",
            jar.getKey(), w.name(), 2 * med(b, Run::callsPerS), med(b, Run::sidecarCpuUsPerSpan), med(b, Run::sidecarCpuWithoutJitUsPerSpan),
            med(b, r -> r.sidecarRssKb() / 1024.0), b.stream().mapToDouble(r -> r.sidecarRssKb() / 1024.0).max().orElse(0),
            b.stream().mapToLong(Run::eventsLost).sum(), b.stream().mapToLong(Run::spansDropped).sum(),
            received(build, b, receiver != null),
            med(b, Run::callsPerS) / med(a, Run::callsPerS), med(b, Run::callsPerS) / floorCalls, med(b, Run::receiverCpuUsPerSpan)));
      }
      List<Long> idle = new ArrayList<>(idleRss.get(jar.getKey()));
      idle.sort(Long::compare);
      System.out.printf("%nsidecar RSS at idle after the warm-up (2 processes traced): median %.1f MiB (%.1f–%.1f, %d starts)%n",
          idle.get(idle.size() / 2) / 1024.0, idle.get(0) / 1024.0, idle.get(idle.size() - 1) / 1024.0, idle.size());
      summary.add(String.format("SUMMARY %s | idle | RSS %.1f MiB median (%.1f–%.1f)", jar.getKey(),
          idle.get(idle.size() / 2) / 1024.0, idle.get(0) / 1024.0, idle.get(idle.size() - 1) / 1024.0));
      List<Double> idleCpus = new ArrayList<>(idleCpu.get(jar.getKey()));
      idleCpus.sort(Double::compare);
      System.out.printf("sidecar CPU at idle (%d s after each warm-up): median %.2f %% of a core (%.2f–%.2f)%n", IDLE_MILLIS / 1000,
          idleCpus.get(idleCpus.size() / 2), idleCpus.get(0), idleCpus.get(idleCpus.size() - 1));
      summary.add(String.format("SUMMARY %s | idle | CPU %.2f %% of a core median (%.2f–%.2f; target ≤ 0.5)", jar.getKey(),
          idleCpus.get(idleCpus.size() / 2), idleCpus.get(0), idleCpus.get(idleCpus.size() - 1)));
      if (warmupDropped.containsKey(jar.getKey())) {
        List<Double> d = new ArrayList<>(warmupDropped.get(jar.getKey()));
        d.sort(Double::compare);
        System.out.printf("spans dropped during the warm-up (a cold sidecar; 20,000 calls at 8 in flight, repeated, then the workload once): median %.0f (%.0f–%.0f, %d starts)%n",
            d.get(d.size() / 2), d.get(0), d.get(d.size() - 1), d.size());
        summary.add(String.format("SUMMARY %s | warm-up | spans dropped %.0f median (%.0f–%.0f)", jar.getKey(),
            d.get(d.size() / 2), d.get(0), d.get(d.size() - 1)));
      }
      List<Double> settle = new ArrayList<>(jitSettle.get(jar.getKey()));
      settle.sort(Double::compare);
      System.out.printf("JIT compiler threads busy after the warm-up: median %.1f s (%.1f–%.1f)%n",
          settle.get(settle.size() / 2), settle.get(0), settle.get(settle.size() - 1));
      List<Double> reps = new ArrayList<>(warmups.get(jar.getKey()));
      reps.sort(Double::compare);
      List<Double> jit = new ArrayList<>(jitSeconds.get(jar.getKey()));
      jit.sort(Double::compare);
      System.out.printf("warm-up: 20,000 calls repeated %.0f times (median; %.0f–%.0f) until the JIT took < 10 %% of the sidecar's CPU;"
              + " JIT compiler threads' CPU from the start to the measured run: median %.1f s (%.1f–%.1f)%n",
          reps.get(reps.size() / 2), reps.get(0), reps.get(reps.size() - 1), jit.get(jit.size() / 2), jit.get(0), jit.get(jit.size() - 1));
      summary.add(String.format("SUMMARY %s | warm-up | JIT CPU until the measured run %.1f s median, over %.0f repetitions of 20,000 calls",
          jar.getKey(), jit.get(jit.size() / 2), reps.get(reps.size() / 2)));
      System.out.println("sidecar CPU µs/span (without JIT) and RSS MiB under load per measured run (rounds × -Dgospan.bench.repeat), by workload; the OTLP receiver's CPU µs/span (this JVM's):");
      for (Workload w : WORKLOADS) {
        List<Run> b = with.get(jar.getKey()).get(w.name());
        System.out.printf("  %s: CPU %s; RSS %s; receiver %s%n", w.name(),
            b.stream().map(r -> String.format("%.1f (%.1f)", r.sidecarCpuUsPerSpan(), r.sidecarCpuWithoutJitUsPerSpan())).toList(),
            b.stream().map(r -> String.format("%.1f", r.sidecarRssKb() / 1024.0)).toList(),
            b.stream().map(r -> String.format("%.1f", r.receiverCpuUsPerSpan())).toList());
      }
      System.out.println("sidecar CPU µs/span by thread (median of the measured runs; threads above 0.2 µs/span):");
      for (Workload w : WORKLOADS) {
        List<Run> b = with.get(jar.getKey()).get(w.name());
        Map<String, List<Double>> byThread = new TreeMap<>();
        for (Run r : b) {
          r.threadCpuUsPerCall().forEach((t, us) -> byThread.computeIfAbsent(t, k -> new ArrayList<>()).add(us * r.calls() / r.spansExpected()));
        }
        StringBuilder line = new StringBuilder();
        byThread.entrySet().stream()
            .map(e -> {
              List<Double> v = new ArrayList<>(e.getValue());
              while (v.size() < b.size()) {
                v.add(0.0); // a thread absent from a round used no CPU there
              }
              v.sort(Double::compare);
              return Map.entry(e.getKey(), v.get(v.size() / 2));
            })
            .filter(e -> e.getValue() >= 0.2)
            .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
            .forEach(e -> line.append(String.format(" %s %.1f;", e.getKey(), e.getValue())));
        System.out.printf("  %s:%s%n", w.name(), line);
      }
    }
    System.out.println();
    System.out.println("SUMMARY targets (issue 16): sidecar CPU ≤ 5 µs/span at 1,000 and 20,000 spans/s; no event or span lost at 16 callers;"
        + " RSS ≤ 96 MiB under load; idle CPU ≤ 0.5 % of a core; throughput at 16 callers ≥ 0.9 × empty uprobes, at 1 caller ≥ 0.98 × without gospan");
    summary.forEach(System.out::println);
  }

  /** The OTLP receiver's span count, when it runs. */
  static java.util.concurrent.atomic.LongAdder receiverSpans;

  /**
   * One measured run of {@code w}; {@code gospan}: the tracer's process (null: none), {@code
   * telemetry}: whether it is gospan, whose {@code /metrics} give events read and lost and spans
   * dropped (a peer's are reported as 0).
   */
  static Run run(Path dir, ExampleApps.Server server, Workload w, Process gospan, boolean telemetry) throws Exception {
    // one scrape before and one after the run, outside the sidecar's CPU readings: a scrape costs
    // it ~10–20 ms of CPU (the Prometheus exposition, mostly interpreted), up to 0.8 µs a span over
    // the 24,000 spans of the 1,000 spans/s run
    String scrape0 = gospan == null || !telemetry ? "" : scrape();
    long serverCpu0 = cpuNs(server.pid());
    long gospanCpu0 = gospan == null ? 0 : cpuNs(gospan.pid());
    Map<String, Long> threads0 = gospan == null ? Map.of() : threadCpuNs(gospan.pid());
    double events0 = sum(scrape0, "gospan_events_read_total", null);
    long received0 = receiverSpans != null ? receiverSpans.sum() : 0;
    long receiverCpu0 = cpuNs(ProcessHandle.current().pid());
    double lost0 = lost(scrape0);
    double dropped0 = dropped(scrape0);
    long t0 = System.nanoTime();
    JsonNode r = ExampleApps.runClient(dir, server.address(), w.quietArgs());
    long wall = System.nanoTime() - t0;
    long calls = r.path("calls").asLong();
    double clientCpuNs = (r.path("cpu_user_ms").asDouble() + r.path("cpu_sys_ms").asDouble()) * 1e6;
    double serverCpuNs = cpuNs(server.pid()) - serverCpu0;
    double sidecarCpu = 0;
    long rss = 0;
    double eventsPerS = 0;
    long lostEvents = 0;
    long droppedSpans = 0;
    Map<String, Double> byThread = new TreeMap<>();
    long received = -1;
    double receiverCpu = Double.NaN;
    if (gospan != null) {
      Thread.sleep(300); // let the sidecar drain the ring buffer
      if (receiverSpans != null) {
        // the batch processor exports within its schedule delay (5 s by default); link waits hold
        // some spans 2 s
        long deadline = System.nanoTime() + 12_000_000_000L;
        while (receiverSpans.sum() - received0 < 2 * calls && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
        received = receiverSpans.sum() - received0;
        receiverCpu = (cpuNs(ProcessHandle.current().pid()) - receiverCpu0) / 1000.0 / Math.max(1, received);
      }
      sidecarCpu = (cpuNs(gospan.pid()) - gospanCpu0) / 1000.0 / calls;
      threadCpuNs(gospan.pid()).forEach((t, ns) -> {
        double us = (ns - threads0.getOrDefault(t, 0L)) / 1000.0 / calls;
        if (us > 0) {
          byThread.put(t, us);
        }
      });
      rss = rssKb(gospan.pid());
      String scrape1 = telemetry ? scrape() : "";
      eventsPerS = (sum(scrape1, "gospan_events_read_total", null) - events0) / (wall / 1e9);
      lostEvents = (long) (lost(scrape1) - lost0);
      droppedSpans = (long) (dropped(scrape1) - dropped0);
    }
    return new Run(r.path("calls_per_s").asDouble(), r.path("p50_us").asDouble(), r.path("p99_us").asDouble(),
        (clientCpuNs + serverCpuNs) / 1000.0 / calls, calls, sidecarCpu, rss, eventsPerS, lostEvents, droppedSpans, byThread,
        received, receiverCpu);
  }

  static Process startGospan(Build build, Path config) throws Exception {
    return startGospan(build, config, TELEMETRY_PORT);
  }

  /**
   * Starts {@code build}'s {@code gospan run --config config}, whose telemetry endpoint is on
   * {@code telemetryPort}; returns once it traces a process ({@code gospan_processes_traced} ≥ 1).
   *
   * @throws IllegalStateException when it exits first (with its log's first line) or does not trace within 30 s
   */
  static Process startGospan(Build build, Path config, int telemetryPort) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(build.jvm());
    cmd.addAll(List.of("-jar", build.jar().toString(), "run", "--config", config.toString()));
    Path log = Files.createTempFile("gospan-bench", ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().putAll(build.env());
    Process p = pb.start();
    System.err.println("gospan pid " + p.pid() + " logs to " + log);
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        // e.g. a JVM option this JDK refuses: say so now, with the log's first line, not after 30 s
        List<String> lines = Files.readAllLines(log);
        throw new IllegalStateException("gospan exited with status " + p.exitValue() + " before tracing"
            + (lines.isEmpty() ? "" : ": " + lines.get(0)) + " (its log: " + log + ")");
      }
      try {
        if (sum(scrape(telemetryPort), "gospan_processes_traced", null) >= 1) {
          return p;
        }
      } catch (IOException notYet) {
        // starting
      }
      Thread.sleep(200);
    }
    p.destroyForcibly();
    throw new IllegalStateException("gospan did not start tracing within 30 s");
  }

  /**
   * Starts a peer ({@link Build#peer}) with {@link #peerEnv}; returns once it exported a span of a
   * call to {@code server} (one call a second, at most 90 s).
   *
   * @throws IllegalStateException without the OTLP receiver, or when no span came
   */
  static Process startPeer(Build build, Path dir, ExampleApps.Server server, CountingOtlpReceiver receiver) throws Exception {
    if (receiver == null) {
      throw new IllegalStateException("a peer is measured with -Dgospan.bench.exporter=otlp (the default) only");
    }
    Path log = Files.createTempFile("gospan-bench-peer", ".log");
    ProcessBuilder pb = new ProcessBuilder(build.peer().toString()).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().putAll(peerEnv(dir, receiver.endpoint()));
    Process p = pb.start();
    System.err.println("peer " + build.peer() + " pid " + p.pid() + " logs to " + log);
    long spans0 = receiver.spans.sum();
    long deadline = System.nanoTime() + 90_000_000_000L;
    while (System.nanoTime() < deadline && p.isAlive()) {
      ExampleApps.runClient(dir, server.address(), "-n", "1");
      Thread.sleep(1000);
      if (receiver.spans.sum() > spans0) {
        return p;
      }
    }
    p.destroyForcibly();
    throw new IllegalStateException(build.peer() + (p.isAlive() ? " exported no span within 90 s" : " exited") + "; its log: " + log);
  }

  /** utime + stime of all threads, ns (USER_HZ ticks). */
  static long cpuNs(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_NS;
  }

  /**
   * utime + stime per thread, ns, summed by thread name ({@code /proc/<pid>/task/<tid>/comm}, the
   * JVM's thread name cut to 15 bytes, digits dropped so a pool's threads add up).
   */
  static Map<String, Long> threadCpuNs(long pid) throws IOException {
    Map<String, Long> byName = new TreeMap<>();
    try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          String name = Files.readString(task.resolve("comm")).strip().replaceAll("[0-9]+", "#");
          String stat = Files.readString(task.resolve("stat"));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          byName.merge(name, (Long.parseLong(f[11]) + Long.parseLong(f[12])) * TICK_NS, Long::sum);
        } catch (IOException gone) {
          // the thread ended meanwhile
        }
      }
    }
    return byName;
  }

  /**
   * Seconds of steady load before each measured run ({@code -Dgospan.bench.steady=S}, default 0):
   * the measured workload itself, run again and again until S s have passed, after the warm-up.
   */
  static final int STEADY_SECONDS = Integer.getInteger("gospan.bench.steady", 0);

  /**
   * Measured runs per sidecar start ({@code -Dgospan.bench.repeat=N}, default 1), back to back after
   * the steady load; each is one entry of the per-round figures and of their median. After 2
   * minutes the JIT still compiles in bursts that one 5-s run catches or misses: the median of
   * several runs of one start is the settled figure, their range what one run may show.
   */
  static final int MEASURED_RUNS = Math.max(1, Integer.getInteger("gospan.bench.repeat", 1));

  /**
   * Runs {@code w} against {@code server} again and again for {@link #STEADY_SECONDS} (nothing when
   * 0); prints the JIT compiler threads' share of the tracer {@code pid}'s CPU in each 30 s of it
   * to stderr, to show when the compilation settles.
   */
  static void steadyLoad(Path dir, ExampleApps.Server server, Workload w, long pid) throws Exception {
    if (STEADY_SECONDS <= 0) {
      return;
    }
    long start = System.nanoTime();
    long windowStart = start;
    long cpu0 = cpuNs(pid);
    long jit0 = jitNs(pid);
    StringBuilder shares = new StringBuilder();
    while (System.nanoTime() - start < STEADY_SECONDS * 1_000_000_000L) {
      ExampleApps.runClient(dir, server.address(), w.quietArgs());
      if (System.nanoTime() - windowStart >= 30_000_000_000L) {
        long cpu = cpuNs(pid);
        long jit = jitNs(pid);
        shares.append(String.format(" %.0f s: %.1f %% of %.2f s;", (System.nanoTime() - start) / 1e9,
            100.0 * (jit - jit0) / Math.max(1, cpu - cpu0), (cpu - cpu0) / 1e9));
        windowStart = System.nanoTime();
        cpu0 = cpu;
        jit0 = jit;
      }
    }
    System.err.println("steady load (" + w.name() + ", " + STEADY_SECONDS + " s): the JIT's share of the sidecar's CPU, by 30 s:" + shares);
  }

  /** At most this many warm-up repetitions ({@link #warmUp}). */
  static final int MAX_WARMUPS = 8;

  /**
   * Runs 20,000 calls at 8 in flight against {@code server}, again and again until the JIT
   * compiler threads of the tracer {@code pid} took less than a tenth of its CPU during one
   * repetition, at most {@link #MAX_WARMUPS} times; returns the repetitions run. A tracer without
   * JIT threads (a Go peer) stops after one.
   */
  static int warmUp(Path dir, ExampleApps.Server server, long pid) throws Exception {
    return warmUp(pid, () -> {
      ExampleApps.runClient(dir, server.address(), "-n", "20000", "-concurrency", "8", "-quiet");
      Thread.sleep(300); // the ring buffer's reader and a batch's export
    });
  }

  /** One repetition of a warm-up's load. */
  interface Repetition {
    void run() throws Exception;
  }

  /**
   * Runs {@code once} again and again until the JIT compiler threads of {@code pid} took less than a
   * tenth of its CPU during one repetition, at most {@link #MAX_WARMUPS} times; returns the
   * repetitions run.
   */
  static int warmUp(long pid, Repetition once) throws Exception {
    for (int n = 1; ; n++) {
      long cpu0 = cpuNs(pid);
      long jit0 = jitNs(pid);
      once.run();
      long cpu = cpuNs(pid) - cpu0;
      long jit = jitNs(pid) - jit0;
      if (jit < 0.1 * cpu || n >= MAX_WARMUPS) {
        return n;
      }
    }
  }

  /**
   * Waits until the JIT compiler threads of {@code pid} used no CPU for 2 s (at most 60 s);
   * returns the seconds waited.
   */
  static double waitForJit(long pid) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    long last = jitNs(pid);
    long quietSince = System.nanoTime();
    while (System.nanoTime() - t0 < 60_000_000_000L && System.nanoTime() - quietSince < 2_000_000_000L) {
      Thread.sleep(250);
      long now = jitNs(pid);
      if (now != last) {
        last = now;
        quietSince = System.nanoTime();
      }
    }
    return (System.nanoTime() - t0) / 1e9;
  }

  static long jitNs(long pid) throws IOException {
    return threadCpuNs(pid).entrySet().stream()
        .filter(e -> e.getKey().contains("CompilerThre")).mapToLong(Map.Entry::getValue).sum();
  }

  static long rssKb(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return 0;
  }

  /**
   * Spans dropped on a full export queue: the SDK's {@code otel.sdk.processor.span.processed}
   * with {@code error.type=queue_full}, or the metric of builds before the SDK's batch processor;
   * and the whole traces shed while the sidecar was behind ({@code gospan.spans.dropped{reason=shed}}).
   */
  static double dropped(String body) {
    return sum(body, "otel_sdk_processor_span_processed_span_total", "queue_full")
        + sum(body, "gospan_spans_dropped_total", "queue_full")
        + sum(body, "gospan_spans_dropped_total", "\"shed\"");
  }

  static double lost(String body) {
    return sum(body, "gospan_events_lost_total", "ring_buffer_full");
  }

  /** gospan's {@code /metrics} (Prometheus text). */
  static String scrape() throws IOException, InterruptedException {
    return scrape(TELEMETRY_PORT);
  }

  /** The {@code /metrics} of the gospan whose telemetry endpoint is on {@code port}. */
  static String scrape(int port) throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** Sum of a Prometheus metric's samples in {@code body}, optionally those whose labels contain {@code filter}. */
  static double sum(String body, String name, String filter) {
    double s = 0;
    for (String line : body.split("\n")) {
      if ((line.startsWith(name + " ") || line.startsWith(name + "{")) && (filter == null || line.contains(filter))) {
        s += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return s;
  }

  interface D {
    double of(Run r);
  }

  static double med(List<Run> runs, D d) {
    List<Double> v = new ArrayList<>();
    runs.forEach(r -> v.add(d.of(r)));
    v.sort(Double::compare);
    return v.get(v.size() / 2);
  }
}
