package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.export.OtlpGrpcReceiver;
import io.gospan.receiver.export.OtlpGrpcReceiver.ReceivedSpan;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.SidecarProcess;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * gospan as a pod's sidecar with {@code shareProcessNamespace: true}: the jar, the greeter server
 * and short-lived greeter clients in one PID namespace the test makes ({@code unshare --pid --fork
 * --mount-proc}, sharing this machine's network), a greeter client outside it calling the same
 * server, like another pod on the node running a binary of the same inode. The spans must carry
 * the process ids gospan's {@code /proc} shows (the namespace's own, not the node's), every client
 * run inside (each a new process, found through its exec notice) must have its client span, and the
 * outside client's calls must have none: its probe hits are counted ({@code
 * gospan.probe.hits.outside_namespace}) and nothing of them is sent.
 */
class PidNamespaceIT {

  /** Client runs inside the namespace once the client's binary is traced. */
  static final int INSIDE_RUNS = 5;
  /** Client runs outside it, from this JVM. */
  static final int OUTSIDE_RUNS = 3;

  @Test
  void spansCarryTheNamespacesProcessIdsAndOutsideProcessesAreNotTraced() throws Exception {
    Path dir = ExampleApps.build();
    Path jar = SidecarProcess.jar();
    Path work = Files.createTempDirectory("gospan-pidns");
    try (OtlpGrpcReceiver receiver = OtlpGrpcReceiver.start(0)) {
      Path config = work.resolve("gospan.yaml");
      Files.writeString(config, "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/greeter-*\"\n"
          + "exporter:\n  type: otlp\n  otlp:\n    endpoint: " + receiver.endpoint() + "\n"
          + "  batch:\n    schedule_delay: 200ms\n"
          + "metrics:\n  enabled: true\n  export_interval: 1s\ntelemetry:\n  http:\n    enabled: false\n");
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      // Inside the namespace: the server, gospan, then clients until the client's binary is traced
      // (a binary's first process may exit before discovery reads it), then INSIDE_RUNS clients;
      // "outside" hands over to this JVM until it writes a line; then gospan is stopped (flushing).
      String script = """
          set -u
          B=%1$s; W=%2$s
          "$B/greeter-server" -addr 127.0.0.1:0 > "$W/server.log" 2>&1 &
          S=$!; echo "server $S"
          "%3$s" -Xmx128m -jar "%4$s" run --config "%5$s" > "$W/gospan.log" 2>&1 &
          G=$!
          for i in $(seq 600); do
            grep -q "tracing pid $S " "$W/gospan.log" && grep -q 'listening on' "$W/server.log" && break
            kill -0 $G 2>/dev/null || break
            sleep 0.1
          done
          A=$(grep -o 'listening on [^ ]*' "$W/server.log" | head -n 1 | awk '{print $3}')
          echo "address $A"
          for i in $(seq 100); do
            "$B/greeter-client" -addr "$A" -n 1 -quiet > /dev/null 2>&1 & C=$!; echo "warm-up client $C"; wait $C
            grep -q 'tracing pid .*greeter-client' "$W/gospan.log" && break
            sleep 0.2
          done
          for i in $(seq %6$d); do
            "$B/greeter-client" -addr "$A" -n 1 -quiet > /dev/null 2>&1 & C=$!; echo "client $C"; wait $C
          done
          echo outside
          read -r done
          sleep 3
          kill -TERM $G; wait $G; echo "gospan exit $?"
          kill -TERM $S; wait $S
          """.formatted(dir, work, java, jar, config, INSIDE_RUNS);
      Process ns = new ProcessBuilder("unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", script)
          .redirectError(ProcessBuilder.Redirect.appendTo(work.resolve("unshare.err").toFile()))
          .start();
      long server = -1;
      String address = null;
      Set<Long> inside = new HashSet<>();
      List<Long> traced = new ArrayList<>();
      List<String> said = new ArrayList<>();
      try (BufferedReader out = new BufferedReader(new InputStreamReader(ns.getInputStream(), StandardCharsets.UTF_8));
          Writer in = new OutputStreamWriter(ns.getOutputStream(), StandardCharsets.UTF_8)) {
        for (String line; (line = out.readLine()) != null; ) {
          said.add(line);
          String[] w = line.split(" ");
          if (line.startsWith("server ")) {
            server = Long.parseLong(w[1]);
            inside.add(server);
          } else if (line.startsWith("address ")) {
            address = w.length > 1 ? w[1] : null;
          } else if (line.startsWith("warm-up client ")) {
            inside.add(Long.parseLong(w[2]));
          } else if (line.startsWith("client ")) {
            inside.add(Long.parseLong(w[1]));
            traced.add(Long.parseLong(w[1]));
          } else if (line.equals("outside")) {
            assertThat(address).as("the server's address; the namespace said:\n%s\ngospan log:\n%s", said, log(work)).isNotBlank();
            for (int i = 0; i < OUTSIDE_RUNS; i++) {
              ExampleApps.runClient(dir, address, "-n", "1");
            }
            in.write("done\n");
            in.flush();
          }
        }
      }
      assertThat(ns.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(said).as("gospan log:\n%s\nunshare: %s", log(work), Files.readString(work.resolve("unshare.err")))
          .contains("gospan exit 0");
      assertThat(traced).as("the namespace said:\n%s\ngospan log:\n%s", said, log(work)).hasSize(INSIDE_RUNS);
      long serverPid = server;
      assertThat(serverPid).as("the server's pid in the namespace").isPositive().isLessThan(1000);

      List<ReceivedSpan> spans = receiver.spans();
      Set<Long> pids = spans.stream().map(s -> Long.parseLong(s.resourceAttr("process.pid"))).collect(Collectors.toSet());
      assertThat(pids).as("every span's process.pid is one of the namespace's processes %s", inside).isSubsetOf(inside);
      Set<Long> clientPids = spans.stream()
          .filter(s -> s.span().getKind() == SpanKind.SPAN_KIND_CLIENT)
          .map(s -> Long.parseLong(s.resourceAttr("process.pid")))
          .collect(Collectors.toSet());
      assertThat(clientPids).as("each client run inside has its client span").containsAll(traced);
      long serverSpans = spans.stream()
          .filter(s -> s.span().getKind() == SpanKind.SPAN_KIND_SERVER && Long.parseLong(s.resourceAttr("process.pid")) == serverPid)
          .count();
      long clientSpans = spans.stream().filter(s -> s.span().getKind() == SpanKind.SPAN_KIND_CLIENT).count();
      assertThat(serverSpans).as("the server's spans: the calls from inside and from outside")
          .isGreaterThanOrEqualTo(INSIDE_RUNS + OUTSIDE_RUNS);
      assertThat(serverSpans - clientSpans).as("server spans without a client span: the outside calls (and warm-ups before"
          + " the client's binary was traced)").isGreaterThanOrEqualTo(OUTSIDE_RUNS);
      assertThat(outsideHits(receiver)).as("probe hits outside the namespace, counted").isPositive();
    } finally {
      ExampleApps.run(List.of("rm", "-rf", work.toString()), 10);
    }
  }

  /** The last value of gospan.probe.hits.outside_namespace, summed over probes. */
  static long outsideHits(OtlpGrpcReceiver receiver) {
    long last = 0;
    for (OtlpGrpcReceiver.ReceivedMetric m : receiver.metrics()) {
      if (!m.metric().getName().equals("gospan.probe.hits.outside_namespace")) {
        continue;
      }
      long sum = 0;
      for (NumberDataPoint p : m.metric().getSum().getDataPointsList()) {
        sum += p.getAsInt();
      }
      last = Math.max(last, sum);
    }
    return last;
  }

  static String log(Path work) {
    try {
      return Files.readString(work.resolve("gospan.log"));
    } catch (Exception e) {
      return "(no gospan log: " + e + ")";
    }
  }
}
