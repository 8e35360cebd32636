package io.gospan.receiver.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.exporter.internal.FailedExportException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.common.export.GrpcResponse;
import io.opentelemetry.sdk.common.export.GrpcStatusCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.testing.trace.TestSpanData;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Export requests within their bound in bytes: the estimate against the size the SDK's OTLP
 * marshaler gives the same spans, and the split itself.
 */
class RequestSplitterTest {
  static final InstrumentationScopeInfo SCOPE = InstrumentationScopeInfo.builder("io.gospan").setVersion("0.1.0").build();

  static Resource resource(int pid) {
    return Resource.getDefault().merge(Resource.create(Attributes.builder()
        .put("service.name", "greeter-server").put("process.pid", (long) pid)
        .put("process.executable.path", "/usr/local/bin/greeter-server")
        .put("host.name", "node-7").put("k8s.pod.name", "greeter-7c9f6d4b8-x2x9q").build()));
  }

  /** The attributes span assembly gives a server span over TCP. */
  static Attributes serverAttributes(String method) {
    return Attributes.builder()
        .put("rpc.system", "grpc").put("rpc.service", "helloworld.Greeter").put("rpc.method", method)
        .put("rpc.grpc.status_code", 0L).put("server.address", "10.0.3.17").put("server.port", 50051L)
        .put("network.peer.address", "10.0.3.22").put("network.peer.port", 41822L)
        .put("network.transport", "tcp").put("network.type", "ipv4")
        .put("client.address", "10.0.3.22").put("client.port", 41822L).build();
  }

  static SpanData span(int i, Resource resource, Attributes attributes) {
    return TestSpanData.builder()
        .setSpanContext(SpanContext.create(String.format("%032x", i + 1), String.format("%016x", i + 1),
            TraceFlags.getSampled(), TraceState.getDefault()))
        .setParentSpanContext(SpanContext.create(String.format("%032x", i + 1), String.format("%016x", i + 100_001),
            TraceFlags.getSampled(), TraceState.getDefault()))
        .setName("helloworld.Greeter/SayHello").setKind(SpanKind.SERVER).setStatus(StatusData.unset())
        .setStartEpochNanos(1_764_000_000_000_000_000L + i).setEndEpochNanos(1_764_000_000_000_300_000L + i)
        .setAttributes(attributes).setTotalAttributeCount(attributes.size())
        .setResource(resource).setInstrumentationScopeInfo(SCOPE).setHasEnded(true).build();
  }

  /** Spans of every shape the estimate knows: long and non-ASCII strings, arrays, status, events, links, trace state. */
  static List<SpanData> assorted() {
    List<SpanData> out = new ArrayList<>();
    Resource r1 = resource(101);
    Resource r2 = resource(202);
    Attributes shared = serverAttributes("SayHello");
    for (int i = 0; i < 200; i++) {
      out.add(span(i, i % 3 == 0 ? r2 : r1, shared));
    }
    TraceState state = TraceState.builder().put("vendor", "opaque-value-1").put("congo", "t61rcWkgMzE").build();
    out.add(TestSpanData.builder()
        .setSpanContext(SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", TraceFlags.getSampled(), state))
        .setName("пример.Служба/Метод 🚀").setKind(SpanKind.CLIENT)
        .setStatus(StatusData.create(StatusCode.ERROR, "déjà vu: 连接被拒绝 " + "x".repeat(3000)))
        .setStartEpochNanos(1).setEndEpochNanos(2)
        .setAttributes(Attributes.builder()
            .put(AttributeKey.stringArrayKey("rpc.request.metadata.x-tags"), List.of("ä", "ő", "日本語", "🙂".repeat(40)))
            .put(AttributeKey.longArrayKey("sizes"), List.of(1L, 1L << 40, -1L))
            .put(AttributeKey.doubleKey("ratio"), 0.25).put(AttributeKey.booleanKey("retried"), true)
            .put("rpc.request.metadata.user-agent", "grpc-go/1.62.1 " + "é".repeat(500)).build())
        .setTotalAttributeCount(5)
        .setEvents(List.of(
            EventData.create(5, "message", Attributes.of(AttributeKey.longKey("message.id"), 1L)),
            EventData.create(6, "exception", Attributes.of(AttributeKey.stringKey("exception.message"), "ü".repeat(200)))))
        .setTotalRecordedEvents(2)
        .setLinks(List.of(LinkData.create(SpanContext.create("1af7651916cd43dd8448eb211c80319c", "c7ad6b7169203331",
            TraceFlags.getDefault(), state), Attributes.of(AttributeKey.stringKey("link.kind"), "follows"))))
        .setTotalRecordedLinks(1)
        .setResource(r1).setInstrumentationScopeInfo(SCOPE).setHasEnded(true).build());
    return out;
  }

  static long serializedSize(Collection<SpanData> spans) {
    return TraceRequestMarshaler.create(spans).getBinarySerializedSize();
  }

  static long estimate(RequestSplitter splitter, Collection<SpanData> spans) {
    long n = 0;
    java.util.Set<Resource> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    for (SpanData s : spans) {
      n += splitter.estimate(s) + (seen.add(s.getResource()) ? splitter.resourceEstimate(s) : 0);
    }
    return n;
  }

  @Test
  void theEstimateIsAboveTheMarshaledSizeAndNotFarAbove() {
    RequestSplitter splitter = new RequestSplitter(new Requests(), 1 << 20);
    // every span alone (with its resource), then all together
    for (SpanData s : assorted()) {
      long actual = serializedSize(List.of(s));
      long estimate = splitter.estimate(s) + splitter.resourceEstimate(s);
      assertThat(estimate).as("estimate of %s", s.getName()).isGreaterThanOrEqualTo(actual);
    }
    List<SpanData> all = assorted();
    assertThat(estimate(splitter, all)).isGreaterThanOrEqualTo(serializedSize(all));

    // the usual batch: span assembly's server spans, one process
    List<SpanData> usual = new ArrayList<>();
    Attributes shared = serverAttributes("SayHello");
    for (int i = 0; i < 2048; i++) {
      usual.add(span(i, resource(101), shared));
    }
    long actual = serializedSize(usual);
    long estimate = estimate(splitter, usual);
    assertThat(estimate).isBetween(actual, actual * 6 / 5);
  }

  @Test
  void aBatchOverTheBoundGoesInRequestsWithinItInOrder() {
    Requests requests = new Requests();
    long bound = 64 * 1024;
    RequestSplitter splitter = new RequestSplitter(requests, bound);
    List<SpanData> batch = new ArrayList<>();
    Attributes shared = serverAttributes("SayHello");
    for (int i = 0; i < 2048; i++) {
      batch.add(span(i, resource(100 + i % 4), shared));
    }
    batch.addAll(assorted());
    assertThat(serializedSize(batch)).isGreaterThan(8 * bound);

    CompletableResultCode result = splitter.export(batch);

    assertThat(result.isSuccess()).isTrue();
    assertThat(requests.got.size()).isGreaterThanOrEqualTo(8);
    List<SpanData> joined = new ArrayList<>();
    for (List<SpanData> r : requests.got) {
      assertThat(serializedSize(r)).isLessThanOrEqualTo(bound);
      joined.addAll(r);
    }
    assertThat(joined).containsExactlyElementsOf(batch);
  }

  @Test
  void aBatchWithinTheBoundGoesThroughAsItIs() {
    Requests requests = new Requests();
    RequestSplitter splitter = new RequestSplitter(requests, 3L << 20);
    List<SpanData> batch = new ArrayList<>();
    for (int i = 0; i < 2048; i++) {
      batch.add(span(i, resource(101), serverAttributes("SayHello")));
    }

    splitter.export(batch);

    assertThat(requests.got).hasSize(1);
    assertThat(requests.got.get(0)).isSameAs(batch);
  }

  @Test
  void aSpanOverTheBoundGoesAloneAndOneFailedRequestFailsTheBatch() {
    Requests requests = new Requests();
    RequestSplitter splitter = new RequestSplitter(requests, 4096);
    SpanData big = TestSpanData.builder()
        .setSpanContext(SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", TraceFlags.getSampled(),
            TraceState.getDefault()))
        .setName("big").setKind(SpanKind.SERVER).setStatus(StatusData.create(StatusCode.ERROR, "e".repeat(10_000)))
        .setStartEpochNanos(1).setEndEpochNanos(2).setResource(resource(101)).setInstrumentationScopeInfo(SCOPE)
        .setHasEnded(true).build();
    SpanData a = span(1, resource(101), serverAttributes("A"));
    SpanData b = span(2, resource(101), serverAttributes("B"));
    requests.failing = big;

    CompletableResultCode result = splitter.export(List.of(a, big, b));

    assertThat(requests.got).containsExactly(List.of(a), List.of(big), List.of(b));
    assertThat(result.isDone()).isTrue();
    assertThat(result.isSuccess()).isFalse();
  }

  /** A collector's refusal of a message over its limit, as grpc-go words it. */
  static FailedExportException tooLarge(long size) {
    return FailedExportException.grpcFailedWithResponse(new GrpcResponse() {
      @Override
      public GrpcStatusCode getStatusCode() {
        return GrpcStatusCode.RESOURCE_EXHAUSTED;
      }

      @Override
      public String getStatusDescription() {
        return "grpc: received message larger than max (" + size + " vs. 4194304)";
      }

      @Override
      public byte[] getResponseMessage() {
        return new byte[0];
      }
    });
  }

  @Test
  void aRequestRefusedAsTooLargeGoesAgainInHalvesDownToOneSpan() {
    List<SpanData> batch = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      batch.add(span(i, resource(101), serverAttributes("SayHello")));
    }
    SpanData alone = batch.get(7);
    List<List<SpanData>> taken = new ArrayList<>();
    // a collector whose limit is below the bound: it takes at most 16 spans a request, and never the 8th span
    SpanExporter collector = new Requests() {
      @Override
      public CompletableResultCode export(Collection<SpanData> spans) {
        if (spans.size() > 16 || spans.contains(alone)) {
          return CompletableResultCode.ofExceptionalFailure(tooLarge(serializedSize(spans)));
        }
        taken.add(List.copyOf(spans));
        return CompletableResultCode.ofSuccess();
      }
    };

    ExportFailureLog failures = new ExportFailureLog(collector); // between them, as in the pipeline
    CompletableResultCode result = new RequestSplitter(failures, 3L << 20).export(batch);

    assertThat(result.isDone()).isTrue();
    assertThat(result.isSuccess()).as("the one span the collector never takes fails the batch").isFalse();
    assertThat(RequestSplitter.tooLarge(result.getFailureThrowable())).isTrue();
    List<SpanData> joined = new ArrayList<>();
    taken.forEach(joined::addAll);
    List<SpanData> expected = new ArrayList<>(batch);
    expected.remove(alone);
    assertThat(joined).containsExactlyElementsOf(expected);
    assertThat(taken).allSatisfy(r -> assertThat(r.size()).isLessThanOrEqualTo(16));
    assertThat(failures.report()).as("spans lost: the one span never taken, not the halved requests'").isEqualTo(1);
    // another refusal is not taken for "too large"
    assertThat(RequestSplitter.tooLarge(FailedExportException.grpcFailedExceptionally(new java.io.IOException("reset"))))
        .isFalse();
    assertThat(ExportQueue.retryable(tooLarge(5_000_000))).as("the export queue does not retry it").isFalse();
  }

  /** The exporter behind: keeps each request, fails one holding {@link #failing}. */
  static class Requests implements SpanExporter {
    final List<List<SpanData>> got = new ArrayList<>();
    SpanData failing;

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      got.add(spans instanceof List<SpanData> l ? l : List.copyOf(spans));
      return spans.contains(failing) ? CompletableResultCode.ofFailure() : CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}
