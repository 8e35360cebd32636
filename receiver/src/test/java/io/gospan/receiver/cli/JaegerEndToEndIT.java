package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.Jaeger;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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

  @Test
  void tracesArriveInJaegerLinkedAndNamed() throws Exception {
    Path dir = ExampleApps.build();
    Path jar = ExampleApps.repoRoot().resolve("receiver/target/gospan.jar");
    assertThat(jar).as("the gospan jar (mvn package runs before the integration tests)").exists();
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    try (Jaeger jaeger = Jaeger.start()) {
      Path config = Files.createTempFile("gospan-e2e", ".yaml");
      Files.writeString(config, "exporter:\n  type: otlp\n  otlp:\n    endpoint: " + jaeger.otlpGrpcEndpoint() + "\n"
          + "  batch:\n    schedule_delay: 200ms\nmetrics:\n  enabled: false\ntelemetry:\n  http:\n    enabled: false\n");
      Process gospan = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-jar", jar.toString(), "run", "--config", config.toString())
          .redirectErrorStream(true).start();
      Thread reader = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(gospan.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line; (line = r.readLine()) != null; ) {
            log.add(line);
          }
        } catch (Exception ignored) {
          // gospan exited
        }
      });
      reader.start();
      try {
        await(() -> log.stream().anyMatch(l -> l.contains("waiting for Go gRPC processes")), "gospan started", log);
        try (ExampleApps.Server server = ExampleApps.startServer(dir, Map.of("OTEL_SERVICE_NAME", SERVER))) {
          await(() -> log.stream().anyMatch(l -> l.contains("tracing pid " + server.pid() + " ")), "server traced", log);
          // a long-lived client makes the client binary known...
          ProcessBuilder looping = new ProcessBuilder(dir.resolve("greeter-client").toString(), "-addr", server.address(),
              "-n", "0", "-rate", "5", "-rpc", "unary", "-quiet").redirectOutput(ProcessBuilder.Redirect.DISCARD);
          looping.environment().put("OTEL_SERVICE_NAME", CLIENT);
          Process loop = looping.start();
          try {
            await(() -> log.stream().anyMatch(l -> l.contains("tracing pid " + loop.pid() + " ")), "client traced", log);
            // ...so this short-lived one is traced from its first call
            ExampleApps.runClient(dir, Map.of("OTEL_SERVICE_NAME", CLIENT), server.address(), "-rpc", "unary", "-n", "2", "-fail-code", "NOT_FOUND");
            Thread.sleep(1000);
          } finally {
            loop.destroy();
            loop.waitFor(10, TimeUnit.SECONDS);
          }
        }
        List<JsonNode> traces =
            jaeger.awaitTraces(CLIENT, t -> countLinked(t, "NOT_FOUND") >= 2 && countLinked(t, "OK") >= 3, Duration.ofSeconds(30));
        for (JsonNode trace : traces) {
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
          assertThat(client.path("references")).isEmpty();
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
      } finally {
        gospan.destroy(); // SIGTERM: flush, detach, exit 0
        assertThat(gospan.waitFor(30, TimeUnit.SECONDS)).isTrue();
        reader.join(5000);
        assertThat(gospan.exitValue()).as(String.join("\n", log)).isZero();
      }
    }
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

  interface Check {
    boolean ok();
  }

  static void await(Check c, String what, List<String> log) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!c.ok()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what + "; gospan log:\n" + String.join("\n", log));
      }
      Thread.sleep(50);
    }
  }
}
