package io.gospan.receiver.export;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.TraceServiceGrpc;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * An OTLP/gRPC collector in the test JVM: grpc-java with the OTLP proto services, on 127.0.0.1.
 * Public for the end-to-end tests of other packages.
 */
public final class OtlpGrpcReceiver implements AutoCloseable {
  final List<ExportTraceServiceRequest> traces = new CopyOnWriteArrayList<>();
  final List<ExportMetricsServiceRequest> metrics = new CopyOnWriteArrayList<>();
  /** When each request of {@link #traces} arrived, Unix epoch ns (same index). */
  final List<Long> arrivals = new CopyOnWriteArrayList<>();
  private final Server server;
  /** {@code System.nanoTime()} when the first trace export arrived (its handler ran), 0 before. */
  private final java.util.concurrent.atomic.AtomicLong firstTraceNanos = new java.util.concurrent.atomic.AtomicLong();

  /** A received span with the resource it came under. */
  public record ReceivedSpan(Resource resource, Span span) {
    public String resourceAttr(String key) {
      return resource.getAttributesList().stream()
          .filter(kv -> kv.getKey().equals(key))
          .map(kv -> kv.getValue().hasStringValue() ? kv.getValue().getStringValue() : String.valueOf(kv.getValue().getIntValue()))
          .findFirst()
          .orElse(null);
    }

    public String attr(String key) {
      return span.getAttributesList().stream()
          .filter(kv -> kv.getKey().equals(key))
          .map(kv -> kv.getValue().hasStringValue() ? kv.getValue().getStringValue() : String.valueOf(kv.getValue().getIntValue()))
          .findFirst()
          .orElse(null);
    }
  }

  /** A received metric with the resource it came under. */
  public record ReceivedMetric(Resource resource, Metric metric) {
    public String resourceAttr(String key) {
      return resource.getAttributesList().stream()
          .filter(kv -> kv.getKey().equals(key))
          .map(kv -> kv.getValue().getStringValue())
          .findFirst()
          .orElse(null);
    }
  }

  private OtlpGrpcReceiver(int port, io.grpc.netty.shaded.io.netty.handler.ssl.SslContext tls) throws IOException {
    NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port));
    if (tls != null) {
      builder.sslContext(tls);
    }
    server =
        builder
            .addService(
                new TraceServiceGrpc.TraceServiceImplBase() {
                  @Override
                  public void export(ExportTraceServiceRequest request, StreamObserver<ExportTraceServiceResponse> response) {
                    firstTraceNanos.compareAndSet(0, System.nanoTime());
                    synchronized (traces) {
                      java.time.Instant now = java.time.Instant.now();
                      arrivals.add(now.getEpochSecond() * 1_000_000_000L + now.getNano());
                      traces.add(request);
                    }
                    response.onNext(ExportTraceServiceResponse.getDefaultInstance());
                    response.onCompleted();
                  }
                })
            .addService(
                new MetricsServiceGrpc.MetricsServiceImplBase() {
                  @Override
                  public void export(
                      ExportMetricsServiceRequest request, StreamObserver<ExportMetricsServiceResponse> response) {
                    metrics.add(request);
                    response.onNext(ExportMetricsServiceResponse.getDefaultInstance());
                    response.onCompleted();
                  }
                })
            .build()
            .start();
  }

  /** {@code System.nanoTime()} when the first trace export arrived, 0 when none has. */
  long firstTraceNanos() {
    return firstTraceNanos.get();
  }

  public static OtlpGrpcReceiver start(int port) throws IOException {
    return new OtlpGrpcReceiver(port, null);
  }

  /** A TLS receiver presenting {@code certChain}/{@code key}; requires a client certificate trusted by {@code clientCa}. */
  static OtlpGrpcReceiver startTls(java.io.File certChain, java.io.File key, java.io.File clientCa) throws IOException {
    var ssl =
        io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts.forServer(certChain, key)
            .trustManager(clientCa)
            .clientAuth(io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth.REQUIRE)
            .build();
    return new OtlpGrpcReceiver(0, ssl);
  }

  String tlsEndpoint() {
    return "https://127.0.0.1:" + port();
  }

  int port() {
    return server.getPort();
  }

  public String endpoint() {
    return "http://127.0.0.1:" + port();
  }

  public List<ReceivedSpan> spans() {
    List<ReceivedSpan> out = new ArrayList<>();
    for (ExportTraceServiceRequest r : traces) {
      for (ResourceSpans rs : r.getResourceSpansList()) {
        rs.getScopeSpansList().forEach(ss -> ss.getSpansList().forEach(s -> out.add(new ReceivedSpan(rs.getResource(), s))));
      }
    }
    return out;
  }

  /** A received span and when its request arrived (Unix epoch ns). */
  public record Arrived(ReceivedSpan span, long arrivedEpochNanos) {}

  /** Every span received so far with its arrival time. */
  public List<Arrived> spansArrived() {
    List<Arrived> out = new ArrayList<>();
    synchronized (traces) {
      for (int i = 0; i < traces.size(); i++) {
        long at = arrivals.get(i);
        for (ResourceSpans rs : traces.get(i).getResourceSpansList()) {
          rs.getScopeSpansList().forEach(ss -> ss.getSpansList().forEach(s -> out.add(new Arrived(new ReceivedSpan(rs.getResource(), s), at))));
        }
      }
    }
    return out;
  }

  public List<ReceivedMetric> metrics() {
    List<ReceivedMetric> out = new ArrayList<>();
    for (ExportMetricsServiceRequest r : metrics) {
      for (ResourceMetrics rm : r.getResourceMetricsList()) {
        rm.getScopeMetricsList().forEach(sm -> sm.getMetricsList().forEach(m -> out.add(new ReceivedMetric(rm.getResource(), m))));
      }
    }
    return out;
  }

  static Map<String, String> attrs(List<io.opentelemetry.proto.common.v1.KeyValue> kvs) {
    Map<String, String> m = new java.util.TreeMap<>();
    kvs.forEach(kv -> m.put(kv.getKey(), kv.getValue().hasStringValue() ? kv.getValue().getStringValue()
        : String.valueOf(kv.getValue().getIntValue())));
    return m;
  }

  /** Waits (bounded) until {@code condition} holds; false when the time ran out. */
  static boolean await(long timeoutMillis, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(20);
    }
    return true;
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
  }
}
