package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.Jaeger;
import io.gospan.receiver.testing.LinkNetwork;
import io.gospan.receiver.testing.NamespaceBridge;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Linking across gospans, end to end into Jaeger: the three namespaces of {@link
 * LinkAcrossNamespacesIT}, a gospan in each tracing its tier only, all exporting to one real
 * Jaeger (scripts/jaeger.sh, on this JVM's 127.0.0.1, reached from the namespaces through {@link
 * NamespaceBridge}). Each call the client makes is one trace in Jaeger's query API: the client
 * span, the relay's server span (CHILD_OF it), the relay's two client spans, the two server spans,
 * from three gospans.
 */
class LinkJaegerEndToEndIT {

  @Test
  void eachCallIsOneSixSpanTraceInJaegerAcrossThreeGospans() throws Exception {
    Path dir = ExampleApps.build();
    List<LinkAcrossNamespacesIT.Gospan> gospans = new ArrayList<>();
    try (LinkNetwork net = LinkNetwork.create(); Jaeger jaeger = Jaeger.start()) {
      InetSocketAddress otlp = new InetSocketAddress("127.0.0.1", jaeger.ports().otlpGrpc());
      try (NamespaceBridge bridge = NamespaceBridge.start(net.bridge, new InetSocketAddress(LinkNetwork.BRIDGE_IP, 4317), () -> otlp)) {
        gospans.add(LinkAcrossNamespacesIT.Gospan.start(net.client, "client", dir.resolve("greeter-client")));
        gospans.add(LinkAcrossNamespacesIT.Gospan.start(net.relay, "relay", dir.resolve("greeter-relay")));
        gospans.add(LinkAcrossNamespacesIT.Gospan.start(net.server, "server", dir.resolve("greeter-server")));
        List<JsonNode> traces;
        try (ExampleApps.Server server = ExampleApps.startListening(LinkNetwork.in(net.server), dir.resolve("greeter-server"),
                LinkNetwork.SERVER_IP + ":50051", Map.of("OTEL_SERVICE_NAME", RelayJaegerEndToEndIT.SERVER));
            ExampleApps.Server relay = ExampleApps.startListening(LinkNetwork.in(net.relay), dir.resolve("greeter-relay"),
                LinkNetwork.RELAY_IP + ":50052", Map.of("OTEL_SERVICE_NAME", RelayJaegerEndToEndIT.RELAY),
                "-upstream", LinkNetwork.SERVER_IP + ":50051", "-background", "0")) {
          gospans.get(2).await(() -> gospans.get(2).traces(server.pid()), "server traced by its gospan");
          gospans.get(1).await(() -> gospans.get(1).traces(relay.pid()), "relay traced by its gospan");
          ProcessBuilder pb = new ProcessBuilder(LinkNetwork.in(net.client, dir.resolve("greeter-client").toString(),
              "-addr", LinkNetwork.RELAY_IP + ":50052", "-quiet", "-rpc", "unary", "-n", "0", "-rate", "5"))
              .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT);
          pb.environment().put("OTEL_SERVICE_NAME", RelayJaegerEndToEndIT.CLIENT);
          Process client = pb.start();
          try {
            gospans.get(0).await(() -> gospans.get(0).traces(client.pid()), "the client traced by its gospan");
            traces = jaeger.awaitTraces(RelayJaegerEndToEndIT.CLIENT, RelayJaegerEndToEndIT::settled, Duration.ofSeconds(60));
          } finally {
            client.destroy();
            client.waitFor(10, TimeUnit.SECONDS);
          }
        } finally {
          for (LinkAcrossNamespacesIT.Gospan g : gospans) {
            g.stop();
          }
        }
        List<JsonNode> complete = RelayJaegerEndToEndIT.complete(traces);
        assertThat(complete).as("six-span traces from three gospans in Jaeger").hasSizeGreaterThanOrEqualTo(5);
        long withRelayClients = RelayJaegerEndToEndIT.withRelayClients(traces);
        assertThat(complete.size()).as("traces with relay client spans that are complete, of %d", withRelayClients)
            .isGreaterThanOrEqualTo((int) Math.ceil(0.9 * withRelayClients));
        // the three services, each traced by the gospan of its namespace only
        JsonNode t = complete.get(0);
        List<String> services = new ArrayList<>();
        t.path("processes").forEach(p -> services.add(p.path("serviceName").asText()));
        assertThat(services).contains(RelayJaegerEndToEndIT.CLIENT, RelayJaegerEndToEndIT.RELAY, RelayJaegerEndToEndIT.SERVER);
      }
    }
  }
}
