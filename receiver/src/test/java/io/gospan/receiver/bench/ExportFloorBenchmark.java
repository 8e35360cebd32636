package io.gospan.receiver.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceId;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.sdk.common.InstrumentationLibraryInfo;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.File;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Benchmark (not a test): what the OpenTelemetry SDK's export path alone costs, the part of the
 * sidecar's CPU per span and RSS that gospan's own code cannot remove. A child JVM with the
 * recommended settings ({@link LoadBenchmark#JVM}, {@link LoadBenchmark#ENV}) and nothing of gospan
 * but its jar on the class path hands ready-made spans to the SDK's {@code BatchSpanProcessor}
 * (gospan's defaults: 2,048-span batches, a 32,768-span queue, a 5 s delay) and its OTLP/gRPC
 * exporter (grpc-java over Netty, plaintext, no compression) sending to {@link CountingOtlpReceiver}
 * in this JVM. The spans are shaped like gospan's for the example greeter: a client and a server
 * span per call, one trace each, 9–11 attributes shared per connection and side, a resource per
 * process. They are made on one "producer" thread in ticks (every 20 ms at 20,000 spans/s and
 * above, every 100 ms below, as gospan's ring buffer reader polls), whose CPU is reported apart:
 * the floor is everything else (the batch processor, grpc-java, Netty, GC, JIT).
 *
 * <p>Per rate: the same warm-up as {@link LoadBenchmark#warmUp} (40,000 spans at 20,000 spans/s,
 * repeated until the JIT compiler threads take < 10 % of the JVM's CPU, at most 8 times), then the
 * steady load at the measured rate for {@code -Dgospan.bench.steady} seconds (0 by default, as in {@link
 * LoadBenchmark#STEADY_SECONDS}), then the
 * measured run ({@code -Dgospan.bench.repeat} times back to back, as {@link LoadBenchmark#MEASURED_RUNS}:
 * 100,000 spans at 20,000 spans/s; 24,000 at 1,000 spans/s, as {@code LoadBenchmark}'s
 * workloads), its CPU from the first span until the receiver counted the last (10 ms ticks), by
 * thread; the RSS at its end; the idle CPU for 10 s. A fresh child per rate and round.
 *
 * <p>Senders ({@link Sender}): the OTLP exporter's ways of sending, each in its own child, alternating
 * within a round: OTLP/gRPC over grpc-java and Netty (gospan's), OTLP/HTTP (protobuf) over the JDK's
 * {@code HttpClient} (gospan's for {@code protocol: http/protobuf}), and OTLP/gRPC and OTLP/HTTP over
 * OkHttp, which gospan's jar leaves out: its jars come from {@code -Dgospan.bench.okhttp.cp}
 * (scripts/bench-export-floor.sh resolves them with scripts/okhttp-sender/pom.xml).
 *
 * <p>Run: {@code scripts/bench-export-floor.sh [rounds]}. System properties: {@code
 * -Dgospan.bench.jar} the jar whose SDK and grpc-java are measured (default {@code
 * receiver/target/gospan.jar}); {@code -Dgospan.bench.rates=20000,1000} the rates (spans/s) to run;
 * {@code -Dgospan.bench.senders=grpc-java,http-jdk,grpc-okhttp,http-okhttp} the senders (default
 * {@code grpc-java});
 * {@code -Dgospan.bench.jvm="…"} more options for the child JVM (with {@code
 * -XX:NativeMemoryTracking=summary}, {@code jcmd}'s summary is printed after each measured run; the
 * measured run's span of the child's uptime goes to stderr, to find it in a JIT log).
 */
public final class ExportFloorBenchmark {
  private ExportFloorBenchmark() {}

  record Rate(String name, int spansPerS, int spans) {}

  static final List<Rate> ALL_RATES = List.of(
      new Rate("20,000 spans/s", 20_000, 100_000),
      new Rate("1,000 spans/s", 1_000, 24_000));

  /** {@link #ALL_RATES}, or with {@code -Dgospan.bench.rates=20000,1000} those of these spans/s. */
  static final List<Rate> RATES = ALL_RATES.stream()
      .filter(r -> System.getProperty("gospan.bench.rates") == null
          || List.of(System.getProperty("gospan.bench.rates").split(",")).contains(Integer.toString(r.spansPerS())))
      .toList();

  /**
   * How the child's OTLP exporter sends: the protocol, and the SDK's sender for it (the {@code
   * io.opentelemetry.sdk.common.export.GrpcSenderProvider} / {@code HttpSenderProvider} the SDK
   * picks by that system property when several are on the class path; opentelemetry-exporter-common
   * 1.63, SenderUtil).
   *
   * @param okhttp needs the OkHttp sender's jars ({@code -Dgospan.bench.okhttp.cp})
   */
  enum Sender {
    /** OTLP/gRPC over grpc-java and Netty, on a channel the child builds, as gospan does ({@code GrpcChannels}). */
    GRPC_JAVA("grpc-java", false, null),
    /** OTLP/HTTP, protobuf bodies, over the JDK's {@code java.net.http.HttpClient}. */
    HTTP_JDK("http-jdk", false, "io.opentelemetry.exporter.sender.jdk.internal.JdkHttpSenderProvider"),
    /** OTLP/gRPC over OkHttp. */
    GRPC_OKHTTP("grpc-okhttp", true, "io.opentelemetry.exporter.sender.okhttp.internal.OkHttpGrpcSenderProvider"),
    /** OTLP/HTTP, protobuf bodies, over OkHttp. */
    HTTP_OKHTTP("http-okhttp", true, "io.opentelemetry.exporter.sender.okhttp.internal.OkHttpHttpSenderProvider");

    final String label;
    final boolean okhttp;
    final String provider;

    Sender(String label, boolean okhttp, String provider) {
      this.label = label;
      this.okhttp = okhttp;
      this.provider = provider;
    }

    boolean http() {
      return label.startsWith("http");
    }

    /** The child's {@code -D} that picks this sender's provider, empty for grpc-java (the channel picks it). */
    List<String> jvmOptions() {
      if (provider == null) {
        return List.of();
      }
      String key = http() ? "io.opentelemetry.sdk.common.export.HttpSenderProvider" : "io.opentelemetry.sdk.common.export.GrpcSenderProvider";
      return List.of("-D" + key + "=" + provider);
    }

    static Sender of(String label) {
      for (Sender s : values()) {
        if (s.label.equals(label)) {
          return s;
        }
      }
      throw new IllegalArgumentException("gospan.bench.senders: no sender " + label + " (grpc-java, http-jdk, grpc-okhttp, http-okhttp)");
    }
  }

  /** {@code -Dgospan.bench.senders}, default grpc-java. */
  static final List<Sender> SENDERS = java.util.Arrays.stream(System.getProperty("gospan.bench.senders", "grpc-java").split(","))
      .map(String::strip).map(Sender::of).toList();

  /**
   * One measured run, µs of CPU per span: all the child's threads; without its JIT compiler threads;
   * without the producer (the floor, with its JIT); without both.
   */
  record Result(double cpuUsPerSpan, double withoutJitUsPerSpan, double floorUsPerSpan, double floorWithoutJitUsPerSpan,
                Map<String, Double> threadUsPerSpan, long rssKb, double idlePercent, long lost) {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2;
    Path jar = Path.of(System.getProperty("gospan.bench.jar", "receiver/target/gospan.jar")).toAbsolutePath();
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("no gospan jar at " + jar + " (build it: mvn -DskipTests package)");
    }
    String testClasses = Path.of(ExportFloorBenchmark.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    String okhttp = System.getProperty("gospan.bench.okhttp.cp", "");
    if (SENDERS.stream().anyMatch(s -> s.okhttp) && okhttp.isBlank()) {
      throw new IllegalStateException("the OkHttp senders need -Dgospan.bench.okhttp.cp (scripts/bench-export-floor.sh sets it)");
    }
    Map<String, List<Result>> results = new TreeMap<>();
    try (CountingOtlpReceiver receiver = new CountingOtlpReceiver()) {
      for (int round = 1; round <= rounds; round++) {
        for (Rate rate : RATES) {
          for (Sender sender : SENDERS) {
            String classPath = testClasses + (sender.okhttp ? File.pathSeparator + okhttp : "") + File.pathSeparator + jar;
            for (Result r : measure(receiver, classPath, sender, rate)) {
              results.computeIfAbsent(row(rate, sender), k -> new ArrayList<>()).add(r);
              System.out.printf(Locale.ROOT,
                  "round %d, %s, %s: %.1f µs/span (without the JIT %.1f; without the producer %.1f; without both %.1f), RSS %.1f MiB, idle %.2f %%, lost %d; by thread %s%n",
                  round, rate.name(), sender.label, r.cpuUsPerSpan(), r.withoutJitUsPerSpan(), r.floorUsPerSpan(), r.floorWithoutJitUsPerSpan(),
                  r.rssKb() / 1024.0, r.idlePercent(), r.lost(), format(r.threadUsPerSpan()));
            }
          }
        }
      }
    }
    System.out.println();
    System.out.printf(Locale.ROOT, "%d s of steady load at the measured rate before the measured runs (-Dgospan.bench.steady),"
        + " %d measured run(s) per child (-Dgospan.bench.repeat)%n", LoadBenchmark.STEADY_SECONDS, LoadBenchmark.MEASURED_RUNS);
    System.out.println("| rate, sender | µs/span, all threads | without the JIT | without the producer (the floor) | the floor without the JIT | RSS MiB under load | idle % of a core | spans lost |");
    System.out.println("|---|---|---|---|---|---|---|---|");
    for (Rate rate : RATES) {
      for (Sender sender : SENDERS) {
        List<Result> rs = results.get(row(rate, sender));
        System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s |%n", row(rate, sender),
            each(rs, Result::cpuUsPerSpan, "%.1f"), each(rs, Result::withoutJitUsPerSpan, "%.1f"), each(rs, Result::floorUsPerSpan, "%.1f"),
            each(rs, Result::floorWithoutJitUsPerSpan, "%.1f"), each(rs, r -> r.rssKb() / 1024.0, "%.1f"),
            each(rs, Result::idlePercent, "%.2f"), each(rs, r -> (double) r.lost(), "%.0f"));
      }
    }
  }

  static String row(Rate rate, Sender sender) {
    return rate.name() + ", " + sender.label;
  }

  /** Each result's figure in order; from 3 results on, their median after them. */
  static String each(List<Result> rs, java.util.function.ToDoubleFunction<Result> f, String fmt) {
    List<Double> values = rs.stream().map(f::applyAsDouble).toList();
    String all = String.join(", ", values.stream().map(v -> String.format(Locale.ROOT, fmt, v)).toList());
    return values.size() < 3 ? all : all + "; median " + String.format(Locale.ROOT, fmt, ProbeCostBenchmark.median(values));
  }

  static String format(Map<String, Double> m) {
    StringBuilder b = new StringBuilder();
    m.forEach((k, v) -> {
      if (v >= 0.05) {
        b.append(String.format(Locale.ROOT, "%s %.1f; ", k, v));
      }
    });
    return b.toString();
  }

  /**
   * Starts the child JVM ({@link Child}) with the recommended settings plus {@code extraJvm} and
   * {@code classPath}, exporting to {@code receiver} with {@code sender}.
   */
  static Process startChild(CountingOtlpReceiver receiver, String classPath, Sender sender, String extraJvm) throws java.io.IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(LoadBenchmark.JVM);
    cmd.addAll(sender.jvmOptions());
    if (!extraJvm.isBlank()) {
      cmd.addAll(List.of(extraJvm.trim().split("\\s+")));
    }
    cmd.addAll(List.of("-cp", classPath, Child.class.getName(), sender.http() ? receiver.httpEndpoint() : receiver.endpoint(),
        sender.label));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().putAll(LoadBenchmark.ENV);
    return pb.start();
  }

  /**
   * One child JVM: warm-up, the steady load, the measured runs at {@code rate} ({@link
   * LoadBenchmark#MEASURED_RUNS}, back to back), then 10 s idle; one result per measured run, each
   * with the idle figure of the child.
   */
  static List<Result> measure(CountingOtlpReceiver receiver, String classPath, Sender sender, Rate rate) throws Exception {
    String extra = System.getProperty("gospan.bench.jvm", "");
    Process p = startChild(receiver, classPath, sender, extra);
    try (Writer in = p.outputWriter(StandardCharsets.UTF_8);
         BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      long pid = p.pid();
      // the warm-up: 40,000 spans at 20,000 spans/s, until the JIT takes < 10 % of the CPU
      LoadBenchmark.warmUp(pid, () -> send(receiver, in, out, 20_000, 40_000));
      // with -Dgospan.bench.steady=S, as LoadBenchmark's: S s at the measured rate first
      if (LoadBenchmark.STEADY_SECONDS > 0) {
        send(receiver, in, out, rate.spansPerS(), rate.spansPerS() * LoadBenchmark.STEADY_SECONDS);
      }
      long started = p.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(System.currentTimeMillis());
      record Measured(long cpuNs, Map<String, Long> t0, Map<String, Long> t1, long rssKb, long lost) {}
      List<Measured> runs = new ArrayList<>();
      for (int i = 0; i < LoadBenchmark.MEASURED_RUNS; i++) {
        Map<String, Long> t0 = LoadBenchmark.threadCpuNs(pid);
        long cpu0 = LoadBenchmark.cpuNs(pid);
        long from = System.currentTimeMillis() - started;
        long lost = send(receiver, in, out, rate.spansPerS(), rate.spans());
        // to find the measured run in the child's logs (e.g. -Xlog:jit+compilation=debug:file=…, uptime stamps)
        System.err.printf(Locale.ROOT, "the measured run: %.1f–%.1f s after the child's start%n", from / 1e3,
            (System.currentTimeMillis() - started) / 1e3);
        long cpu = LoadBenchmark.cpuNs(pid) - cpu0;
        runs.add(new Measured(cpu, t0, LoadBenchmark.threadCpuNs(pid), LoadBenchmark.rssKb(pid), lost));
      }
      if (extra.contains("NativeMemoryTracking")) {
        new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(pid),
            "VM.native_memory", "summary", "scale=KB").inheritIO().start().waitFor();
      }
      Thread.sleep(2_000);
      long idle0 = LoadBenchmark.cpuNs(pid);
      Thread.sleep(LoadBenchmark.IDLE_MILLIS);
      double idlePercent = 100.0 * (LoadBenchmark.cpuNs(pid) - idle0) / (LoadBenchmark.IDLE_MILLIS * 1e6);
      in.write("exit\n");
      in.flush();
      List<Result> results = new ArrayList<>();
      for (Measured m : runs) {
        Map<String, Double> byThread = new TreeMap<>();
        m.t1().forEach((k, v) -> byThread.put(k, (v - m.t0().getOrDefault(k, 0L)) / 1e3 / rate.spans()));
        double all = m.cpuNs() / 1e3 / rate.spans();
        double jit = byThread.entrySet().stream().filter(e -> e.getKey().contains("CompilerThre")).mapToDouble(Map.Entry::getValue).sum();
        double producer = byThread.getOrDefault("floor-producer", 0.0);
        results.add(new Result(all, all - jit, all - producer, all - jit - producer, byThread, m.rssKb(), idlePercent, m.lost()));
      }
      return results;
    } finally {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /**
   * Asks the child for {@code spans} spans at {@code spansPerS}; returns once the receiver counted
   * them all, or 12 s after the child made the last (then the shortfall, the spans lost).
   */
  static long send(CountingOtlpReceiver receiver, Writer in, BufferedReader out, int spansPerS, int spans) throws Exception {
    long before = receiver.spans.sum();
    in.write(spansPerS + " " + spans + "\n");
    in.flush();
    String line = out.readLine();
    if (line == null || !line.equals("made " + spans)) {
      throw new IllegalStateException("the child answered " + line);
    }
    long deadline = System.nanoTime() + 12_000_000_000L;
    while (receiver.spans.sum() - before < spans && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    return Math.max(0, spans - (receiver.spans.sum() - before));
  }

  /**
   * The child JVM: {@code <OTLP endpoint> <sender>} ({@link Sender}'s label); reads lines {@code "<spans/s> <spans>"} from stdin,
   * makes that many spans at that rate and answers {@code "made <spans>"}; {@code exit} ends it.
   */
  public static final class Child {
    private Child() {}

    static final AttributeKey<String> RPC_SYSTEM_NAME = AttributeKey.stringKey("rpc.system.name");
    static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
    static final AttributeKey<String> RPC_RESPONSE_STATUS_CODE = AttributeKey.stringKey("rpc.response.status_code");
    static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
    static final AttributeKey<String> CLIENT_ADDRESS = AttributeKey.stringKey("client.address");
    static final AttributeKey<Long> CLIENT_PORT = AttributeKey.longKey("client.port");
    static final AttributeKey<String> NETWORK_PEER_ADDRESS = AttributeKey.stringKey("network.peer.address");
    static final AttributeKey<Long> NETWORK_PEER_PORT = AttributeKey.longKey("network.peer.port");
    static final AttributeKey<String> NETWORK_TRANSPORT = AttributeKey.stringKey("network.transport");
    static final AttributeKey<String> NETWORK_TYPE = AttributeKey.stringKey("network.type");

    static final InstrumentationScopeInfo SCOPE = InstrumentationScopeInfo.builder("io.gospan").setVersion("0.1.0").build();

    public static void main(String[] args) throws Exception {
      URI endpoint = URI.create(args[0]);
      Sender sender = Sender.of(args.length > 1 ? args[1] : Sender.GRPC_JAVA.label);
      ManagedChannel channel = null;
      SpanExporter exporter;
      if (sender == Sender.GRPC_JAVA) {
        channel = NettyChannelBuilder.forAddress(endpoint.getHost(), endpoint.getPort()).usePlaintext().build();
        exporter = OtlpGrpcSpanExporter.builder().setChannel(channel).setTimeout(Duration.ofSeconds(10)).build();
      } else if (sender.http()) {
        exporter = OtlpHttpSpanExporter.builder().setEndpoint(endpoint + "/v1/traces").setTimeout(Duration.ofSeconds(10)).build();
      } else {
        exporter = OtlpGrpcSpanExporter.builder().setEndpoint(endpoint.toString()).setTimeout(Duration.ofSeconds(10)).build();
      }
      BatchSpanProcessor processor = BatchSpanProcessor.builder(exporter)
          .setMaxQueueSize(32_768)
          .setMaxExportBatchSize(2_048)
          .setScheduleDelay(Duration.ofSeconds(5))
          .setExportUnsampledSpans(true)
          .build();
      Resource client = resource("greeter-client", 4101);
      Resource server = resource("greeter-server", 4102);
      // 4 connections, as LoadBenchmark's workloads' -conns 4: the attributes per connection and side
      Attributes[] clientAttributes = new Attributes[4];
      Attributes[] serverAttributes = new Attributes[4];
      for (int c = 0; c < 4; c++) {
        long port = 40_000 + c;
        clientAttributes[c] = Attributes.builder().put(RPC_SYSTEM_NAME, "grpc").put(RPC_METHOD, "greeter.Greeter/SayHello")
            .put(RPC_RESPONSE_STATUS_CODE, "OK").put(SERVER_ADDRESS, "127.0.0.1").put(SERVER_PORT, 50051L)
            .put(NETWORK_PEER_ADDRESS, "127.0.0.1").put(NETWORK_PEER_PORT, 50051L).put(NETWORK_TRANSPORT, "tcp")
            .put(NETWORK_TYPE, "ipv4").build();
        serverAttributes[c] = Attributes.builder().put(RPC_SYSTEM_NAME, "grpc").put(RPC_METHOD, "greeter.Greeter/SayHello")
            .put(RPC_RESPONSE_STATUS_CODE, "OK").put(SERVER_ADDRESS, "127.0.0.1").put(SERVER_PORT, 50051L)
            .put(NETWORK_PEER_ADDRESS, "127.0.0.1").put(NETWORK_PEER_PORT, port).put(NETWORK_TRANSPORT, "tcp")
            .put(NETWORK_TYPE, "ipv4").put(CLIENT_ADDRESS, "127.0.0.1").put(CLIENT_PORT, port).build();
      }
      SplittableRandom random = new SplittableRandom(1);
      PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      Thread.currentThread().setName("floor-producer");
      String line;
      long call = 0;
      while ((line = in.readLine()) != null && !line.equals("exit")) {
        String[] f = line.trim().split(" ");
        int perS = Integer.parseInt(f[0]);
        int spans = Integer.parseInt(f[1]);
        long tickNs = perS >= 20_000 ? 20_000_000L : 100_000_000L;
        int perTick = (int) Math.max(2, perS * tickNs / 1_000_000_000L);
        long next = System.nanoTime();
        for (int made = 0; made < spans; ) {
          for (int i = 0; i < perTick && made < spans; i += 2, made += 2, call++) {
            int conn = (int) (call & 3);
            long now = System.currentTimeMillis() * 1_000_000L;
            String traceId = TraceId.fromLongs(random.nextLong(), random.nextLong());
            SpanContext c = SpanContext.create(traceId, SpanId.fromLong(random.nextLong()), TraceFlags.getSampled(), TraceState.getDefault());
            SpanContext s = SpanContext.create(traceId, SpanId.fromLong(random.nextLong()), TraceFlags.getSampled(), TraceState.getDefault());
            processor.onEnd(new Finished(new Span("greeter.Greeter/SayHello", SpanKind.CLIENT, c, SpanContext.getInvalid(),
                now - 400_000, now, clientAttributes[conn], client)));
            processor.onEnd(new Finished(new Span("greeter.Greeter/SayHello", SpanKind.SERVER, s, c,
                now - 300_000, now - 50_000, serverAttributes[conn], server)));
          }
          next += tickNs;
          LockSupport.parkNanos(next - System.nanoTime());
        }
        out.println("made " + spans);
      }
      processor.shutdown().join(10, TimeUnit.SECONDS);
      if (channel != null) {
        channel.shutdownNow();
      }
    }

    static Resource resource(String service, long pid) {
      return Resource.create(Attributes.builder()
          .put("service.name", service).put("process.pid", pid).put("process.executable.name", service)
          .put("process.executable.path", "/work/examples/bin/" + service).put("process.runtime.name", "go")
          .put("process.runtime.version", "go1.24.1").put("host.name", "bench").build());
    }
  }

  /** A finished span, as gospan's {@code AssembledSpan}. */
  record Span(String name, SpanKind kind, SpanContext spanContext, SpanContext parentSpanContext,
              long startEpochNanos, long endEpochNanos, Attributes attributes, Resource resource) implements SpanData {
    @Override public String getName() { return name; }
    @Override public SpanKind getKind() { return kind; }
    @Override public SpanContext getSpanContext() { return spanContext; }
    @Override public SpanContext getParentSpanContext() { return parentSpanContext; }
    @Override public StatusData getStatus() { return StatusData.unset(); }
    @Override public long getStartEpochNanos() { return startEpochNanos; }
    @Override public Attributes getAttributes() { return attributes; }
    @Override public List<EventData> getEvents() { return List.of(); }
    @Override public List<LinkData> getLinks() { return List.of(); }
    @Override public long getEndEpochNanos() { return endEpochNanos; }
    @Override public boolean hasEnded() { return true; }
    @Override public int getTotalRecordedEvents() { return 0; }
    @Override public int getTotalRecordedLinks() { return 0; }
    @Override public int getTotalAttributeCount() { return attributes.size(); }
    @Override @Deprecated public InstrumentationLibraryInfo getInstrumentationLibraryInfo() {
      return InstrumentationLibraryInfo.create(Child.SCOPE.getName(), Child.SCOPE.getVersion());
    }
    @Override public InstrumentationScopeInfo getInstrumentationScopeInfo() { return Child.SCOPE; }
    @Override public Resource getResource() { return resource; }
  }

  /** The span as the {@link ReadableSpan} the batch processor takes, as gospan's {@code FinishedReadableSpan}. */
  record Finished(Span span) implements ReadableSpan {
    @Override public SpanContext getSpanContext() { return span.spanContext(); }
    @Override public SpanContext getParentSpanContext() { return span.parentSpanContext(); }
    @Override public String getName() { return span.name(); }
    @Override public SpanData toSpanData() { return span; }
    @Override @Deprecated public InstrumentationLibraryInfo getInstrumentationLibraryInfo() { return span.getInstrumentationLibraryInfo(); }
    @Override public InstrumentationScopeInfo getInstrumentationScopeInfo() { return Child.SCOPE; }
    @Override public boolean hasEnded() { return true; }
    @Override public long getLatencyNanos() { return span.endEpochNanos() - span.startEpochNanos(); }
    @Override public SpanKind getKind() { return span.kind(); }
    @Override public <T> T getAttribute(AttributeKey<T> key) { return span.attributes().get(key); }
    @Override public Attributes getAttributes() { return span.attributes(); }
  }
}
