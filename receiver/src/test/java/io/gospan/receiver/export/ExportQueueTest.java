package io.gospan.receiver.export;

import static io.gospan.receiver.export.OtlpGrpcReceiver.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.exporter.internal.FailedExportException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.GrpcResponse;
import io.opentelemetry.sdk.common.export.GrpcStatusCode;
import io.opentelemetry.sdk.testing.trace.TestSpanData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The export queue with a collector double that is down, refuses, or takes: order, bound, drops by reason. */
class ExportQueueTest {
  @TempDir Path dir;

  /** A collector double: down (no answer: failure without a response) until {@code up}; records what it took. */
  static final class Collector implements SpanExporter {
    final List<Long> received = new CopyOnWriteArrayList<>();
    volatile boolean up = true;
    volatile GrpcStatusCode refuseWith;

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      if (refuseWith != null) {
        GrpcStatusCode code = refuseWith;
        return CompletableResultCode.ofExceptionalFailure(FailedExportException.grpcFailedWithResponse(new GrpcResponse() {
          @Override
          public GrpcStatusCode getStatusCode() {
            return code;
          }

          @Override
          public String getStatusDescription() {
            return "refused";
          }

          @Override
          public byte[] getResponseMessage() {
            return new byte[0];
          }
        }));
      }
      if (!up) {
        return CompletableResultCode.ofExceptionalFailure(
            FailedExportException.grpcFailedExceptionally(new java.net.ConnectException("Connection refused")));
      }
      spans.forEach(s -> received.add(s.getStartEpochNanos()));
      return CompletableResultCode.ofSuccess();
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

  /** Span {@code n} (its number is its start time), with a few attributes as gospan's spans have. */
  static SpanData span(long n) {
    return TestSpanData.builder()
        .setName("helloworld.Greeter/SayHello")
        .setKind(SpanKind.CLIENT)
        .setSpanContext(SpanContext.create(
            String.format("%032x", n + 1), String.format("%016x", n + 1), TraceFlags.getSampled(), TraceState.getDefault()))
        .setStartEpochNanos(n)
        .setEndEpochNanos(n + 1)
        .setHasEnded(true)
        .setStatus(StatusData.unset())
        .setAttributes(Attributes.builder().put("rpc.system.name", "grpc").put("rpc.method", "helloworld.Greeter/SayHello")
            .put("server.address", "greeter.example").put("rpc.response.status_code", "OK").build())
        .setTotalAttributeCount(4)
        .build();
  }

  static List<SpanData> batch(long first, int n) {
    List<SpanData> b = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      b.add(span(first + i));
    }
    return b;
  }

  static String listing(Path d) {
    StringBuilder b = new StringBuilder();
    java.io.File[] files = d.toFile().listFiles();
    java.util.Arrays.sort(files);
    for (java.io.File f : files) {
      b.append(f.getName()).append(' ').append(f.length()).append('\n');
    }
    return b.toString();
  }

  static ExportQueue memoryQueue(Collector c, long maxBytes) {
    return new ExportQueue(c, new MemoryBacklog(maxBytes), 50, 2000, MeterProvider.noop().get("t"));
  }

  @Test
  void spansDuringAnOutageAreSentInOrderOnceTheCollectorIsBack() throws Exception {
    Collector c = new Collector();
    ExportQueue q = memoryQueue(c, 1 << 20);
    assertThat(q.export(batch(0, 10)).join(5, TimeUnit.SECONDS).isSuccess()).isTrue();
    c.up = false;
    for (int i = 1; i <= 20; i++) {
      assertThat(q.export(batch(i * 10L, 10)).join(5, TimeUnit.SECONDS).isSuccess()).as("queued, not failed").isTrue();
    }
    Thread.sleep(200);
    assertThat(c.received).hasSize(10);
    assertThat(q.queuedSpans()).isEqualTo(200);
    c.up = true;
    long back = System.nanoTime();
    assertThat(await(5_000, () -> c.received.size() == 210)).isTrue();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back)).as("resumed within ~the retry interval").isLessThan(1000);
    // Direct again, after the queued ones.
    q.export(batch(210, 10)).join(5, TimeUnit.SECONDS);
    assertThat(await(5_000, () -> c.received.size() == 220)).isTrue();
    List<Long> sorted = new ArrayList<>(c.received);
    sorted.sort(null);
    assertThat(c.received).as("oldest first").containsExactlyElementsOf(sorted);
    assertThat(q.report()).isZero();
    q.shutdown();
  }

  @Test
  void beyondTheBoundTheOldestAreDroppedAndCounted() throws Exception {
    Collector c = new Collector();
    long tenSpans = SpanSizes.estimate(batch(0, 10));
    ExportQueue q = memoryQueue(c, 5 * tenSpans); // room for 5 batches of 10
    c.up = false;
    for (int i = 0; i < 12; i++) {
      q.export(batch(i * 10L, 10)).join(5, TimeUnit.SECONDS);
    }
    assertThat(await(2_000, () -> q.queuedSpans() == 50)).isTrue();
    assertThat(q.dropped(ExportQueue.Reason.QUEUE_FULL)).isEqualTo(70);
    assertThat(q.queuedBytes()).isLessThanOrEqualTo(5 * tenSpans);
    c.up = true;
    assertThat(await(5_000, () -> c.received.size() == 50)).isTrue();
    assertThat(c.received).as("the newest 50 survived").allSatisfy(n -> assertThat(n).isGreaterThanOrEqualTo(70));
    assertThat(q.report()).as("logged with the true count").isEqualTo(70);
    assertThat(q.report()).isZero();
    q.shutdown();
  }

  @Test
  void aRefusalIsNotRetried() throws Exception {
    Collector c = new Collector();
    ExportQueue q = memoryQueue(c, 1 << 20);
    c.refuseWith = GrpcStatusCode.INVALID_ARGUMENT;
    CompletableResultCode r = q.export(batch(0, 3)).join(5, TimeUnit.SECONDS);
    assertThat(r.isSuccess()).as("direct refusal fails the export (the span processor counts it)").isFalse();
    assertThat(q.queuedSpans()).isZero();
    // A queued batch refused later is dropped as refused.
    c.refuseWith = null;
    c.up = false;
    q.export(batch(10, 3)).join(5, TimeUnit.SECONDS);
    q.export(batch(20, 3)).join(5, TimeUnit.SECONDS);
    c.refuseWith = GrpcStatusCode.PERMISSION_DENIED;
    assertThat(await(5_000, () -> q.dropped(ExportQueue.Reason.REFUSED) == 6)).isTrue();
    assertThat(ExportQueue.retryable(FailedExportException.grpcFailedExceptionally(new java.io.IOException("reset")))).isTrue();
    q.shutdown();
  }

  @Test
  void anInMemoryBacklogLeftAtShutdownIsCountedAsDropped() {
    Collector c = new Collector();
    ExportQueue q = memoryQueue(c, 1 << 20);
    c.up = false;
    q.export(batch(0, 7)).join(5, TimeUnit.SECONDS);
    q.shutdown();
    assertThat(q.dropped(ExportQueue.Reason.SHUTDOWN)).isEqualTo(7);
  }

  @Test
  void aDiskBacklogSurvivesARestart() throws Exception {
    Collector c = new Collector();
    c.up = false;
    ExportQueue q = new ExportQueue(c, new DiskBacklog(dir, 1 << 20), 50, 2000, MeterProvider.noop().get("t"));
    q.export(batch(0, 10)).join(5, TimeUnit.SECONDS);
    q.export(batch(10, 10)).join(5, TimeUnit.SECONDS);
    assertThat(q.queuedSpans()).isEqualTo(20);
    q.shutdown();
    assertThat(q.dropped(ExportQueue.Reason.SHUTDOWN)).isZero();

    Collector next = new Collector();
    ExportQueue q2 = new ExportQueue(next, new DiskBacklog(dir, 1 << 20), 50, 2000, MeterProvider.noop().get("t"));
    q2.export(batch(20, 5)).join(5, TimeUnit.SECONDS); // queued behind the earlier run's spans
    assertThat(await(5_000, () -> next.received.size() == 25)).isTrue();
    List<Long> sorted = new ArrayList<>(next.received);
    sorted.sort(null);
    assertThat(next.received).containsExactlyElementsOf(sorted);
    q2.shutdown();
  }

  @Test
  void aDiskBacklogIsBoundedAndCountsWhatTheLibraryDropped() throws Exception {
    Collector c = new Collector();
    c.up = false;
    long max = 1024 * 1024; // files of 256 KiB
    ExportQueue q = new ExportQueue(c, new DiskBacklog(dir, max), 50, 2000, MeterProvider.noop().get("t"));
    int produced = 0;
    for (int i = 0; i < 2000; i++) {
      q.export(batch(i * 20L, 20)).join(5, TimeUnit.SECONDS);
      produced += 20;
      if (i % 200 == 0) {
        Thread.sleep(DiskBacklog.WRITE_MILLIS); // several files
      }
    }
    assertThat(q.queuedBytes()).as(() -> listing(dir.resolve("spans"))).isLessThanOrEqualTo(max);
    long dropped = q.dropped(ExportQueue.Reason.QUEUE_FULL);
    assertThat(dropped).isPositive();
    c.up = true;
    int total = produced;
    assertThat(await(10_000, () -> c.received.size() + q.dropped(ExportQueue.Reason.QUEUE_FULL) == total))
        .as("received %d + dropped %d == %d", c.received.size(), q.dropped(ExportQueue.Reason.QUEUE_FULL), total).isTrue();
    q.shutdown();
  }
}
