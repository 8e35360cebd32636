package io.gospan.receiver.export;

import io.gospan.receiver.metrics.SelfTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounded batching in front of a {@link SpanExporter}, the way the SDK's {@code
 * BatchSpanProcessor} does it but for finished {@link SpanData}: {@link #offer} never blocks (a
 * full queue drops the span, counted as {@code gospan.spans.dropped{reason=queue_full}}); one
 * worker thread exports a batch when {@code maxExportBatchSize} spans are queued or {@code
 * scheduleDelay} has passed; a failed export (after the exporter's own retries with backoff) drops
 * its batch, counted as {@code reason=export_failed} plus {@code gospan.export.failures}. Drops are
 * logged at most once per {@value #LOG_INTERVAL_SECONDS} s with the count since the last log.
 */
public final class BoundedSpanBatcher implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BoundedSpanBatcher.class);
  static final int LOG_INTERVAL_SECONDS = 10;

  private final SpanExporter exporter;
  private final BlockingQueue<SpanData> queue;
  private final int maxBatch;
  private final long delayNanos;
  private final long exportTimeoutMillis;
  private final Thread worker;
  private final BlockingQueue<Boolean> signal = new ArrayBlockingQueue<>(1);
  private final AtomicInteger spansNeeded = new AtomicInteger(Integer.MAX_VALUE);
  private final ConcurrentLinkedQueue<CompletableResultCode> flushRequests = new ConcurrentLinkedQueue<>();
  private volatile boolean running = true;

  private final SelfTelemetry.Counter exported;
  private final SelfTelemetry.Counter dropped;
  private final SelfTelemetry.Counter failures;
  private static final Attributes QUEUE_FULL = Attributes.of(SelfTelemetry.REASON, "queue_full");
  private static final Attributes EXPORT_FAILED = Attributes.of(SelfTelemetry.REASON, "export_failed");
  private final AtomicLong droppedSinceLog = new AtomicLong();
  private final AtomicLong lastDropLogNanos = new AtomicLong(System.nanoTime() - TimeUnit.SECONDS.toNanos(LOG_INTERVAL_SECONDS));

  /**
   * @param exportTimeout how long to wait for one export (including the exporter's retries)
   */
  public BoundedSpanBatcher(
      SpanExporter exporter,
      int maxQueueSize,
      int maxExportBatchSize,
      Duration scheduleDelay,
      Duration exportTimeout,
      SelfTelemetry telemetry) {
    this.exporter = exporter;
    this.queue = new ArrayBlockingQueue<>(maxQueueSize);
    this.maxBatch = maxExportBatchSize;
    this.delayNanos = scheduleDelay.toNanos();
    this.exportTimeoutMillis = exportTimeout.toMillis();
    this.exported = telemetry.counter(SelfTelemetry.SPANS_EXPORTED, "Spans handed to the exporter successfully");
    this.dropped = telemetry.counter(SelfTelemetry.SPANS_DROPPED, "Spans dropped before export");
    this.failures = telemetry.counter(SelfTelemetry.EXPORT_FAILURES, "Failed export calls (after retries)");
    telemetry.observeGauge("gospan.export.queue_size", "Spans waiting for export", r -> r.record(queue.size()));
    this.worker = new Thread(this::run, "gospan-span-export");
    this.worker.setDaemon(true);
    this.worker.start();
  }

  /** Queues a span for export; returns {@code false} (and counts the drop) when the queue is full. Never blocks. */
  public boolean offer(SpanData span) {
    if (!running || !queue.offer(span)) {
      dropped.increment(QUEUE_FULL);
      noteDrop(1, "export queue full");
      return false;
    }
    if (queue.size() >= spansNeeded.get()) {
      signal.offer(Boolean.TRUE);
    }
    return true;
  }

  /** Exports everything queued now; the result completes when done (or failed). */
  public CompletableResultCode flush() {
    CompletableResultCode result = new CompletableResultCode();
    if (!running) {
      return result.succeed();
    }
    flushRequests.add(result);
    signal.offer(Boolean.TRUE);
    return result;
  }

  public int queued() {
    return queue.size();
  }

  public boolean isAlive() {
    return worker.isAlive();
  }

  private void run() {
    List<SpanData> batch = new ArrayList<>(maxBatch);
    long nextExport = System.nanoTime() + delayNanos;
    while (running || !queue.isEmpty()) {
      CompletableResultCode flush = flushRequests.poll();
      if (flush != null) {
        exportEverything(batch);
        flush.succeed();
        nextExport = System.nanoTime() + delayNanos;
        continue;
      }
      queue.drainTo(batch, maxBatch - batch.size());
      long now = System.nanoTime();
      if (batch.size() >= maxBatch || (now >= nextExport && !batch.isEmpty()) || (!running && !batch.isEmpty())) {
        export(batch);
        nextExport = System.nanoTime() + delayNanos;
        continue;
      }
      if (now >= nextExport) {
        nextExport = now + delayNanos;
      }
      try {
        spansNeeded.set(maxBatch - batch.size());
        signal.poll(Math.max(nextExport - now, 0), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        running = false;
      } finally {
        spansNeeded.set(Integer.MAX_VALUE);
      }
    }
    exportEverything(batch);
    CompletableResultCode pending;
    while ((pending = flushRequests.poll()) != null) {
      pending.succeed();
    }
  }

  private void exportEverything(List<SpanData> batch) {
    do {
      queue.drainTo(batch, maxBatch - batch.size());
      if (!batch.isEmpty()) {
        export(batch);
      }
    } while (!queue.isEmpty());
  }

  private void export(List<SpanData> batch) {
    int n = batch.size();
    boolean ok;
    try {
      CompletableResultCode r = exporter.export(List.copyOf(batch));
      r.join(exportTimeoutMillis, TimeUnit.MILLISECONDS);
      ok = r.isDone() && r.isSuccess();
    } catch (RuntimeException | LinkageError e) {
      // The worker must survive whatever the exporter throws (a LinkageError means a broken
      // dependency set: log it loudly, once per drop-log interval, and keep counting drops).
      noteExporterError(e);
      ok = false;
    }
    batch.clear();
    if (ok) {
      exported.add(n);
    } else {
      failures.increment();
      dropped.add(n, EXPORT_FAILED);
      noteDrop(n, "export failed");
    }
  }

  private final AtomicLong lastErrorLogNanos = new AtomicLong(System.nanoTime() - TimeUnit.SECONDS.toNanos(LOG_INTERVAL_SECONDS));

  private void noteExporterError(Throwable e) {
    long now = System.nanoTime();
    long last = lastErrorLogNanos.get();
    if (now - last >= TimeUnit.SECONDS.toNanos(LOG_INTERVAL_SECONDS) && lastErrorLogNanos.compareAndSet(last, now)) {
      log.error("span exporter failed", e);
    }
  }

  private void noteDrop(long n, String why) {
    droppedSinceLog.addAndGet(n);
    long now = System.nanoTime();
    long last = lastDropLogNanos.get();
    if (now - last >= TimeUnit.SECONDS.toNanos(LOG_INTERVAL_SECONDS) && lastDropLogNanos.compareAndSet(last, now)) {
      long count = droppedSinceLog.getAndSet(0);
      log.warn("dropped {} span(s) since the last report ({}; counted in gospan.spans.dropped)", count, why);
    }
  }

  /** Exports what is queued (waiting up to {@code timeout}), then shuts the exporter down. */
  @Override
  public void close() {
    close(Duration.ofSeconds(10));
  }

  public void close(Duration timeout) {
    running = false;
    signal.offer(Boolean.TRUE);
    try {
      worker.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (worker.isAlive()) {
      worker.interrupt();
    }
    exporter.shutdown().join(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }
}
