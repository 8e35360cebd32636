package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.SidecarProcess;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.TraceServiceGrpc;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Overload with real processes: the example greeter client calls the example server at full speed
 * from {@value #DEFAULT_CALLERS} callers (unary calls, one connection), both traced by the gospan
 * jar started as the README recommends (its JVM flags), exporting OTLP/gRPC to a collector in this
 * JVM that keeps up. The sidecar cannot keep up on this machine (2 cores shared with the traced
 * programs): it must stay within its memory bound, count every loss, log the counts its metrics
 * show, and drop whole traces rather than halves of them.
 *
 * <p>{@code -Dgospan.overload.seconds} (default 20 in CI; docs/reliability.md has the 60 s run),
 * {@code -Dgospan.overload.callers} (16), {@code -Dgospan.overload.nmt=true} prints the sidecar's
 * native memory tracking summary at the peak of the load.
 */
class OverloadIT {
  static final int DEFAULT_CALLERS = 16;
  static final int SECONDS = Integer.getInteger("gospan.overload.seconds", 20);
  static final int CALLERS = Integer.getInteger("gospan.overload.callers", DEFAULT_CALLERS);
  static final boolean NMT = Boolean.getBoolean("gospan.overload.nmt");
  /**
   * The README's bound on the sidecar's RSS under overload with its recommended JVM settings
   * (docs/running.md; docs/reliability.md has what it is made of).
   */
  static final long RSS_BOUND_MIB = 224;
  /** The README's recommended JVM settings (docs/running.md, "JVM settings"; RecommendedJvmSettingsTest keeps them equal). */
  static final List<String> JVM_FLAGS = io.gospan.receiver.bench.LoadBenchmark.JVM;

  /**
   * An OTLP/gRPC collector that counts what it gets: spans, and per trace id its client and server
   * spans (a trace of this workload is one client span and its server span).
   */
  static final class TraceCollector implements AutoCloseable {
    final LongAdder spans = new LongAdder();
    /** Low 64 bits of the trace id -> (client spans) | (server spans << 16). */
    final Map<Long, Integer> traces = new HashMap<>();
    private final Server server;

    TraceCollector() throws IOException {
      server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
          .addService(new TraceServiceGrpc.TraceServiceImplBase() {
            @Override
            public void export(ExportTraceServiceRequest request, StreamObserver<ExportTraceServiceResponse> response) {
              synchronized (traces) {
                for (ResourceSpans rs : request.getResourceSpansList()) {
                  for (ScopeSpans ss : rs.getScopeSpansList()) {
                    for (Span s : ss.getSpansList()) {
                      spans.increment();
                      long id = ByteBuffer.wrap(s.getTraceId().toByteArray()).getLong(8);
                      int one = s.getKind() == Span.SpanKind.SPAN_KIND_CLIENT ? 1 : 1 << 16;
                      traces.merge(id, one, Integer::sum);
                    }
                  }
                }
              }
              response.onNext(ExportTraceServiceResponse.getDefaultInstance());
              response.onCompleted();
            }
          })
          .build()
          .start();
    }

    String endpoint() {
      return "http://127.0.0.1:" + server.getPort();
    }

    /** {complete traces (1 client + 1 server span), client-only, server-only, other}. */
    long[] completeness() {
      long[] out = new long[4];
      synchronized (traces) {
        for (int v : traces.values()) {
          int client = v & 0xffff;
          int srv = v >>> 16;
          out[client == 1 && srv == 1 ? 0 : client >= 1 && srv == 0 ? 1 : client == 0 && srv >= 1 ? 2 : 3]++;
        }
      }
      return out;
    }

    /** Forgets the traces seen so far (their completeness); {@link #spans} keeps counting. */
    void forgetTraces() {
      synchronized (traces) {
        traces.clear();
      }
    }

    @Override
    public void close() throws InterruptedException {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static long rssMiB(long pid) {
    try {
      for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (l.startsWith("VmRSS:")) {
          return Long.parseLong(l.replaceAll("[^0-9]", "")) / 1024;
        }
      }
    } catch (IOException e) {
      return -1;
    }
    return -1;
  }

  /**
   * /proc/PID/status's RSS split (anonymous, file-backed, shared memory) and the ten mappings with the
   * most resident memory (/proc/PID/smaps).
   */
  static String memory(long pid) {
    StringBuilder b = new StringBuilder();
    try {
      for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (l.startsWith("VmRSS") || l.startsWith("RssAnon") || l.startsWith("RssFile") || l.startsWith("RssShmem")) {
          b.append(l.replaceAll("\\s+", " ")).append("; ");
        }
      }
      List<String[]> maps = new ArrayList<>();
      String current = null;
      for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/smaps"))) {
        if (l.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
          String[] f = l.split("\\s+", 6);
          current = f.length > 5 ? f[5] : "[anon]";
        } else if (l.startsWith("Rss:")) {
          maps.add(new String[] {current, l.replaceAll("[^0-9]", "")});
        }
      }
      Map<String, Long> byName = new HashMap<>();
      for (String[] m : maps) {
        byName.merge(m[0], Long.parseLong(m[1]), Long::sum);
      }
      byName.entrySet().stream().sorted((x, y) -> Long.compare(y.getValue(), x.getValue())).limit(10)
          .forEach(e -> b.append("\n  ").append(e.getValue() / 1024).append(" MiB ").append(e.getKey()));
    } catch (IOException e) {
      b.append(e);
    }
    return b.toString();
  }

  /** Prometheus text: the sum of a counter's samples, by the value of one label (or "" for all). */
  static Map<String, Double> samples(String text, String metric, String label) {
    Map<String, Double> out = new TreeMap<>();
    Pattern line = Pattern.compile("^" + Pattern.quote(metric) + "(\\{[^}]*\\})? ([0-9.eE+-]+)$");
    Pattern lab = Pattern.compile(Pattern.quote(label) + "=\"([^\"]*)\"");
    for (String l : text.split("\n")) {
      Matcher m = line.matcher(l);
      if (m.matches()) {
        String key = "";
        if (!label.isEmpty() && m.group(1) != null) {
          Matcher lm = lab.matcher(m.group(1));
          key = lm.find() ? lm.group(1) : "";
        }
        out.merge(key, Double.parseDouble(m.group(2)), Double::sum);
      }
    }
    return out;
  }

  static long total(String text, String metric) {
    return Math.round(samples(text, metric, "").values().stream().mapToDouble(Double::doubleValue).sum());
  }

  static long total(String text, String metric, String label, String value) {
    return Math.round(samples(text, metric, label).getOrDefault(value, 0.0));
  }

  /** Sum of the first number after {@code prefix} on every log line that contains it. */
  static long logged(String log, String prefix) {
    long n = 0;
    Pattern p = Pattern.compile(Pattern.quote(prefix) + "\\D*(\\d+)");
    for (String l : log.split("\n")) {
      Matcher m = p.matcher(l);
      if (m.find()) {
        n += Long.parseLong(m.group(1));
      }
    }
    return n;
  }

  static String scrape(int port) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    return r.body();
  }

  @Test
  void fullSpeedFromManyCallersStaysWithinItsMemoryCountsEveryLossAndDropsWholeTraces() throws Exception {
    Path dir = ExampleApps.build();
    Path jar = SidecarProcess.jar();
    int telemetry = freePort();
    Path config = Files.createTempFile("gospan-overload", ".yaml");
    Path log = Files.createTempFile("gospan-overload", ".log");
    try (TraceCollector collector = new TraceCollector()) {
      Files.writeString(config, """
          exporter:
            otlp: {endpoint: "%s"}
          metrics: {enabled: false}
          telemetry: {http: {address: "127.0.0.1:%d"}}
          discovery:
            instrument:
              - exe_path: "%s/*"
          """.formatted(collector.endpoint(), telemetry, dir));
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(JVM_FLAGS);
      if (NMT) {
        cmd.add("-XX:NativeMemoryTracking=summary");
      }
      cmd.addAll(List.of("-jar", jar.toString(), "run", "--config", config.toString()));
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().put("MALLOC_ARENA_MAX", "2"); // the README's recommendation
      Process gospan = pb.start();
      try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.readString(log).contains("tracing pid " + server.pid() + " ")) {
          assertThat(gospan.isAlive()).as("gospan runs; log:\n" + Files.readString(log)).isTrue();
          assertThat(System.nanoTime()).as("the server is traced; log:\n" + Files.readString(log)).isLessThan(deadline);
          Thread.sleep(100);
        }
        // The overload client must be traced from its first call: a call made before its binary's
        // probes are attached has no client span (its server span becomes a root after
        // streams.link_wait), a partial trace no loss explains. So a warm-up client calls until
        // gospan has attached the client binary (its probes then linger after it exits), and the
        // warm-up's traces (some partial, for that reason) are forgotten once they have arrived.
        Process warmUp = new ProcessBuilder(dir.resolve("greeter-client").toString(), "-addr", server.address(),
            "-quiet", "-n", "0", "-concurrency", "1", "-rpc", "unary")
            .redirectError(ProcessBuilder.Redirect.DISCARD).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long warmUpDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try {
          while (!Files.readString(log).contains("tracing pid " + warmUp.pid() + " ")) {
            assertThat(warmUp.isAlive()).as("the warm-up client runs").isTrue();
            assertThat(System.nanoTime()).as("the warm-up client is traced; log:\n" + Files.readString(log))
                .isLessThan(warmUpDeadline);
            Thread.sleep(50);
          }
        } finally {
          warmUp.destroy();
          assertThat(warmUp.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        // Arrived: nothing more for 5 s (link_wait 2 s, then the processor's 1 s schedule).
        for (long n = -1, i = 0; i < 60 && collector.spans.sum() != n; i++) {
          n = collector.spans.sum();
          Thread.sleep(5000);
        }
        collector.forgetTraces();
        long idleRss = rssMiB(gospan.pid());
        String idleMemory = memory(gospan.pid());
        if (NMT) {
          ExampleApps.run(List.of("jcmd", String.valueOf(gospan.pid()), "VM.native_memory", "baseline"), 60);
        }
        Path clientOut = Files.createTempFile("gospan-overload-client", ".json");
        Process client = new ProcessBuilder(dir.resolve("greeter-client").toString(), "-addr", server.address(),
            "-quiet", "-n", "0", "-concurrency", String.valueOf(CALLERS), "-rpc", "unary")
            .redirectError(ProcessBuilder.Redirect.DISCARD).redirectOutput(clientOut.toFile()).start();
        long peak = 0;
        String nmt = null;
        for (int s = 1; s <= SECONDS; s++) {
          Thread.sleep(1000);
          long r = rssMiB(gospan.pid());
          if (r > peak) {
            peak = r;
            if (NMT && s >= SECONDS / 2) {
              nmt = memory(gospan.pid()) + "\n" + ExampleApps.run(
                  List.of("jcmd", String.valueOf(gospan.pid()), "VM.native_memory", "summary.diff"), 60);
            }
          }
          if (s % 5 == 0) {
            System.out.printf("overload %d s: gospan RSS %d MiB, %d spans received%n", s, r, collector.spans.sum());
          }
        }
        client.destroy(); // SIGTERM: no new calls, the summary line
        String clientTraced = Files.readString(log).lines().filter(l -> l.contains("tracing pid " + client.pid() + " "))
            .findFirst().orElse("(not traced)");
        assertThat(clientTraced).as("the overload client is traced from its first call (its binary's probes attached)")
            .contains("its binary is traced already");
        assertThat(client.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = Files.readString(clientOut, StandardCharsets.UTF_8).strip();
        Files.deleteIfExists(clientOut);
        JsonNode summary = new ObjectMapper().readTree(out.substring(out.lastIndexOf('\n') + 1));
        long calls = summary.get("calls").asLong();
        // Drained: nothing more arrives for 5 s (link waits, the processor's schedule, retries).
        long last = -1;
        for (int i = 0; i < 60 && collector.spans.sum() != last; i++) {
          last = collector.spans.sum();
          Thread.sleep(5000);
        }
        // One more periodic report of the losses (every 10 s), then the metrics: the log up to here
        // must add up to them (gospan's stop then ends the streams in flight and reports again).
        Thread.sleep(11_000);
        String metrics = scrape(telemetry);
        long received = collector.spans.sum(); // before gospan stops: it then ends in-flight streams, incomplete
        long[] c = collector.completeness();
        Files.writeString(Path.of(log + ".metrics"), metrics);
        long afterRss = rssMiB(gospan.pid());
        gospan.destroy();
        assertThat(gospan.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String whole = Files.readString(log);
        String text = whole.substring(0, Math.max(0, whole.indexOf("stopping: flushing spans")));
        if (nmt != null) {
          System.out.println("memory at idle:\n" + idleMemory + "\nat the peak (native memory tracking: growth since idle):\n" + nmt);
        }

        long lostInKernel = total(metrics, "gospan_events_lost_total");
        long ringBufferFull = total(metrics, "gospan_events_lost_total", "reason", "ring_buffer_full");
        long eventsRead = total(metrics, "gospan_events_read_total");
        long unmatched = total(metrics, "gospan_events_unmatched_total");
        long incomplete = total(metrics, "gospan_spans_incomplete_total");
        long overflow = total(metrics, "gospan_streams_overflow_total");
        long linksOverflow = total(metrics, "gospan_links_overflow_total");
        long finished = total(metrics, "gospan_spans_finished_total");
        long shed = total(metrics, "gospan_spans_dropped_total", "reason", "shed");
        long queueFull = total(metrics, "gospan_spans_dropped_total", "reason", "queue_full");
        long tracesShed = total(metrics, "gospan_traces_shed_total");
        Map<String, Double> processed = samples(metrics, "otel_sdk_processor_span_processed_span_total", "error_type");
        long processorQueueFull = Math.round(processed.getOrDefault("queue_full", 0.0));
        long exported = Math.round(processed.getOrDefault("", 0.0));
        long exportFailed = Math.round(processed.values().stream().mapToDouble(Double::doubleValue).sum()) - exported
            - processorQueueFull;
        long exportQueueDropped = total(metrics, "gospan_export_queue_dropped_total");
        long partial = c[1] + c[2] + c[3];
        System.out.printf(
            "overload %d s, %d callers: %d calls (%.0f/s); gospan RSS idle %d MiB, peak %d MiB, after %d MiB (bound %d MiB);"
                + " spans: %d finished, %d received, %d shed (%d traces), %d queue_full, %d span processor queue_full,"
                + " %d export failed, %d export queue dropped; traces received: %d complete, %d partial (client only %d,"
                + " server only %d, other %d); events: %d read, %d lost in the kernel (%d ring buffer full), %d unmatched;"
                + " spans incomplete %d; streams overflow %d, links overflow %d%n",
            SECONDS, CALLERS, calls, calls / (double) SECONDS, idleRss, peak, afterRss, RSS_BOUND_MIB, finished, received,
            shed, tracesShed, queueFull, processorQueueFull, exportFailed, exportQueueDropped, c[0], partial, c[1], c[2],
            c[3], eventsRead, lostInKernel, ringBufferFull, unmatched, incomplete, overflow, linksOverflow);

        assertThat(peak).as("peak RSS under load (MiB)").isLessThanOrEqualTo(RSS_BOUND_MIB);
        assertThat(received).as("spans arrived").isPositive();
        // Every span assembled arrived or was counted where it was dropped.
        assertThat(received + shed + queueFull + processorQueueFull + exportFailed + exportQueueDropped)
            .as("spans received + counted drops = spans finished").isEqualTo(finished);
        // Whole traces: what the sidecar dropped on the way out it dropped by trace, and what is
        // partial is explained by events lost before span assembly (each breaks at most one trace).
        assertThat(processorQueueFull).as("the span processor's own queue never overflows").isZero();
        assertThat(queueFull).as("no admitted trace lost a span at the queue's bound").isZero();
        assertThat(partial).as("partial traces <= events lost in the kernel + unmatched + incomplete spans")
            .isLessThanOrEqualTo(lostInKernel + unmatched + incomplete);
        // The log says what the metrics say.
        assertThat(logged(text, "gospan.events.lost{reason=\"ring_buffer_full\"}")).as("ring buffer losses logged")
            .isEqualTo(ringBufferFull);
        assertThat(logged(text, "span processor queue: dropped")).as("span processor drops logged").isEqualTo(shed + queueFull);
        assertThat(logged(text, "export queue dropped")).as("export queue drops logged").isEqualTo(exportQueueDropped);
        assertThat(logged(text, "gospan.streams.overflow")).isEqualTo(overflow);
        assertThat(logged(text, "gospan.links.overflow")).isEqualTo(linksOverflow);
      }
    } finally {
      Files.deleteIfExists(config);
      System.out.println("gospan log: " + log);
    }
  }
}
