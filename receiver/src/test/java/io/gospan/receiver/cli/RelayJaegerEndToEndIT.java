package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.Jaeger;
import io.gospan.receiver.testing.SidecarProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * In-process propagation as a user sees it in Jaeger: the gospan jar exporting OTLP/gRPC to a
 * real Jaeger v2, greeter-client → greeter-relay → greeter-server, each with its own
 * OTEL_SERVICE_NAME. Jaeger's query API must return each unary call as one trace of six spans:
 * the client span (no references), the relay's server span (CHILD_OF the client span), the
 * relay's two client spans (CHILD_OF the relay's server span), the server's two server spans
 * (each CHILD_OF one of those), under their services.
 */
class RelayJaegerEndToEndIT {

  static final String CLIENT = "e2e-relay-client";
  static final String RELAY = "e2e-relay";
  static final String SERVER = "e2e-relay-server";

  @Test
  void eachCallIsOneSixSpanTraceInJaeger() throws Exception {
    Path dir = ExampleApps.build();
    try (Jaeger jaeger = Jaeger.start()) {
      Path config = Files.createTempFile("gospan-relay-jaeger", ".yaml");
      Files.writeString(config, "exporter:\n  type: otlp\n  otlp:\n    endpoint: " + jaeger.otlpGrpcEndpoint() + "\n"
          + "  batch:\n    schedule_delay: 200ms\nmetrics:\n  enabled: false\ntelemetry:\n  http:\n    enabled: false\n");
      List<JsonNode> traces;
      try (SidecarProcess gospan = SidecarProcess.start(config)) {
        try (ExampleApps.Server server = ExampleApps.startServer(dir, Map.of("OTEL_SERVICE_NAME", SERVER));
            ExampleApps.Server relay = ExampleApps.startRelay(dir, Map.of("OTEL_SERVICE_NAME", RELAY), server.address(),
                "-background", "0")) {
          gospan.await(() -> gospan.traces(server.pid()) && gospan.traces(relay.pid()), "server and relay traced");
          List<String> cmd = List.of(dir.resolve("greeter-client").toString(), "-addr", relay.address(), "-quiet",
              "-rpc", "unary", "-n", "0", "-rate", "5");
          ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectError(ProcessBuilder.Redirect.INHERIT);
          pb.environment().put("OTEL_SERVICE_NAME", CLIENT);
          Process client = pb.start();
          try {
            gospan.await(() -> gospan.traces(client.pid()), "client traced");
            traces = jaeger.awaitTraces(CLIENT, RelayJaegerEndToEndIT::settled, Duration.ofSeconds(40));
          } finally {
            client.destroy();
            client.waitFor(10, TimeUnit.SECONDS);
          }
        }
        gospan.stop(Duration.ofSeconds(30));
      }
      List<JsonNode> complete = complete(traces);
      assertThat(complete).as("six-span traces in Jaeger").hasSizeGreaterThanOrEqualTo(5);
      // every trace of a call the client made after all three were traced is complete: those
      // that are not started before (the client span has no relay server child yet) or end after
      long withRelayClients = withRelayClients(traces);
      assertThat(complete.size()).as("traces with relay client spans that are complete, of %d", withRelayClients)
          .isGreaterThanOrEqualTo((int) Math.ceil(0.9 * withRelayClients));
    }
  }

  /** The traces that are exactly the six-span chain with CHILD_OF references and the right services. */
  /** Traces in which the relay's client spans arrived (the relay served the call while traced). */
  static long withRelayClients(List<JsonNode> traces) {
    return traces.stream().filter(t -> spansOf(t, RELAY, "client").size() > 0).count();
  }

  /**
   * At least 5 six-span traces, and at least 90 % of the traces with relay client spans complete.
   * Awaited, not asserted on the first answer that has 5: a trace whose relay spans arrived while
   * its other spans were still on their way (one export interval, a link lookup) is not yet
   * complete in that answer, and at 5 calls/s one such trace is 1 in 6.
   */
  static boolean settled(List<JsonNode> traces) {
    int complete = complete(traces).size();
    return complete >= 5 && complete >= (int) Math.ceil(0.9 * withRelayClients(traces));
  }

  static List<JsonNode> complete(List<JsonNode> traces) {
    return traces.stream().filter(RelayJaegerEndToEndIT::isComplete).collect(Collectors.toList());
  }

  static boolean isComplete(JsonNode trace) {
    if (trace.path("spans").size() != 6) {
      return false;
    }
    List<JsonNode> client = spansOf(trace, CLIENT, "client");
    List<JsonNode> relayServer = spansOf(trace, RELAY, "server");
    List<JsonNode> relayClients = spansOf(trace, RELAY, "client");
    List<JsonNode> servers = spansOf(trace, SERVER, "server");
    if (client.size() != 1 || relayServer.size() != 1 || relayClients.size() != 2 || servers.size() != 2) {
      return false;
    }
    if (!client.get(0).path("references").isEmpty() || !childOf(relayServer.get(0), client.get(0))) {
      return false;
    }
    for (JsonNode rc : relayClients) {
      if (!childOf(rc, relayServer.get(0))) {
        return false;
      }
      if (servers.stream().filter(s -> childOf(s, rc)).count() != 1) {
        return false;
      }
    }
    String op = "greeter.Greeter/SayHello";
    return List.of(client, relayServer, relayClients, servers).stream()
        .flatMap(List::stream)
        .allMatch(s -> s.path("operationName").asText().equals(op));
  }

  static boolean childOf(JsonNode span, JsonNode parent) {
    JsonNode refs = span.path("references");
    return refs.size() == 1 && refs.get(0).path("refType").asText().equals("CHILD_OF")
        && refs.get(0).path("spanID").asText().equals(parent.path("spanID").asText())
        && refs.get(0).path("traceID").asText().equals(parent.path("traceID").asText());
  }

  static List<JsonNode> spansOf(JsonNode trace, String service, String kind) {
    Map<String, String> serviceOf = new HashMap<>();
    trace.path("processes").fields().forEachRemaining(e -> serviceOf.put(e.getKey(), e.getValue().path("serviceName").asText()));
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode s : trace.path("spans")) {
      if (service.equals(serviceOf.get(s.path("processID").asText())) && kind.equals(JaegerEndToEndIT.tag(s, "span.kind"))) {
        out.add(s);
      }
    }
    return out;
  }
}
