package io.gospan.receiver.export;

import io.gospan.receiver.app.PipelineBuilder;
import static io.gospan.receiver.export.OtlpGrpcReceiver.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collector (a real OTLP/gRPC server, {@link OtlpGrpcReceiver}) goes away while calls flow
 * and comes back on the same port: every span made during the outage arrives, delivery resumes
 * within 2 s of its return (from the moment its port is bound again to the moment its handler
 * gets the first export), and no try of the export queue that started after the return failed; with a small bound, what did not arrive is exactly what was counted as
 * dropped; with the disk queue, spans outlive a restart of the pipeline.
 *
 * <p>The outage lasts {@code -Dgospan.outage.seconds} (default 10; docs/reliability.md has a 60 s
 * run) at about 100 calls (200 spans) per second.
 */
class CollectorOutageIT {
  static final int OUTAGE_SECONDS = Integer.getInteger("gospan.outage.seconds", 10);
  @TempDir Path dir;

  static GospanConfig config(int port, String queue) {
    return ConfigLoader.parse(
        """
        exporter:
          otlp: {endpoint: "http://127.0.0.1:%d", timeout: 2s}
          batch: {schedule_delay: 100ms, max_queue_size: 4096, max_export_batch_size: 256}
          queue: %s
        streams: {link_wait: 300ms}
        metrics: {enabled: false}
        telemetry: {http: {enabled: false}}
        """.formatted(port, queue),
        "it",
        Map.of());
  }

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }

  /** Makes unary calls (2 spans each) at ~100/s on its own thread until stopped. */
  static final class Caller implements AutoCloseable {
    final AtomicInteger calls = new AtomicInteger();
    private final Thread thread;
    private volatile boolean stop;

    Caller(Pipeline p) {
      Events conn = new Events(40000);
      thread = new Thread(() -> {
        int stream = 1;
        while (!stop) {
          OtlpGrpcExportIT.unaryCall(p, conn, stream, 0);
          stream += 2;
          calls.incrementAndGet();
          try {
            Thread.sleep(10);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "caller");
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      stop = true;
      thread.join();
    }
  }

  /**
   * The export queue's tries around the collector's return at {@code back}: the try that delivered
   * first, how long after the return it started and how long it took, whether a try was in flight
   * at the return, and how many tries that started after the return failed before it.
   */
  record Delivery(ExportQueue.Attempt delivering, boolean inFlightAtReturn, int failedAfterReturn, long back) {
    static Delivery of(java.util.List<ExportQueue.Attempt> tries, long back) {
      ExportQueue.Attempt delivering = null;
      boolean inFlight = false;
      int failed = 0;
      for (ExportQueue.Attempt a : tries) {
        if (a.endNanos() < back) {
          continue; // before the return
        }
        inFlight |= a.startNanos() < back;
        if (a.left()) {
          delivering = a;
          break;
        }
        if (a.startNanos() >= back) {
          failed++;
        }
      }
      return new Delivery(delivering, inFlight, failed, back);
    }

    @Override
    public String toString() {
      if (delivering == null) {
        return "no try delivered";
      }
      return String.format("the delivering try started %d ms after the return and took %d ms; a try in flight at the return: %s;"
              + " failed tries after the return: %d", TimeUnit.NANOSECONDS.toMillis(delivering.startNanos() - back),
          TimeUnit.NANOSECONDS.toMillis(delivering.endNanos() - delivering.startNanos()), inFlightAtReturn ? "yes" : "no",
          failedAfterReturn);
    }
  }

  static Set<ByteString> spanIds(OtlpGrpcReceiver... receivers) {
    Set<ByteString> ids = new HashSet<>();
    for (OtlpGrpcReceiver r : receivers) {
      r.spans().forEach(s -> ids.add(s.span().getSpanId()));
    }
    return ids;
  }

  @Test
  void everySpanOfAnOutageArrivesAndDeliveryResumesWithinTwoSeconds() throws Exception {
    int port = freePort();
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    ProcessedSpans processed = new ProcessedSpans(metrics);
    OtlpGrpcReceiver before = OtlpGrpcReceiver.start(port);
    OtlpGrpcReceiver[] after = {null};
    try (Pipeline p = PipelineBuilder.create(config(port, "{max_bytes: 32MiB}"))
        .processMetadata(new FakeMetadata()).metricReader(metrics).build()) {
      Caller caller = new Caller(p);
      Thread.sleep(2000);
      before.close(); // the collector goes away
      int atOutage = caller.calls.get();
      Thread.sleep(TimeUnit.SECONDS.toMillis(OUTAGE_SECONDS));
      long queued = p.exportQueue().orElseThrow().queuedSpans();
      assertThat(queued).as("spans wait in the queue").isPositive();
      after[0] = OtlpGrpcReceiver.start(port); // and comes back on the same port
      // start() returns with the port bound and listening: the kernel accepts connections from here.
      long back = System.nanoTime();
      assertThat(await(5_000, () -> after[0].firstTraceNanos() != 0)).isTrue();
      // Measured where the collector got it (its handler), not when this thread next looked.
      long resumedMillis = TimeUnit.NANOSECONDS.toMillis(after[0].firstTraceNanos() - back);
      assertThat(await(5_000, () -> Delivery.of(p.exportQueue().orElseThrow().attempts(), back).delivering() != null)).isTrue();
      Delivery d = Delivery.of(p.exportQueue().orElseThrow().attempts(), back); // the delivering try has its answer
      int duringOutage = caller.calls.get() - atOutage;
      Thread.sleep(2000);
      caller.close();
      int expected = 2 * caller.calls.get();
      boolean all = await(30_000, () -> spanIds(before, after[0]).size() == expected);
      long queueDrops = p.exportQueue().orElseThrow().dropped(ExportQueue.Reason.QUEUE_FULL) + p.exportQueue().orElseThrow().dropped(ExportQueue.Reason.REFUSED);
      System.out.printf(
          "outage %d s: %d calls during it, %d spans queued at its end; first delivery %d ms after the collector's return (%s); %d of %d spans arrived%n",
          OUTAGE_SECONDS, duringOutage, queued, resumedMillis, d, spanIds(before, after[0]).size(), expected);
      assertThat(all).as("every span arrived: %d of %d", spanIds(before, after[0]).size(), expected).isTrue();
      // How: no try that started after the return failed before the one that delivered (grpc-java's
      // reconnect backoff did not hold the channel back), whatever the machine's load.
      assertThat(d.failedAfterReturn).as("tries that started after the return and failed: " + d).isZero();
      assertThat(resumedMillis).as("delivery resumed within 2 s of the collector's return: " + d).isLessThan(2000);
      assertThat(queueDrops).isZero();
      assertThat(processed.exportFailed() + processed.queueFull()).as("nothing lost in the span processor").isZero();
    } finally {
      if (after[0] != null) {
        after[0].close();
      }
    }
  }

  /** An OTLP/HTTP collector (the JDK's HTTP server) on a fixed port, that can be stopped and started again. */
  static final class HttpCollector implements AutoCloseable {
    final Set<ByteString> spanIds = java.util.concurrent.ConcurrentHashMap.newKeySet();
    final java.util.concurrent.atomic.AtomicInteger requests = new java.util.concurrent.atomic.AtomicInteger();
    /** {@code System.nanoTime()} of the first request since the last {@link #start}, 0 before. */
    final java.util.concurrent.atomic.AtomicLong firstRequestNanos = new java.util.concurrent.atomic.AtomicLong();
    private final int port;
    private com.sun.net.httpserver.HttpServer server;

    HttpCollector(int port) {
      this.port = port;
    }

    void start() throws java.io.IOException {
      firstRequestNanos.set(0);
      server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", port), 16);
      server.createContext("/v1/traces", ex -> {
        firstRequestNanos.compareAndSet(0, System.nanoTime());
        var req = io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest.parseFrom(ex.getRequestBody().readAllBytes());
        req.getResourceSpansList().forEach(rs -> rs.getScopeSpansList().forEach(ss -> ss.getSpansList().forEach(sp -> spanIds.add(sp.getSpanId()))));
        requests.incrementAndGet();
        byte[] body = io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse.getDefaultInstance().toByteArray();
        ex.getResponseHeaders().set("Content-Type", "application/x-protobuf");
        ex.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
        ex.getResponseBody().write(body);
        ex.close();
      });
      server.start();
    }

    void stop() {
      server.stop(0);
    }

    @Override
    public void close() {
      stop();
    }
  }

  @Test
  void overOtlpHttpToo() throws Exception {
    int port = freePort();
    HttpCollector collector = new HttpCollector(port);
    collector.start();
    GospanConfig config = ConfigLoader.parse(
        """
        exporter:
          otlp: {protocol: http/protobuf, endpoint: "http://127.0.0.1:%d", timeout: 2s}
          batch: {schedule_delay: 100ms, max_queue_size: 4096, max_export_batch_size: 256}
        streams: {link_wait: 300ms}
        metrics: {enabled: false}
        telemetry: {http: {enabled: false}}
        """.formatted(port), "it", Map.of());
    try (collector; Pipeline p = PipelineBuilder.create(config).processMetadata(new FakeMetadata()).build()) {
      Caller caller = new Caller(p);
      Thread.sleep(2000);
      collector.stop();
      Thread.sleep(5000);
      assertThat(p.exportQueue().orElseThrow().queuedSpans()).as("spans wait in the queue").isPositive();
      collector.start(); // bound and listening when it returns
      long back = System.nanoTime();
      assertThat(await(5_000, () -> collector.firstRequestNanos.get() != 0)).isTrue();
      long resumedMillis = TimeUnit.NANOSECONDS.toMillis(collector.firstRequestNanos.get() - back);
      assertThat(await(5_000, () -> Delivery.of(p.exportQueue().orElseThrow().attempts(), back).delivering() != null)).isTrue();
      Delivery d = Delivery.of(p.exportQueue().orElseThrow().attempts(), back); // the delivering try has its answer
      Thread.sleep(1000);
      caller.close();
      int expected = 2 * caller.calls.get();
      assertThat(await(30_000, () -> collector.spanIds.size() == expected))
          .as("every span arrived: %d of %d", collector.spanIds.size(), expected).isTrue();
      System.out.printf("OTLP/HTTP outage 5 s: first delivery %d ms after the collector's return (%s); %d spans%n",
          resumedMillis, d, expected);
      assertThat(d.failedAfterReturn).as("tries that started after the return and failed: " + d).isZero();
      assertThat(resumedMillis).as("delivery resumed within 2 s of the collector's return: " + d).isLessThan(2000);
    }
  }

  @Test
  void beyondTheBoundWhatDidNotArriveIsWhatWasCounted() throws Exception {
    int port = freePort();
    OtlpGrpcReceiver[] receiver = {null};
    try (Pipeline p = PipelineBuilder.create(config(port, "{max_bytes: 256KiB}")).processMetadata(new FakeMetadata()).build()) {
      Caller caller = new Caller(p); // the collector is down from the start
      Thread.sleep(5000);
      caller.close();
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
      ExportQueue q = p.exportQueue().orElseThrow();
      assertThat(q.queuedBytes()).as("within the bound").isLessThanOrEqualTo(256 * 1024);
      long dropped = q.dropped(ExportQueue.Reason.QUEUE_FULL);
      assertThat(dropped).as("the bound was reached").isPositive();
      receiver[0] = OtlpGrpcReceiver.start(port);
      int produced = 2 * caller.calls.get();
      assertThat(await(20_000, () -> spanIds(receiver[0]).size() + dropped == produced))
          .as("arrived %d + dropped %d == produced %d", spanIds(receiver[0]).size(), dropped, produced).isTrue();
      assertThat(p.reportDrops()).as("logged with the true count").isEqualTo(dropped);
    } finally {
      if (receiver[0] != null) {
        receiver[0].close();
      }
    }
  }

  @Test
  void aCollectorThatNeverAnswersFillsTheQueueUpToItsBoundOnly() throws Exception {
    try (ServerSocket silent = new ServerSocket(0)) { // accepts connections (backlog), never answers
      try (Pipeline p = PipelineBuilder.create(config(silent.getLocalPort(), "{max_bytes: 128KiB}"))
          .processMetadata(new FakeMetadata()).build()) {
        Caller caller = new Caller(p);
        Thread.sleep(6000);
        caller.close();
        ExportQueue q = p.exportQueue().orElseThrow();
        assertThat(q.queuedBytes()).isLessThanOrEqualTo(128 * 1024);
        assertThat(q.dropped(ExportQueue.Reason.QUEUE_FULL)).isPositive();
        assertThat(q.queuedSpans() + q.dropped(ExportQueue.Reason.QUEUE_FULL))
            .as("every span is either waiting or counted").isLessThanOrEqualTo(2L * caller.calls.get())
            .isGreaterThanOrEqualTo(2L * caller.calls.get() - 4096); // the span processor's queue may still hold some
      }
    }
  }

  @Test
  void theDiskQueueOutlivesARestartOfGospan() throws Exception {
    int port = freePort();
    String queue = "{max_bytes: 16MiB, directory: \"" + dir + "\"}";
    int produced;
    try (Pipeline p = PipelineBuilder.create(config(port, queue)).processMetadata(new FakeMetadata()).build()) {
      Caller caller = new Caller(p); // the collector is down
      Thread.sleep(3000);
      caller.close();
      produced = 2 * caller.calls.get();
    } // close: flushes into the queue, which stays on disk
    assertThat(dir.resolve("spans").toFile().list()).as("queue files").isNotEmpty();
    try (OtlpGrpcReceiver receiver = OtlpGrpcReceiver.start(port);
        Pipeline p = PipelineBuilder.create(config(port, queue)).processMetadata(new FakeMetadata()).build()) {
      int total = produced;
      assertThat(await(20_000, () -> spanIds(receiver).size() == total))
          .as("after the restart %d of %d spans arrived", spanIds(receiver).size(), total).isTrue();
      assertThat(await(5_000, () -> p.exportQueue().orElseThrow().queuedSpans() == 0)).isTrue();
      // the sender deletes a batch from its file once the collector answered, a moment after the
      // receiver has it: closing in that moment would leave the batch for the next start (sent twice)
      assertThat(await(5_000, () -> dir.resolve("spans").toFile().list().length == 0))
          .as("sent files are deleted: %s", java.util.Arrays.toString(dir.resolve("spans").toFile().list())).isTrue();
    }
    assertThat(dir.resolve("spans").toFile().list()).as("nothing written at the close").isEmpty();
  }
}
