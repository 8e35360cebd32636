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
 * round: the three gospan JVMs' CPU time (utime + stime of /proc/PID/stat) per span exported in
 * the window, the questions sent per server span (gospan.link.lookups.sent, as the gospans export
 * it), and the time from each server span's end to its arrival at the receiver (p50, p99), with
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
    System.out.println("mode  round  spans  cpu_us_per_span  lookups_per_server_span  end_to_export_ms_p50  p99");
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
      Process p = new ProcessBuilder(LinkNetwork.in(t[0], Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xms32m", "-Xmx128m", "-XX:+UseSerialGC", "-jar", ExampleApps.repoRoot().resolve("receiver/target/gospan.jar").toString(),
          "run", "--config", config.toString())).redirectErrorStream(true).start();
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
          Thread.sleep(5_000); // warm-up (JIT), and the held spans of link off reach a steady state
          long[] cpu0 = cpu(gospans);
          Map<String, Long> sent0 = lookups(receiver, gospans);
          long t0 = epochNanos();
          Thread.sleep(window * 1000L);
          long t1 = epochNanos();
          long[] cpu1 = cpu(gospans);
          Thread.sleep(4_000); // the window's last spans arrive, the counters are exported
          Map<String, Long> sent1 = lookups(receiver, gospans);
          long cpuNs = 0;
          for (int i = 0; i < cpu0.length; i++) {
            cpuNs += (cpu1[i] - cpu0[i]) * TICK_NS;
          }
          long spans = 0;
          List<Long> waits = new ArrayList<>();
          long serverSpansStarted = 0;
          for (Arrived a : receiver.spansArrived()) {
            Span s = a.span().span();
            String pid = a.span().resourceAttr("process.pid");
            if (a.arrivedEpochNanos() >= t0 && a.arrivedEpochNanos() < t1) {
              spans++;
            }
            boolean serverSpan = s.getKind() == Span.SpanKind.SPAN_KIND_SERVER
                && (String.valueOf(relay.pid()).equals(pid) || String.valueOf(server.pid()).equals(pid));
            if (serverSpan && s.getStartTimeUnixNano() >= t0 && s.getStartTimeUnixNano() < t1) {
              serverSpansStarted++;
              waits.add((a.arrivedEpochNanos() - s.getEndTimeUnixNano()) / 1_000_000);
            }
          }
          long lookups = sent1.values().stream().mapToLong(Long::longValue).sum() - sent0.values().stream().mapToLong(Long::longValue).sum();
          Collections.sort(waits);
          return String.format("%-5s %5d  %5d  %15.1f  %23.2f  %20d  %d", link ? "on" : "off", round, spans,
              spans == 0 ? 0.0 : cpuNs / 1000.0 / spans, serverSpansStarted == 0 ? 0.0 : (double) lookups / serverSpansStarted,
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

  /** utime + stime (ticks) of each process. */
  static long[] cpu(List<Process> ps) throws Exception {
    long[] out = new long[ps.size()];
    for (int i = 0; i < ps.size(); i++) {
      String stat = Files.readString(Path.of("/proc", Long.toString(ps.get(i).pid()), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      out[i] = Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
    return out;
  }

  /** gospan.link.lookups.sent as each gospan exported it last (by the gospan JVM's process.pid). */
  static Map<String, Long> lookups(OtlpGrpcReceiver receiver, List<Process> gospans) {
    Map<String, Long> out = new HashMap<>();
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
          }
        }
      }
    }
    return out;
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
