package io.gospan.receiver.export;

import io.gospan.receiver.config.GospanConfig.QueueConfig;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.exporter.internal.FailedExportException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.GrpcStatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.nio.file.Path;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The export queue between the SDK's {@code BatchSpanProcessor} and the OTLP span exporter, as the
 * OpenTelemetry Collector's exporter helper has a sending queue: while the collector answers, a
 * batch goes straight through; when an export fails for a reason worth retrying (no connection, no
 * answer in time, gRPC {@code UNAVAILABLE}, {@code RESOURCE_EXHAUSTED}, …, HTTP 429/502/503/504:
 * the OTLP specification's retryable answers), the batch and every later one wait in a {@link
 * Backlog} (in memory, or on disk with {@code exporter.queue.directory}) and one thread sends them,
 * oldest first, trying the oldest again every {@code exporter.queue.retry_interval}. Once the
 * backlog is empty, batches go straight through again.
 *
 * <p>Retrying here replaces the SDK exporter's own retries (it is built with none): an SDK retry
 * loop sleeps up to its maximum backoff between attempts, and between them grpc-java's channel
 * stays in its reconnect backoff (1 s growing by 1.6× up to 120 s, grpc-java {@code
 * ExponentialBackoffPolicy}), failing every call at once without connecting; so before each try
 * the channel's backoff is cut short ({@link Reconnectable}, {@code
 * ManagedChannel.resetConnectBackoff}) and delivery resumes within about one retry interval of the
 * collector's return.
 *
 * <p>Drops, each counted in {@value #DROPPED}{@code {reason}} and logged with the true count by
 * {@link #report}: {@code queue_full} (the oldest batches, to make room within {@code
 * exporter.queue.max_bytes}), {@code refused} (the collector answered with a non-retryable error
 * for a queued batch; a batch refused on the direct path fails the export and is counted by the
 * span processor as before), {@code shutdown} (an in-memory backlog the collector did not take
 * within {@value #SHUTDOWN_DRAIN_SECONDS} s of shutdown). A disk backlog is kept at shutdown and
 * sent by the next run.
 */
final class ExportQueue implements SpanExporter {
  private static final Logger log = LoggerFactory.getLogger(ExportQueue.class);
  /** Counter: spans the export queue dropped, by {@code reason}. */
  static final String DROPPED = "gospan.export.queue.dropped";
  /** Gauge: spans waiting in the export queue. */
  static final String QUEUED_SPANS = "gospan.export.queue.spans";
  /** Gauge: bytes the waiting spans take (estimated in memory; file sizes on disk). */
  static final String QUEUED_BYTES = "gospan.export.queue.bytes";
  static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
  static final long SHUTDOWN_DRAIN_SECONDS = 5;

  /** gRPC codes the OTLP specification lists as retryable (exporter spec, "OTLP/gRPC Throttling"). */
  private static final Set<GrpcStatusCode> RETRYABLE_GRPC =
      EnumSet.of(
          GrpcStatusCode.CANCELLED,
          GrpcStatusCode.DEADLINE_EXCEEDED,
          GrpcStatusCode.RESOURCE_EXHAUSTED,
          GrpcStatusCode.ABORTED,
          GrpcStatusCode.OUT_OF_RANGE,
          GrpcStatusCode.UNAVAILABLE,
          GrpcStatusCode.DATA_LOSS);

  /** Drop reasons, the values of {@link #REASON}. */
  enum Reason {
    QUEUE_FULL("queue_full"),
    REFUSED("refused"),
    SHUTDOWN("shutdown");

    final String value;

    Reason(String value) {
      this.value = value;
    }
  }

  /**
   * One try of the sender at the oldest waiting batch: when it started and ended ({@code
   * System.nanoTime()}) and whether the batch left the queue (sent, or refused for good).
   */
  record Attempt(long startNanos, long endNanos, boolean left) {}

  /** The sender's last {@value #ATTEMPTS_KEPT} tries, oldest first (what tests measure delivery by). */
  static final int ATTEMPTS_KEPT = 64;

  /** An exporter whose transport can be told to reconnect now (a gRPC channel in its reconnect backoff). */
  interface Reconnectable {
    void reconnectNow();
  }

  private final SpanExporter delegate;
  private final Backlog backlog;
  private final long retryMillis;
  private final long attemptTimeoutMillis;
  private final Object lock = new Object();
  private final AtomicLong[] droppedSinceReport = {new AtomicLong(), new AtomicLong(), new AtomicLong()};
  private final AtomicLong[] droppedTotal = {new AtomicLong(), new AtomicLong(), new AtomicLong()};
  private final LongCounter droppedCounter;
  private final Thread sender;
  private final java.util.ArrayDeque<Attempt> attempts = new java.util.ArrayDeque<>(); // guarded by itself
  private volatile String lastError;
  private volatile boolean closed;
  /** Guarded by {@link #lock}: batches go to the backlog, not straight through. */
  private boolean queuing;
  private long queuingSinceNanos;

  /**
   * @param attemptTimeoutMillis how long one export may take (the exporter's timeout plus margin)
   * @throws io.gospan.receiver.config.ConfigException the queue's directory cannot be used
   */
  static ExportQueue create(QueueConfig q, SpanExporter delegate, long attemptTimeoutMillis, Meter meter) {
    Backlog backlog =
        q.directory() != null ? new DiskBacklog(Path.of(q.directory()), q.maxBytes()) : new MemoryBacklog(q.maxBytes());
    return new ExportQueue(delegate, backlog, q.retryInterval().toMillis(), attemptTimeoutMillis, meter);
  }

  ExportQueue(SpanExporter delegate, Backlog backlog, long retryMillis, long attemptTimeoutMillis, Meter meter) {
    this.delegate = delegate;
    this.backlog = backlog;
    this.retryMillis = retryMillis;
    this.attemptTimeoutMillis = attemptTimeoutMillis;
    this.droppedCounter =
        meter.counterBuilder(DROPPED).setUnit("{span}")
            .setDescription("Spans the export queue dropped: queue_full (oldest, for room), refused (by the collector), shutdown")
            .build();
    meter.gaugeBuilder(QUEUED_SPANS).ofLongs().setUnit("{span}").setDescription("Spans waiting in the export queue")
        .buildWithCallback(m -> m.record(queuedSpans()));
    meter.gaugeBuilder(QUEUED_BYTES).ofLongs().setUnit("By")
        .setDescription("Bytes of the spans waiting in the export queue (estimated in memory, file sizes on disk)")
        .buildWithCallback(m -> m.record(queuedBytes()));
    synchronized (lock) {
      queuing = !backlog.isEmpty(); // an earlier run's spans go first
      queuingSinceNanos = System.nanoTime();
    }
    this.sender = new Thread(this::sendLoop, "gospan-export-queue");
    sender.setDaemon(true);
    sender.start();
  }

  // ------------------------------------------------------------------------------ SpanExporter

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    List<SpanData> batch = List.copyOf(spans); // the processor reuses its list once the export completes
    if (batch.isEmpty()) {
      return CompletableResultCode.ofSuccess();
    }
    synchronized (lock) {
      if (queuing) {
        store(batch);
        return CompletableResultCode.ofSuccess();
      }
    }
    CompletableResultCode r = exportNow(batch);
    CompletableResultCode out = new CompletableResultCode();
    r.whenComplete(() -> {
      if (r.isSuccess()) {
        out.succeed();
        return;
      }
      Throwable t = r.getFailureThrowable();
      if (!retryable(t)) {
        if (t != null) {
          out.failExceptionally(t);
        } else {
          out.fail();
        }
        return;
      }
      synchronized (lock) {
        if (!queuing) {
          queuing = true;
          queuingSinceNanos = System.nanoTime();
          log.warn("the collector does not take spans ({}); queuing them ({}, bounded by exporter.queue.max_bytes) until it does",
              describe(t), backlog.where());
        }
        store(batch);
      }
      out.succeed();
    });
    return out;
  }

  @Override
  public CompletableResultCode flush() {
    return delegate.flush();
  }

  /**
   * Stops the sender; an in-memory backlog is sent for at most {@value #SHUTDOWN_DRAIN_SECONDS} s
   * and what is left is dropped (counted, logged); a disk backlog stays for the next run.
   */
  @Override
  public CompletableResultCode shutdown() {
    if (closed) {
      return CompletableResultCode.ofSuccess();
    }
    closed = true;
    sender.interrupt();
    try {
      sender.join(attemptTimeoutMillis + 1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (lock) {
      if (!backlog.durable()) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SHUTDOWN_DRAIN_SECONDS);
        long left;
        while (!backlog.isEmpty() && (left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())) > 0
            && attempt(Math.min(left, attemptTimeoutMillis))) {
          // sent one batch; go on while the collector takes them
        }
        long unsent = backlog.spans();
        while (!backlog.isEmpty()) {
          backlog.peek();
          backlog.remove();
        }
        if (unsent > 0) {
          drop(Reason.SHUTDOWN, unsent);
        }
      } else if (!backlog.isEmpty()) {
        log.info("export queue: {} span(s) ({} bytes) stay in {} for the next start", backlog.spans(), backlog.bytes(), backlog.where());
      }
      report();
      backlog.close();
    }
    return delegate.shutdown();
  }

  @Override
  public String toString() {
    return "ExportQueue{" + backlog.where() + ", " + delegate + "}";
  }

  // ------------------------------------------------------------------------------ drops

  /**
   * Logs the spans dropped since the last call (one line, by reason, with the queue's state);
   * returns their number.
   */
  long report() {
    long full = droppedSinceReport[0].getAndSet(0);
    long refused = droppedSinceReport[1].getAndSet(0);
    long shutdown = droppedSinceReport[2].getAndSet(0);
    long all = full + refused + shutdown;
    if (all > 0) {
      String why = lastError;
      log.warn(
          "export queue dropped {} span(s) since the last report: {} queue_full, {} refused, {} shutdown; {} span(s) ({} bytes) waiting{}"
              + " (counted in " + DROPPED + ")",
          all, full, refused, shutdown, queuedSpans(), queuedBytes(), why != null ? "; last error: " + why : "");
    }
    return all;
  }

  /** Spans dropped since start for {@code reason}. */
  long dropped(Reason reason) {
    return droppedTotal[reason.ordinal()].get();
  }

  long queuedSpans() {
    synchronized (lock) {
      return backlog.spans();
    }
  }

  long queuedBytes() {
    synchronized (lock) {
      return backlog.bytes();
    }
  }

  private void drop(Reason reason, long n) {
    if (n <= 0) {
      return;
    }
    droppedSinceReport[reason.ordinal()].addAndGet(n);
    droppedTotal[reason.ordinal()].addAndGet(n);
    droppedCounter.add(n, Attributes.of(REASON, reason.value));
  }

  // ------------------------------------------------------------------------------ internals

  /** Under {@link #lock}. */
  private void store(List<SpanData> batch) {
    drop(Reason.QUEUE_FULL, backlog.offer(batch));
    lock.notifyAll();
  }

  private CompletableResultCode exportNow(List<SpanData> batch) {
    try {
      return delegate.export(batch);
    } catch (RuntimeException | LinkageError e) {
      return CompletableResultCode.ofExceptionalFailure(e);
    }
  }

  private void sendLoop() {
    while (!closed) {
      try {
        synchronized (lock) {
          drop(Reason.QUEUE_FULL, backlog.droppedElsewhere());
          if (backlog.peek() == null) {
            if (queuing && backlog.isEmpty()) {
              queuing = false;
              log.info("export queue empty: the collector took every queued span ({} ms after the first failure)",
                  TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - queuingSinceNanos));
            }
            lock.wait(retryMillis); // woken by store()
            continue;
          }
        }
        long started = System.nanoTime();
        if (!attempt(attemptTimeoutMillis)) {
          // the next try retryMillis after this one started: a slow failure (a connect that timed
          // out, the wait for the channel) does not push the next try later
          long spent = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
          Thread.sleep(Math.max(10, retryMillis - spent));
        }
      } catch (InterruptedException e) {
        return; // shutdown
      } catch (RuntimeException e) {
        log.warn("export queue: sending failed", e);
      }
    }
  }

  /**
   * Sends the oldest waiting batch once; true when it left the queue (sent, or refused for good),
   * false when it stays (the collector did not answer within {@code waitMillis}; try again later).
   */
  private boolean attempt(long waitMillis) {
    List<SpanData> batch;
    synchronized (lock) {
      batch = backlog.peek();
    }
    if (batch == null) {
      return false;
    }
    long start = System.nanoTime();
    boolean left = attempt(batch, waitMillis);
    synchronized (attempts) {
      if (attempts.size() == ATTEMPTS_KEPT) {
        attempts.removeFirst();
      }
      attempts.addLast(new Attempt(start, System.nanoTime(), left));
    }
    return left;
  }

  /** The sender's recent tries, oldest first. */
  List<Attempt> attempts() {
    synchronized (attempts) {
      return List.copyOf(attempts);
    }
  }

  private boolean attempt(List<SpanData> batch, long waitMillis) {
    if (delegate instanceof Reconnectable r) {
      r.reconnectNow();
    }
    CompletableResultCode r = exportNow(batch);
    r.join(waitMillis, TimeUnit.MILLISECONDS);
    if (!r.isDone()) {
      lastError = "no answer within " + waitMillis + " ms";
      return false;
    }
    Throwable t = r.getFailureThrowable();
    if (r.isSuccess() || !retryable(t)) {
      synchronized (lock) {
        backlog.remove();
      }
      if (!r.isSuccess()) {
        lastError = describe(t);
        drop(Reason.REFUSED, batch.size());
      }
      return true;
    }
    lastError = describe(t);
    return false;
  }

  /**
   * Whether an export that failed with {@code t} may succeed later: no answer at all (connection
   * refused or reset, timeout), or an answer the OTLP specification calls retryable. A failure
   * without a cause is retried.
   */
  static boolean retryable(Throwable t) {
    if (RequestSplitter.tooLarge(t)) {
      return false; // larger than the collector takes even alone: sending it again cannot help
    }
    if (t instanceof FailedExportException.GrpcExportException g) {
      return !g.failedWithResponse() || RETRYABLE_GRPC.contains(g.getResponse().getStatusCode());
    }
    if (t instanceof FailedExportException.HttpExportException h) {
      if (!h.failedWithResponse()) {
        return true;
      }
      int s = h.getResponse().getStatusCode();
      return s == 429 || s == 502 || s == 503 || s == 504;
    }
    return true;
  }

  static String describe(Throwable t) {
    if (t == null) {
      return "export failed";
    }
    if (t instanceof FailedExportException.GrpcExportException g && g.failedWithResponse()) {
      return "gRPC " + g.getResponse().getStatusCode() + ": " + g.getResponse().getStatusDescription();
    }
    if (t instanceof FailedExportException.HttpExportException h && h.failedWithResponse()) {
      return "HTTP " + h.getResponse().getStatusCode();
    }
    Throwable c = t.getCause() != null ? t.getCause() : t;
    return c.toString();
  }
}
