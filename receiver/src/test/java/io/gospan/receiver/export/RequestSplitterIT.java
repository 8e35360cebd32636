package io.gospan.receiver.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.testing.Jaeger;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.exporter.internal.FailedExportException;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.GrpcStatusCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.testing.trace.TestSpanData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A batch over the 4 MiB a gRPC server takes by default, exported to a real Jaeger v2 (grpc-go's
 * OTLP receiver, its default limit): refused whole when sent as one request; taken whole when
 * {@link RequestSplitter} sends it within {@code exporter.batch.max_export_request_bytes}'s
 * default, and when its bound is above the limit (the refused request goes again in halves).
 */
class RequestSplitterIT {
  static final String SERVICE = "split-it";

  static List<SpanData> batch(String traceId, int spans) {
    Resource resource = Resource.getDefault().merge(Resource.create(Attributes.builder()
        .put("service.name", SERVICE).put("process.pid", 4242L).build()));
    List<SpanData> out = new ArrayList<>();
    for (int i = 0; i < spans; i++) {
      out.add(TestSpanData.builder()
          .setSpanContext(SpanContext.create(traceId, String.format("%016x", i + 1), TraceFlags.getSampled(),
              TraceState.getDefault()))
          .setName("helloworld.Greeter/SayHello").setKind(SpanKind.SERVER).setStatus(StatusData.unset())
          .setStartEpochNanos(System.currentTimeMillis() * 1_000_000L)
          .setEndEpochNanos(System.currentTimeMillis() * 1_000_000L + 300_000)
          // a captured request header: large, as metadata attributes can be
          .setAttributes(Attributes.builder().put("rpc.system", "grpc")
              .put("rpc.request.metadata.x-payload", "v".repeat(1_500) + i).build())
          .setTotalAttributeCount(2)
          .setResource(resource).setHasEnded(true).build());
    }
    return out;
  }

  @Test
  void aBatchOverFourMebibytesArrivesWholeInRequestsWithinTheBound() {
    try (Jaeger jaeger = Jaeger.start()) {
      OtlpGrpcSpanExporter otlp = OtlpGrpcSpanExporter.builder()
          .setEndpoint(jaeger.otlpGrpcEndpoint()).setTimeout(Duration.ofSeconds(20)).build();
      try {
        List<SpanData> refused = batch("0af7651916cd43dd8448eb211c80319c", 3_000);
        assertThat(RequestSplitterTest.serializedSize(refused)).isGreaterThan(4L << 20);
        CompletableResultCode whole = otlp.export(refused).join(30, TimeUnit.SECONDS);
        assertThat(whole.isDone()).isTrue();
        assertThat(whole.isSuccess()).as("one request over 4 MiB: Jaeger refuses it").isFalse();
        assertThat(whole.getFailureThrowable()).isInstanceOfSatisfying(FailedExportException.GrpcExportException.class, g -> {
          assertThat(g.getResponse().getStatusCode()).isEqualTo(GrpcStatusCode.RESOURCE_EXHAUSTED);
          assertThat(g.getResponse().getStatusDescription()).contains("larger than max");
        });

        String traceId = "1af7651916cd43dd8448eb211c80319c";
        RequestSplitter splitter =
            new RequestSplitter(otlp, GospanConfig.BatchConfig.DEFAULT_MAX_EXPORT_REQUEST_BYTES);
        CompletableResultCode split = splitter.export(batch(traceId, 3_000)).join(30, TimeUnit.SECONDS);
        assertThat(split.isSuccess()).as("the same size in requests within the bound").isTrue();

        assertThat(storedSpans(jaeger, traceId, 3_000)).as("spans of the split batch Jaeger stored").isEqualTo(3_000);

        // a bound above the collector's limit: the refused request goes again in halves
        String halvedTraceId = "2af7651916cd43dd8448eb211c80319c";
        RequestSplitter above = new RequestSplitter(otlp, 8L << 20);
        CompletableResultCode halved = above.export(batch(halvedTraceId, 3_000)).join(30, TimeUnit.SECONDS);
        assertThat(halved.isSuccess()).as("refused whole, taken in halves").isTrue();
        assertThat(storedSpans(jaeger, halvedTraceId, 3_000)).as("spans of the halved batch Jaeger stored").isEqualTo(3_000);
      } finally {
        otlp.shutdown().join(10, TimeUnit.SECONDS);
      }
    }
  }

  /** The spans Jaeger holds of {@code traceId}, polled until {@code expected} or 20 s. */
  static int storedSpans(Jaeger jaeger, String traceId, int expected) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    int stored = 0;
    while (System.nanoTime() < deadline) {
      try {
        JsonNode trace = jaeger.getJson("/api/traces/" + traceId);
        stored = trace.path("data").path(0).path("spans").size();
        if (stored == expected) {
          break;
        }
      } catch (AssertionError notYet) {
        // 404 until Jaeger stores the trace
      }
      sleepMillis(200);
    }
    return stored;
  }

  private static void sleepMillis(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
