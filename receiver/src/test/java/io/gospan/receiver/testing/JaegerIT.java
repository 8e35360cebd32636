package io.gospan.receiver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Proves the {@link Jaeger} helper: a real Jaeger v2 takes a client and a server span over
 * OTLP/gRPC from the OpenTelemetry Java SDK (the exporter gospan uses) and returns them through
 * both query APIs, in the shapes the end-to-end tests assert on.
 */
class JaegerIT {
  private static Jaeger jaeger;

  @BeforeAll
  static void startJaeger() {
    jaeger = Jaeger.start();
  }

  @AfterAll
  static void stopJaeger() {
    if (jaeger != null) {
      jaeger.close();
    }
  }

  /** Exports a CLIENT span and its SERVER child (an error) for {@code service}; returns their hex ids. */
  private static List<String> exportCallSpans(String service) {
    OtlpGrpcSpanExporter exporter = OtlpGrpcSpanExporter.builder()
        .setEndpoint(jaeger.otlpGrpcEndpoint())
        .setTimeout(Duration.ofSeconds(10))
        .build();
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(
            AttributeKey.stringKey("service.name"), service,
            AttributeKey.stringKey("process.runtime.name"), "go"))))
        .addSpanProcessor(SimpleSpanProcessor.create(exporter))
        .build();
    List<String> ids = new ArrayList<>();
    try {
      Tracer tracer = provider.get("io.gospan.receiver.testing.JaegerIT");
      Span client = tracer.spanBuilder("greeter.Greeter/SayHello")
          .setSpanKind(SpanKind.CLIENT)
          .setAttribute("rpc.system.name", "grpc")
          .setAttribute("server.port", 50051L)
          .startSpan();
      try (Scope ignored = client.makeCurrent()) {
        Span server = tracer.spanBuilder("greeter.Greeter/SayHello")
            .setSpanKind(SpanKind.SERVER)
            .setAttribute("rpc.response.status_code", "NOT_FOUND")
            .startSpan();
        server.setStatus(StatusCode.ERROR, "not found: ñ");
        server.end();
        ids.add(server.getSpanContext().getTraceId());
        ids.add(server.getSpanContext().getSpanId());
      }
      client.end();
      ids.add(client.getSpanContext().getSpanId());
      assertThat(provider.forceFlush().join(15, TimeUnit.SECONDS).isSuccess())
          .as("OTLP export to %s succeeded", jaeger.otlpGrpcEndpoint())
          .isTrue();
    } finally {
      provider.shutdown().join(10, TimeUnit.SECONDS);
    }
    return ids; // traceId, serverSpanId, clientSpanId
  }

  @Test
  void spanExportedOverOtlpGrpcIsFoundThroughApiV2AndV3() {
    String service = "jaeger-it-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> ids = exportCallSpans(service);
    String traceId = ids.get(0);
    String serverSpanId = ids.get(1);
    String clientSpanId = ids.get(2);

    // /api/traces: the UI's API (Jaeger model: tags, references, processes).
    List<JsonNode> traces = jaeger.awaitTraces(service,
        t -> t.size() == 1 && t.get(0).path("spans").size() == 2, Duration.ofSeconds(30));
    JsonNode trace = traces.get(0);
    assertThat(trace.path("traceID").asText()).isEqualTo(traceId);
    JsonNode server = spanById(trace.path("spans"), serverSpanId);
    JsonNode client = spanById(trace.path("spans"), clientSpanId);
    assertThat(server.path("operationName").asText()).isEqualTo("greeter.Greeter/SayHello");
    assertThat(tag(server, "span.kind")).isEqualTo("server");
    assertThat(tag(client, "span.kind")).isEqualTo("client");
    assertThat(tag(server, "otel.status_code")).isEqualTo("ERROR");
    assertThat(tag(server, "error")).isEqualTo("true");
    assertThat(tag(server, "otel.status_description")).isEqualTo("not found: ñ");
    assertThat(tag(server, "rpc.response.status_code")).isEqualTo("NOT_FOUND");
    assertThat(tag(client, "server.port")).isEqualTo("50051");
    assertThat(server.path("references").get(0).path("refType").asText()).isEqualTo("CHILD_OF");
    assertThat(server.path("references").get(0).path("spanID").asText()).isEqualTo(clientSpanId);
    assertThat(server.path("duration").asLong()).isGreaterThanOrEqualTo(0);
    String processId = server.path("processID").asText();
    assertThat(trace.path("processes").path(processId).path("serviceName").asText()).isEqualTo(service);
    assertThat(jaeger.services()).contains(service);

    // /api/v3/traces: OTLP JSON (resourceSpans / scopeSpans / spans, hex ids, integer kind).
    List<JsonNode> resourceSpans = jaeger.tracesV3(service);
    List<JsonNode> spans = new ArrayList<>();
    for (JsonNode rs : resourceSpans) {
      assertThat(attribute(rs.path("resource"), "service.name")).isEqualTo(service);
      rs.path("scopeSpans").forEach(ss -> ss.path("spans").forEach(spans::add));
    }
    assertThat(spans).hasSize(2);
    JsonNode serverV3 = spans.stream()
        .filter(s -> s.path("spanId").asText().equals(serverSpanId))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no server span in " + resourceSpans));
    assertThat(serverV3.path("traceId").asText()).isEqualTo(traceId);
    assertThat(serverV3.path("parentSpanId").asText()).isEqualTo(clientSpanId);
    assertThat(serverV3.path("name").asText()).isEqualTo("greeter.Greeter/SayHello");
    assertThat(serverV3.path("kind").asInt()).isEqualTo(2); // SPAN_KIND_SERVER
    assertThat(serverV3.path("status").path("code").asInt()).isEqualTo(2); // STATUS_CODE_ERROR
    assertThat(serverV3.path("status").path("message").asText()).isEqualTo("not found: ñ");
    assertThat(attribute(serverV3, "rpc.response.status_code")).isEqualTo("NOT_FOUND");
  }

  @Test
  void unknownServiceHasNoTraces() {
    assertThat(jaeger.traces("no-such-service")).isEmpty();
    assertThat(jaeger.tracesV3("no-such-service")).isEmpty();
  }

  private static JsonNode spanById(JsonNode spans, String spanId) {
    for (JsonNode s : spans) {
      if (s.path("spanID").asText().equals(spanId)) {
        return s;
      }
    }
    throw new AssertionError("no span " + spanId + " in " + spans);
  }

  /** A Jaeger-model tag's value as text ({@code tags: [{key, type, value}]}). */
  private static String tag(JsonNode span, String key) {
    for (JsonNode t : span.path("tags")) {
      if (t.path("key").asText().equals(key)) {
        return t.path("value").asText();
      }
    }
    throw new AssertionError("no tag " + key + " in " + span.path("tags"));
  }

  /** An OTLP JSON attribute's value as text ({@code attributes: [{key, value: {stringValue|intValue|...}}]}). */
  private static String attribute(JsonNode holder, String key) {
    for (JsonNode a : holder.path("attributes")) {
      if (a.path("key").asText().equals(key)) {
        JsonNode v = a.path("value");
        return v.fields().hasNext() ? v.fields().next().getValue().asText() : "";
      }
    }
    throw new AssertionError("no attribute " + key + " in " + holder.path("attributes"));
  }
}
