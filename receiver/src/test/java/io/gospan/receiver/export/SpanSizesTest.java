package io.gospan.receiver.export;

import io.gospan.receiver.app.PipelineBuilder;
import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The in-memory export queue's bound is an estimate of the queued spans' heap: it must not be
 * below what gospan's spans really hold (measured: the heap retained by 20,000 assembled spans,
 * after full GCs), nor absurdly above it.
 */
class SpanSizesTest {

  static final class Keeper implements SpanExporter {
    final List<SpanData> kept = new ArrayList<>();

    @Override
    public synchronized CompletableResultCode export(Collection<SpanData> spans) {
      kept.addAll(spans);
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

  static long usedHeapAfterGc() throws InterruptedException {
    var mem = ManagementFactory.getMemoryMXBean();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(50);
      used = Math.min(used, mem.getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  @Test
  void theEstimateIsAnUpperBoundOfTheHeapAQueuedSpanHolds() throws Exception {
    int calls = 10_000;
    Keeper keeper = new Keeper();
    List<SpanData> spans;
    try (Pipeline p = PipelineBuilder.create(ConfigLoader.parse(
            "exporter: {batch: {max_queue_size: 32768, max_queue_bytes: 256MiB, max_export_batch_size: 4096}, queue: {max_bytes: 0}}\n"
                + "metrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n", "t", Map.of()))
        .spanExporter(keeper).processMetadata(new FakeMetadata()).build()) {
      Events conn = new Events(40000);
      for (int i = 0; i < calls; i++) {
        OtlpGrpcExportIT.unaryCall(p, conn, 2 * i + 1, i % 7 == 0 ? 13 : 0);
      }
      assertThat(p.flush().join(30, TimeUnit.SECONDS).isSuccess()).isTrue();
    }
    synchronized (keeper) {
      spans = new ArrayList<>(keeper.kept);
      keeper.kept.clear();
    }
    assertThat(spans).hasSize(2 * calls);
    long withSpans = usedHeapAfterGc();
    long estimate = SpanSizes.estimate(spans);
    int n = spans.size();
    spans = null;
    long without = usedHeapAfterGc();
    long measured = withSpans - without;
    System.out.printf("%d spans: %d bytes retained (%d per span), estimate %d (%d per span)%n",
        n, measured, measured / n, estimate, estimate / n);
    assertThat(estimate).as("estimate vs measured %d", measured).isGreaterThanOrEqualTo(measured);
    assertThat(estimate).as("not absurdly conservative").isLessThan(3 * measured);
  }
}
