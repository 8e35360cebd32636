package io.gospan.receiver.bench;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.TraceServiceGrpc;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * An OTLP trace receiver on 127.0.0.1 that only counts the spans it is sent: OTLP/gRPC (grpc-java,
 * the OTLP trace service's method with a raw-bytes marshaller) and OTLP/HTTP with protobuf bodies
 * ({@code POST /v1/traces}, the JDK's {@code com.sun.net.httpserver}): the production export paths
 * for the load benchmark, with the receiver's own CPU in the benchmark's JVM, not the sidecar's.
 *
 * <p>The spans are counted by walking the request's protobuf wire format ({@link #countSpans}), not
 * by building its message objects: the receiver stands in for a collector that would run elsewhere,
 * and on the benchmark's 2 cores its CPU is taken from the traced program: with every request
 * parsed into its message objects the receiver took 2.8–5.7 µs of CPU per span at 20,000–34,000
 * spans/s, counting off the wire format 1.2–4.3 (docs/benchmarks.md, "The benchmark's receiver
 * and warm-up").
 */
final class CountingOtlpReceiver implements AutoCloseable {
  final LongAdder spans = new LongAdder();
  /** Export requests and their serialized size (bytes), OTLP/gRPC and OTLP/HTTP together. */
  final LongAdder requests = new LongAdder();
  final LongAdder requestBytes = new LongAdder();
  /** {@link System#nanoTime} when the first request with a span came since it was last set to 0. */
  final java.util.concurrent.atomic.AtomicLong firstSpanNanos = new java.util.concurrent.atomic.AtomicLong();
  final java.util.concurrent.atomic.LongAccumulator largestRequestBytes =
      new java.util.concurrent.atomic.LongAccumulator(Math::max, 0);
  private final Server server;
  private final com.sun.net.httpserver.HttpServer http;
  /** OTLP/HTTP's handlers; shut down by {@link #close} (its threads would keep the JVM from exiting). */
  private final java.util.concurrent.ExecutorService httpThreads = java.util.concurrent.Executors.newFixedThreadPool(2);

  CountingOtlpReceiver() throws IOException {
    // the OTLP trace service's Export method, its request kept as bytes (a raw marshaller)
    MethodDescriptor<byte[], ExportTraceServiceResponse> export =
        TraceServiceGrpc.getExportMethod().toBuilder(RAW, TraceServiceGrpc.getExportMethod().getResponseMarshaller()).build();
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                ServerServiceDefinition.builder(TraceServiceGrpc.SERVICE_NAME)
                    .addMethod(export, ServerCalls.asyncUnaryCall((request, response) -> {
                      count(request);
                      response.onNext(ExportTraceServiceResponse.getDefaultInstance());
                      response.onCompleted();
                    }))
                    .build())
            .build()
            .start();
    http = com.sun.net.httpserver.HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    http.createContext("/v1/traces", exchange -> {
      try (exchange) {
        count(exchange.getRequestBody().readAllBytes());
        byte[] body = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
        exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
        exchange.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
        exchange.getResponseBody().write(body);
      }
    });
    http.setExecutor(httpThreads);
    http.start();
  }

  private void count(byte[] request) {
    requests.increment();
    requestBytes.add(request.length);
    largestRequestBytes.accumulate(request.length);
    try {
      long n = countSpans(request);
      if (n > 0) {
        firstSpanNanos.compareAndSet(0, System.nanoTime());
      }
      spans.add(n);
    } catch (IOException e) {
      throw new UncheckedIOException("not an OTLP ExportTraceServiceRequest", e);
    }
  }

  /**
   * The spans in a serialized {@code ExportTraceServiceRequest}: the number of {@code spans} (field
   * 2) of each {@code ScopeSpans} (field 2) of each {@code ResourceSpans} (field 1), read off the
   * wire format, every other field skipped (opentelemetry-proto
   * {@code collector/trace/v1/trace_service.proto}, {@code trace/v1/trace.proto}).
   *
   * @throws IOException when the bytes are not a well-formed protobuf message
   */
  static long countSpans(byte[] request) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(request);
    long n = 0;
    for (int tag; (tag = in.readTag()) != 0; ) {
      if (!isMessage(tag, 1)) {
        in.skipField(tag);
        continue;
      }
      int resourceSpans = in.pushLimit(in.readRawVarint32());
      for (int rt; (rt = in.readTag()) != 0; ) {
        if (!isMessage(rt, 2)) {
          in.skipField(rt);
          continue;
        }
        int scopeSpans = in.pushLimit(in.readRawVarint32());
        for (int st; (st = in.readTag()) != 0; ) {
          if (isMessage(st, 2)) {
            n++;
          }
          in.skipField(st);
        }
        in.popLimit(scopeSpans);
      }
      in.popLimit(resourceSpans);
    }
    return n;
  }

  /** Whether {@code tag} introduces field {@code field} as a length-delimited value (a message). */
  private static boolean isMessage(int tag, int field) {
    return WireFormat.getTagFieldNumber(tag) == field && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED;
  }

  /** A request kept as its serialized bytes. */
  private static final MethodDescriptor.Marshaller<byte[]> RAW =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

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
    httpThreads.shutdownNow();
    server.shutdownNow().awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
  }
}
