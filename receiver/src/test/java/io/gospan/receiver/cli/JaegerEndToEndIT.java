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
import org.junit.jupiter.api.Test;

/**
 * End to end with a real collector: Jaeger v2 (OTLP in, query API out), the gospan jar as a
 * separate process exporting OTLP/gRPC, and the example server and clients, each with its own
 * OTEL_SERVICE_NAME. Asserted through Jaeger's query API: client span → server span parentage,
 * names, kinds, status codes, attributes, and the resource service.name of each process.
 */
class JaegerEndToEndIT {

  static final String SERVER = "e2e-greeter-server";
  static final String CLIENT = "e2e-greeter-client";
  static final String OUTSIDE_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  static final String OUTSIDE_PARENT = "00f067aa0ba902b7";

  @Test
  void tracesArriveInJaegerLinkedAndNamed() throws Exception {
    Path dir = ExampleApps.build();
    try (Jaeger jaeger = Jaeger.start()) {
      Path config = Files.createTempFile("gospan-e2e", ".yaml");
      Files.writeString(config, "exporter:\n  type: otlp\n  otlp:\n    endpoint: " + jaeger.otlpGrpcEndpoint() + "\n"
          + "  batch:\n    schedule_delay: 200ms\nmetrics:\n  enabled: false\ntelemetry:\n  http:\n    enabled: false\n"
          // this clone's example programs only: others' Go processes on the machine are not this test's
          + "discovery:\n  instrument:\n    - exe_path: \"" + dir + "/*\"\n");
      try (SidecarProcess gospan = SidecarProcess.start(config)) {
        try (ExampleApps.Server server = ExampleApps.startServer(dir, Map.of("OTEL_SERVICE_NAME", SERVER))) {
          gospan.await(() -> gospan.traces(server.pid()), "server traced");
          // long-lived clients: one making OK calls, one asking for NOT_FOUND
          Process loop = startClient(dir, server.address(), "-n", "0", "-rate", "5", "-rpc", "unary");
          Process failing = startClient(dir, server.address(), "-n", "0", "-rate", "5", "-rpc", "unary", "-fail-code", "NOT_FOUND");
          try {
            gospan.await(() -> gospan.traces(loop.pid()) && gospan.traces(failing.pid()), "clients traced");
            Thread.sleep(1500);
            // a short-lived process of the now known client binary, carrying a trace context from
            // outside: traced from its first call, its spans join that trace
            ExampleApps.runClient(dir, Map.of("OTEL_SERVICE_NAME", CLIENT), server.address(), "-rpc", "unary", "-n", "1",
                "-header", "traceparent=00-" + OUTSIDE_TRACE + "-" + OUTSIDE_PARENT + "-01");
            Thread.sleep(1000);
          } finally {
            loop.destroy();
            failing.destroy();
            loop.waitFor(10, TimeUnit.SECONDS);
            failing.waitFor(10, TimeUnit.SECONDS);
          }
        }
        List<JsonNode> traces =
            jaeger.awaitTraces(CLIENT, t -> countLinked(t, "NOT_FOUND") >= 2 && countLinked(t, "OK") >= 3, Duration.ofSeconds(30));
        // the traceparent call: both spans are children of the outside span, in its trace
        // (an explicit traceparent wins over linking by socket); the process exited at once, so
        // its service.name is its OTEL_SERVICE_NAME if gospan read /proc in time, else its
        // executable's name, never unknown_service
        JsonNode outside = jaeger.getJson("/api/traces/" + OUTSIDE_TRACE).path("data").get(0);
        assertThat(outside).as("trace " + OUTSIDE_TRACE + " in Jaeger").isNotNull();
        Map<String, String> outsideServices = new HashMap<>();
        outside.path("processes").fields().forEachRemaining(e -> outsideServices.put(e.getKey(), e.getValue().path("serviceName").asText()));
        JsonNode joinedClient = spanOfKind(outside, "client");
        JsonNode joinedServer = spanOfKind(outside, "server");
        assertThat(joinedClient.path("references").get(0).path("spanID").asText()).isEqualTo(OUTSIDE_PARENT);
        assertThat(joinedServer.path("references").get(0).path("spanID").asText()).isEqualTo(OUTSIDE_PARENT);
        assertThat(outsideServices.get(joinedClient.path("processID").asText())).isIn(CLIENT, "greeter-client");
        assertThat(outsideServices.get(joinedServer.path("processID").asText())).isEqualTo(SERVER);
        for (JsonNode trace : traces) {
          if (trace.path("traceID").asText().equals(OUTSIDE_TRACE)) {
            continue; // checked above (found under CLIENT when gospan read its /proc in time)
          }
          Map<String, String> serviceOf = new HashMap<>();
          trace.path("processes").fields().forEachRemaining(e -> serviceOf.put(e.getKey(), e.getValue().path("serviceName").asText()));
          JsonNode client = spanOfKind(trace, "client");
          JsonNode server = spanOfKind(trace, "server");
          if (client == null || server == null) {
            continue; // a call whose other end was not traced yet
          }
          assertThat(serviceOf.get(client.path("processID").asText())).isEqualTo(CLIENT);
          assertThat(serviceOf.get(server.path("processID").asText())).isEqualTo(SERVER);
          assertThat(client.path("operationName").asText()).isEqualTo("greeter.Greeter/SayHello");
          assertThat(server.path("operationName").asText()).isEqualTo("greeter.Greeter/SayHello");
          assertThat(client.path("references")).isEmpty(); // no traceparent: the client span is a root
          assertThat(server.path("references").get(0).path("refType").asText()).isEqualTo("CHILD_OF");
          assertThat(server.path("references").get(0).path("spanID").asText()).isEqualTo(client.path("spanID").asText());
          assertThat(tag(client, "rpc.system.name")).isEqualTo("grpc");
          assertThat(tag(client, "rpc.method")).isEqualTo("greeter.Greeter/SayHello");
          assertThat(tag(client, "server.address")).isEqualTo("127.0.0.1");
          assertThat(tag(server, "network.peer.address")).isEqualTo("127.0.0.1");
          String code = tag(client, "rpc.response.status_code");
          assertThat(tag(server, "rpc.response.status_code")).isEqualTo(code);
          if (code.equals("NOT_FOUND")) {
            assertThat(tag(client, "otel.status_code")).isEqualTo("ERROR"); // every non-OK code on the client
            assertThat(tag(server, "otel.status_code")).isNull(); // NOT_FOUND is not a server error
          } else {
            assertThat(code).isEqualTo("OK");
            assertThat(tag(client, "otel.status_code")).isNull();
          }
        }
        gospan.stop(Duration.ofSeconds(30)); // SIGTERM: flush, detach, exit 0
      }
    }
  }

  static Process startClient(Path dir, String address, String... flags) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(dir.resolve("greeter-client").toString(), "-addr", address, "-quiet"));
    cmd.addAll(List.of(flags));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
    pb.environment().put("OTEL_SERVICE_NAME", CLIENT);
    return pb.start();
  }

  static long countLinked(List<JsonNode> traces, String code) {
    return traces.stream()
        .filter(t -> {
          JsonNode c = spanOfKind(t, "client");
          JsonNode s = spanOfKind(t, "server");
          return c != null && s != null && code.equals(tag(c, "rpc.response.status_code"))
              && s.path("references").size() == 1 && s.path("references").get(0).path("spanID").asText().equals(c.path("spanID").asText());
        })
        .count();
  }

  static JsonNode spanOfKind(JsonNode trace, String kind) {
    for (JsonNode span : trace.path("spans")) {
      if (kind.equals(tag(span, "span.kind"))) {
        return span;
      }
    }
    return null;
  }

  static String tag(JsonNode span, String key) {
    for (JsonNode t : span.path("tags")) {
      if (t.path("key").asText().equals(key)) {
        return t.path("value").asText();
      }
    }
    return null;
  }
}
