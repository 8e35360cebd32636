package io.gospan.receiver.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.PromText;
import io.gospan.receiver.testing.SidecarProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The RED histograms on {@code /metrics} of the gospan jar tracing the example server and clients
 * (real Go programs, real uprobes), scraped over HTTP and read by Prometheus's own text parser
 * ({@link PromText}): {@code rpc_server_call_duration_seconds} and {@code
 * rpc_client_call_duration_seconds}, one series per process, method and status, labelled with the
 * process's {@code service_name} (its {@code OTEL_SERVICE_NAME}) and {@code process_pid}; each
 * histogram's count is the number of calls made, also for clients that exited (their series stay
 * until a scrape after their last spans could end). OTLP metrics are off: {@code /metrics} alone
 * carries them.
 */
class RedMetricsEndpointIT {
  static final String SERVER = "red-server";
  static final String CLIENT_OK = "red-client-ok";
  static final String CLIENT_NOT_FOUND = "red-client-not-found";
  static final int OK_CALLS = 40;
  static final int NOT_FOUND_CALLS = 25;

  @Test
  void redHistogramsCountEveryCallPerService() throws Exception {
    Path dir = ExampleApps.build();
    int port = TelemetryServerIT.freePort();
    String url = "http://127.0.0.1:" + port + "/metrics";
    Path config = Files.createTempFile("gospan-red", ".yaml");
    Files.writeString(config, "exporter: {type: none, batch: {schedule_delay: 100ms}}\nmetrics: {enabled: false}\n"
        + "streams: {link_wait: 300ms}\n"
        + "telemetry: {http: {address: \"127.0.0.1:" + port + "\"}}\n"
        // this clone's example programs only: others' Go processes on the machine are not this test's
        + "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/*\"\n");
    try (SidecarProcess gospan = SidecarProcess.start(config);
        ExampleApps.Server server = ExampleApps.startServer(dir, Map.of("OTEL_SERVICE_NAME", SERVER))) {
      gospan.await(() -> gospan.traces(server.pid()), "server traced");
      // the client binary, attached by a long-lived client's run (INTERNAL: not counted below), lingers:
      // the counted runs are traced from their first call
      Process warmup = new ProcessBuilder(dir.resolve("greeter-client").toString(), "-addr", server.address(), "-quiet",
          "-n", "0", "-rate", "20", "-fail-code", "INTERNAL")
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      try {
        gospan.await(() -> gospan.traces(warmup.pid()), "client binary traced");
      } finally {
        warmup.destroy();
        warmup.waitFor(10, TimeUnit.SECONDS);
      }
      // ~4 s and ~2.5 s: long enough for gospan to read their environment (OTEL_SERVICE_NAME)
      JsonNode ok = ExampleApps.runClient(dir, Map.of("OTEL_SERVICE_NAME", CLIENT_OK), server.address(),
          "-rpc", "unary", "-n", Integer.toString(OK_CALLS), "-rate", "10");
      JsonNode notFound = ExampleApps.runClient(dir, Map.of("OTEL_SERVICE_NAME", CLIENT_NOT_FOUND), server.address(),
          "-rpc", "unary", "-n", Integer.toString(NOT_FOUND_CALLS), "-rate", "10", "-fail-code", "NOT_FOUND");
      System.out.println("clients: " + ok + " " + notFound);

      Map<String, Long> expected = Map.of(
          "server " + SERVER + " OK", (long) OK_CALLS,
          "server " + SERVER + " NOT_FOUND", (long) NOT_FOUND_CALLS,
          "client " + CLIENT_OK + " OK", (long) OK_CALLS,
          "client " + CLIENT_NOT_FOUND + " NOT_FOUND", (long) NOT_FOUND_CALLS);
      // the exited clients' series go after the first scrape once their spans could all have ended:
      // every scrape is read, the largest count of each series kept
      Map<String, Long> seen = new HashMap<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (!seen.equals(expected) && System.nanoTime() < deadline) {
        Map<String, JsonNode> families = PromText.scrape(url);
        for (String side : List.of("server", "client")) {
          JsonNode family = families.get("rpc_" + side + "_call_duration_seconds");
          if (family == null) {
            continue;
          }
          assertThat(family.path("type").asText()).isEqualTo("HISTOGRAM");
          Set<Map<String, String>> labelSets = new HashSet<>();
          for (JsonNode m : family.path("metric")) {
            Map<String, String> labels = PromText.labels(m);
            assertThat(labelSets.add(labels)).as("one series per label set: %s", labels).isTrue();
            assertThat(labels).containsEntry("rpc_system_name", "grpc").containsEntry("rpc_method", "greeter.Greeter/SayHello")
                .containsKeys("service_name", "process_pid");
            String key = side + " " + labels.get("service_name") + " " + labels.get("rpc_response_status_code");
            seen.merge(key, m.path("histogram").path("sampleCount").asLong(), Math::max);
          }
        }
        seen.keySet().retainAll(expected.keySet()); // the warm-up client's INTERNAL calls are not counted
        Thread.sleep(200);
      }
      assertThat(seen).as("histogram counts per side, service_name and status").isEqualTo(expected);

      Map<String, JsonNode> families = PromText.scrape(url);
      JsonNode serverFamily = families.get("rpc_server_call_duration_seconds");
      assertThat(serverFamily.path("metric")).as("the server's series stay").anySatisfy(m ->
          assertThat(PromText.labels(m)).containsEntry("service_name", SERVER)
              .containsEntry("process_pid", Long.toString(server.pid())));
      assertThat(families.get("target_info").path("metric")).as("one target: gospan").hasSize(1);
      gospan.stop(Duration.ofSeconds(30));
    }
  }
}
