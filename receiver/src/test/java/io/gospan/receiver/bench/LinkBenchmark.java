package io.gospan.receiver.bench;

import io.gospan.receiver.export.OtlpGrpcReceiver;
import io.gospan.receiver.export.OtlpGrpcReceiver.Arrived;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.LinkNetwork;
import io.gospan.receiver.testing.NamespaceBridge;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What linking across gospans costs (scripts/bench-link.sh): the network namespaces of
 * LinkAcrossNamespacesIT (client → relay → server, one tier and one {@code gospan run} per
 * namespace, OTLP to one receiver), rounds alternating {@code link.enabled: true} and {@code
 * false}, each with fresh gospans: a warm-up, then a measured window at a steady call rate. Per
 * round: the three gospan JVMs' CPU time per span exported in the window (utime + stime of their
 * threads, /proc/PID/task/TID/stat, without the JIT compiler threads, which a fresh JVM keeps busy
 * for a while and which would count the link code's compilation; and with them), the questions
 * sent per server span (gospan.link.lookups.sent, as the gospans export it, over the server spans
 * started after the first reading's time), and the time from each server span's end to its
 * arrival at the receiver (p50, p99), with
 * link on and off (off: a server span whose client another gospan traced waits
 * streams.link_wait, then is a root). The relay makes no background calls.
 *
 * <p>Usage: {@code LinkBenchmark [rounds-per-mode] [calls-per-second] [window-seconds]} (defaults 3, 100, 10).
 */
public final class LinkBenchmark {
  static final long TICK_NS = 1_000_000_000L / 100; // USER_HZ

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    int rate = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    int window = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    Path dir = ExampleApps.build();
    System.out.printf("link benchmark: %d rounds per mode, %d calls/s, %d s window, examples %s%n", rounds, rate, window, dir);
    List<String> rows = new ArrayList<>();
    try (LinkNetwork net = LinkNetwork.create(); OtlpGrpcReceiver receiver = OtlpGrpcReceiver.start(0)) {
      InetSocketAddress collector = new InetSocketAddress("127.0.0.1",
          Integer.parseInt(receiver.endpoint().substring(receiver.endpoint().lastIndexOf(':') + 1)));
      try (NamespaceBridge bridge = NamespaceBridge.start(net.bridge, new InetSocketAddress(LinkNetwork.BRIDGE_IP, 4317), () -> collector)) {
        for (int r = 0; r < 2 * rounds; r++) {
          boolean link = r % 2 == 0;
          rows.add(round(net, receiver, dir, link, rate, window, r / 2 + 1));
          System.out.println(rows.get(rows.size() - 1));
        }
      }
    }
    System.out.println();
    System.out.println("mode  round  spans  cpu_us_per_span  (with JIT threads)  lookups_per_server_span  end_to_export_ms_p50  p99");
    rows.forEach(System.out::println);
  }

  static String round(LinkNetwork net, OtlpGrpcReceiver receiver, Path dir, boolean link, int rate, int window, int round)
      throws Exception {
    List<Process> gospans = new ArrayList<>();
    List<List<String>> logs = new ArrayList<>();
    String[][] tiers = {{net.client, "greeter-client"}, {net.relay, "greeter-relay"}, {net.server, "greeter-server"}};
    for (String[] t : tiers) {
      Path config = Files.createTempFile("gospan-link-bench", ".yaml");
      Files.writeString(config, "discovery:\n  instrument:\n    - exe_path: \"" + dir.resolve(t[1]) + "\"\n"
          + "exporter:\n  type: otlp\n  otlp:\n    endpoint: http://" + LinkNetwork.BRIDGE_IP + ":4317\n"
          + "  batch:\n    schedule_delay: 200ms\nmetrics:\n  enabled: true\n  export_interval: 1s\n"
          + "telemetry:\n  http:\n    enabled: false\nlink:\n  enabled: " + link + "\n");
      List<String> cmd = new ArrayList<>(LinkNetwork.in(t[0], Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xms32m", "-Xmx128m", "-XX:+UseSerialGC"));
      // e.g. -Dgospan.bench.jvm="-XX:StartFlightRecording=filename=/tmp/g-%p.jfr" to profile the gospans
      String extra = System.getProperty("gospan.bench.jvm", "").strip();
      if (!extra.isEmpty()) {
        cmd.addAll(List.of(extra.split("\\s+")));
      }
      cmd.addAll(List.of("-jar", ExampleApps.repoRoot().resolve("receiver/target/gospan.jar").toString(), "run", "--config",
          config.toString()));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      List<String> log = Collections.synchronizedList(new ArrayList<>());
      Thread reader = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line; (line = in.readLine()) != null; ) {
            log.add(line);
          }
        } catch (Exception ignored) {
          // exited
        }
      });
      reader.setDaemon(true);
      reader.start();
      gospans.add(p);
      logs.add(log);
    }
    try {
      for (List<String> log : logs) {
        await(() -> contains(log, "waiting for Go gRPC processes"));
      }
      try (ExampleApps.Server server = ExampleApps.startListening(LinkNetwork.in(net.server), dir.resolve("greeter-server"),
              LinkNetwork.SERVER_IP + ":50051", Map.of());
          ExampleApps.Server relay = ExampleApps.startListening(LinkNetwork.in(net.relay), dir.resolve("greeter-relay"),
              LinkNetwork.RELAY_IP + ":50052", Map.of(), "-upstream", LinkNetwork.SERVER_IP + ":50051", "-background", "0")) {
        await(() -> contains(logs.get(2), "tracing pid " + server.pid() + " ") && contains(logs.get(1), "tracing pid " + relay.pid() + " "));
        Process client = new ProcessBuilder(LinkNetwork.in(net.client, dir.resolve("greeter-client").toString(), "-addr",
            LinkNetwork.RELAY_IP + ":50052", "-quiet", "-n", "0", "-rate", Integer.toString(rate), "-rpc", "unary"))
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
          await(() -> contains(logs.get(0), "tracing pid " + client.pid() + " "));
          Thread.sleep(10_000); // warm-up (JIT), and the held spans of link off reach a steady state
          long[][] cpu0 = cpu(gospans);
          long[] sent0 = lookups(receiver, gospans);
          long t0 = epochNanos();
          Thread.sleep(window * 1000L);
          long t1 = epochNanos();
          long[][] cpu1 = cpu(gospans);
          client.destroy();
          client.waitFor(10, TimeUnit.SECONDS);
          Thread.sleep(5_000); // the last spans arrive, the counters are exported
          long[] sent1 = lookups(receiver, gospans);
          long cpuNs = 0;
          long cpuAllNs = 0;
          for (int i = 0; i < cpu0.length; i++) {
            cpuNs += (cpu1[i][0] - cpu0[i][0]) * TICK_NS;
            cpuAllNs += (cpu1[i][1] - cpu0[i][1]) * TICK_NS;
          }
          long spans = 0;
          List<Long> waits = new ArrayList<>();
          long serverSpansAsked = 0; // started after the first counter reading's time
          for (Arrived a : receiver.spansArrived()) {
            Span s = a.span().span();
            String pid = a.span().resourceAttr("process.pid");
            if (a.arrivedEpochNanos() >= t0 && a.arrivedEpochNanos() < t1) {
              spans++;
            }
            boolean serverSpan = s.getKind() == Span.SpanKind.SPAN_KIND_SERVER
                && (String.valueOf(relay.pid()).equals(pid) || String.valueOf(server.pid()).equals(pid));
            if (serverSpan && s.getStartTimeUnixNano() >= t0 && s.getStartTimeUnixNano() < t1) {
              waits.add((a.arrivedEpochNanos() - s.getEndTimeUnixNano()) / 1_000_000);
            }
            if (serverSpan && s.getStartTimeUnixNano() >= sent0[1] && s.getStartTimeUnixNano() < sent1[1]) {
              serverSpansAsked++;
            }
          }
          long lookups = sent1[0] - sent0[0];
          Collections.sort(waits);
          return String.format("%-5s %5d  %5d  %15.1f  %16.1f  %23.2f  %20d  %d", link ? "on" : "off", round, spans,
              spans == 0 ? 0.0 : cpuNs / 1000.0 / spans, spans == 0 ? 0.0 : cpuAllNs / 1000.0 / spans,
              serverSpansAsked == 0 ? 0.0 : (double) lookups / serverSpansAsked,
              waits.isEmpty() ? -1 : waits.get(waits.size() / 2), waits.isEmpty() ? -1 : waits.get((int) (0.99 * (waits.size() - 1))));
        } finally {
          client.destroy();
          client.waitFor(10, TimeUnit.SECONDS);
        }
      }
    } finally {
      for (Process p : gospans) {
        p.destroy();
        p.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  /** Per process: {utime + stime of its threads but the JIT compiler threads, of all its threads} (ticks). */
  static long[][] cpu(List<Process> ps) throws Exception {
    long[][] out = new long[ps.size()][2];
    for (int i = 0; i < ps.size(); i++) {
      try (var tasks = Files.list(Path.of("/proc", Long.toString(ps.get(i).pid()), "task"))) {
        for (Path task : (Iterable<Path>) tasks::iterator) {
          String stat;
          try {
            stat = Files.readString(task.resolve("stat"));
          } catch (java.io.IOException e) {
            continue; // the thread ended
          }
          String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
          out[i][1] += ticks;
          if (!comm.contains("CompilerThre")) {
            out[i][0] += ticks;
          }
        }
      }
    }
    return out;
  }

  /**
   * {gospan.link.lookups.sent over the gospans as they exported it last (by the gospan JVM's
   * process.pid), the latest point's time (Unix ns)}.
   */
  static long[] lookups(OtlpGrpcReceiver receiver, List<Process> gospans) {
    Map<String, Long> out = new HashMap<>();
    long time = 0;
    for (OtlpGrpcReceiver.ReceivedMetric m : receiver.metrics()) {
      if (!m.metric().getName().equals("gospan.link.lookups.sent")) {
        continue;
      }
      long pid = -1;
      for (KeyValue kv : m.resource().getAttributesList()) {
        if (kv.getKey().equals("process.pid")) {
          pid = kv.getValue().getIntValue();
        }
      }
      for (Process g : gospans) {
        if (g.pid() == pid) {
          for (NumberDataPoint p : m.metric().getSum().getDataPointsList()) {
            out.merge(Long.toString(pid), p.getAsInt(), Math::max);
            time = Math.max(time, p.getTimeUnixNano());
          }
        }
      }
    }
    return new long[] {out.values().stream().mapToLong(Long::longValue).sum(), time == 0 ? epochNanos() : time};
  }

  static boolean contains(List<String> log, String s) {
    synchronized (log) {
      return log.stream().anyMatch(l -> l.contains(s));
    }
  }

  interface Check {
    boolean ok();
  }

  static void await(Check c) throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!c.ok()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out");
      }
      Thread.sleep(50);
    }
  }

  static long epochNanos() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }
}
