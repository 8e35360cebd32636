package io.gospan.receiver.bench;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.TraceServiceGrpc;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * An OTLP trace receiver on 127.0.0.1 that only counts the spans it is sent: OTLP/gRPC (grpc-java
 * with the OTLP proto service) and OTLP/HTTP with protobuf bodies ({@code POST /v1/traces}, the
 * JDK's {@code com.sun.net.httpserver}): the production export paths for the load benchmark, with
 * the receiver's own CPU in the benchmark's JVM, not the sidecar's.
 */
final class CountingOtlpReceiver implements AutoCloseable {
  final LongAdder spans = new LongAdder();
  /** Export requests and their serialized size (bytes), OTLP/gRPC and OTLP/HTTP together. */
  final LongAdder requests = new LongAdder();
  final LongAdder requestBytes = new LongAdder();
  final java.util.concurrent.atomic.LongAccumulator largestRequestBytes =
      new java.util.concurrent.atomic.LongAccumulator(Math::max, 0);
  private final Server server;
  private final com.sun.net.httpserver.HttpServer http;

  CountingOtlpReceiver() throws IOException {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                new TraceServiceGrpc.TraceServiceImplBase() {
                  @Override
                  public void export(ExportTraceServiceRequest request, StreamObserver<ExportTraceServiceResponse> response) {
                    count(request);
                    for (ResourceSpans rs : request.getResourceSpansList()) {
                      for (ScopeSpans ss : rs.getScopeSpansList()) {
                        spans.add(ss.getSpansCount());
                      }
                    }
                    response.onNext(ExportTraceServiceResponse.getDefaultInstance());
                    response.onCompleted();
                  }
                })
            .build()
            .start();
    http = com.sun.net.httpserver.HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    http.createContext("/v1/traces", exchange -> {
      try (exchange) {
        ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(exchange.getRequestBody());
        count(request);
        for (ResourceSpans rs : request.getResourceSpansList()) {
          for (ScopeSpans ss : rs.getScopeSpansList()) {
            spans.add(ss.getSpansCount());
          }
        }
        byte[] body = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
        exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
        exchange.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
        exchange.getResponseBody().write(body);
      }
    });
    http.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(2));
    http.start();
  }

  private void count(ExportTraceServiceRequest request) {
    int size = request.getSerializedSize();
    requests.increment();
    requestBytes.add(size);
    largestRequestBytes.accumulate(size);
  }

  /** Requests, bytes per span and the largest request so far, one line. */
  String sizes() {
    long n = spans.sum();
    return String.format("%d export requests, %.0f bytes per span, the largest %d bytes", requests.sum(),
        n == 0 ? 0.0 : requestBytes.sum() / (double) n, largestRequestBytes.get());
  }

  /** {@code http://127.0.0.1:<port>} of OTLP/HTTP (append {@code /v1/traces}). */
  String httpEndpoint() {
    return "http://127.0.0.1:" + http.getAddress().getPort();
  }

  /** {@code http://127.0.0.1:<port>}. */
  String endpoint() {
    return "http://127.0.0.1:" + server.getPort();
  }

  /**
   * Runs a receiver alone (for {@code scripts/profile-sidecar.sh}): prints its OTLP/gRPC and
   * OTLP/HTTP endpoints on the first line, then the spans counted so far each second, until killed.
   */
  public static void main(String[] args) throws Exception {
    CountingOtlpReceiver r = new CountingOtlpReceiver();
    System.out.println(r.endpoint() + " " + r.httpEndpoint());
    System.out.flush();
    while (true) {
      Thread.sleep(1000);
      System.out.println("spans " + r.spans.sum());
      System.out.flush();
    }
  }

  @Override
  public void close() throws InterruptedException {
    http.stop(0);
    server.shutdownNow().awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
  }
}
