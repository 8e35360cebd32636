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
 * An OTLP/gRPC trace receiver on 127.0.0.1 that only counts the spans it is sent (grpc-java with
 * the OTLP proto service): the production export path for the load benchmark, with the
 * receiver's own CPU in the benchmark's JVM, not the sidecar's.
 */
final class CountingOtlpReceiver implements AutoCloseable {
  final LongAdder spans = new LongAdder();
  private final Server server;

  CountingOtlpReceiver() throws IOException {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                new TraceServiceGrpc.TraceServiceImplBase() {
                  @Override
                  public void export(ExportTraceServiceRequest request, StreamObserver<ExportTraceServiceResponse> response) {
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
  }

  /** {@code http://127.0.0.1:<port>}. */
  String endpoint() {
    return "http://127.0.0.1:" + server.getPort();
  }

  /**
   * Runs a receiver alone (for {@code scripts/profile-sidecar.sh}): prints its endpoint on the first
   * line, then the spans counted so far each second, until killed.
   */
  public static void main(String[] args) throws Exception {
    CountingOtlpReceiver r = new CountingOtlpReceiver();
    System.out.println(r.endpoint());
    System.out.flush();
    while (true) {
      Thread.sleep(1000);
      System.out.println("spans " + r.spans.sum());
      System.out.flush();
    }
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow().awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
  }
}
