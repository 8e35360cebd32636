package io.gospan.receiver.export;

import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.ProbeEventSink;
import io.gospan.receiver.event.ProcessInfo;
import io.gospan.receiver.metrics.SpanMetrics;
import io.gospan.receiver.span.ExpiryTimer;
import io.gospan.receiver.span.MonotonicClock;
import io.gospan.receiver.span.ProcessMetadata;
import io.gospan.receiver.span.SpanAssembler;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * gospan's user-space back end at run time: header events in; spans, RED metrics and
 * self-telemetry out. Its parts are built and wired by {@code app.PipelineBuilder}; this class
 * routes the reader's events and discovery's process facts to them and closes them in order.
 *
 * <pre>{@code
 * Pipeline pipeline = PipelineBuilder.create(ConfigLoader.load(path)).build(); // starts exporters, /metrics
 * pipeline.registerProcess(new ProcessInfo(pid, exe, "go1.22.3"));  // when a process is attached
 * pipeline.accept(event);                                            // ring-buffer thread, never blocks on export
 * pipeline.acceptAll(events, 0, n);                                  // a poll's events: one lock entry, one clock read
 * pipeline.meter().counterBuilder("gospan.x").buildWithCallback(...); // BPF counters, at each collection
 * pipeline.processExited(pid);
 * pipeline.close();                                                  // flushes
 * }</pre>
 *
 * <p>Finished spans go from span assembly to the {@link SpanMetrics} and the {@link SpanExport};
 * gospan's metrics are the {@link SelfTelemetry}'s. Threads: the scheduler given in {@link Parts}
 * (the {@link ExpiryTimer}, clock recalibration, drop reports, the process metadata sweep), the
 * SDK's span export worker, the export queue's sender, the SDK's periodic metric reader, the
 * Prometheus HTTP server.
 */
public final class Pipeline implements ProbeEventSink, AutoCloseable {
  /** Events whose read lag is measured: one in {@code LAG_SAMPLE_MASK + 1} (the first of each run of them). */
  private static final long LAG_SAMPLE_MASK = 7;

  /**
   * The parts of a pipeline, built by {@code app.PipelineBuilder}. The pipeline owns them from
   * then on: {@link #close} stops each.
   *
   * @param assembler span assembly; its finished spans already go to {@code telemetry.spanMetrics()} and {@code export}
   * @param expiry the timer running {@code assembler.expire()} on {@code scheduler}
   * @param scheduler the one thread that runs the pipeline's periodic tasks
   */
  public record Parts(
      MonotonicClock clock,
      ProcessMetadata metadata,
      SpanAssembler assembler,
      ExpiryTimer expiry,
      SpanExport export,
      SelfTelemetry telemetry,
      ScheduledExecutorService scheduler) {
    public Parts {
      Objects.requireNonNull(clock, "clock");
      Objects.requireNonNull(metadata, "metadata");
      Objects.requireNonNull(assembler, "assembler");
      Objects.requireNonNull(expiry, "expiry");
      Objects.requireNonNull(export, "export");
      Objects.requireNonNull(telemetry, "telemetry");
      Objects.requireNonNull(scheduler, "scheduler");
    }
  }

  private final MonotonicClock clock;
  private final ProcessMetadata metadata;
  private final SpanAssembler assembler;
  private final ExpiryTimer expiry;
  private final SpanExport export;
  private final SelfTelemetry telemetry;
  private final SpanMetrics red;
  private final ScheduledExecutorService scheduler;
  private boolean closed; // guarded by this

  public Pipeline(Parts parts) {
    this.clock = parts.clock();
    this.metadata = parts.metadata();
    this.assembler = parts.assembler();
    this.expiry = parts.expiry();
    this.export = parts.export();
    this.telemetry = parts.telemetry();
    this.red = telemetry.spanMetrics();
    this.scheduler = parts.scheduler();
  }

  // ------------------------------------------------------------------------------ API for the reader

  /** Feeds one decoded event. Thread-safe; never waits for export. */
  @Override
  public void accept(ProbeEvent event) {
    if ((expiry.eventsSeen() & LAG_SAMPLE_MASK) == 0) {
      export.eventRead(event.monotonicNs()); // how late events are read: every 8th is enough (a clock read each)
    }
    assembler.accept(event);
    expiry.eventAccepted();
  }

  /**
   * Feeds {@code events[from]} to {@code events[to - 1]}, in order, as {@link #accept} would each:
   * span assembly takes them under one entry of its lock and one clock read ({@link
   * SpanAssembler#acceptAll}); the read lag is sampled on the same events as one at a time (the
   * first of each run of 8 counted), all against one read of the clock made as the run is handed
   * over, so an event's lag is its age when the reader hands it over, as before. An event whose handling
   * throws does not keep the others from being fed: the first exception is thrown after the last
   * one. The reader's thread; never waits for export.
   */
  @Override
  public void acceptAll(ProbeEvent[] events, int from, int to) {
    if (from >= to) {
      return;
    }
    long seen = expiry.eventsSeen();
    long readNs = 0;
    boolean read = false; // the clock is read once, for the first event sampled
    for (int i = from; i < to; i++) {
      if (((seen + i - from) & LAG_SAMPLE_MASK) == 0 && events[i] != null) {
        if (!read) {
          readNs = System.nanoTime();
          read = true;
        }
        export.eventRead(events[i].monotonicNs(), readNs);
      }
    }
    try {
      assembler.acceptAll(events, from, to);
    } finally {
      expiry.eventsAccepted(to - from);
    }
  }

  /** Records inspector facts about a newly attached process (its resource is built from them and /proc). */
  public void registerProcess(ProcessInfo info) {
    metadata.register(info);
    metadata.resource(info.pid()); // read /proc now, not under the assembler's lock at the first span
    red.processStarted(info.pid());
  }

  /** What is known of a process the scan has not discovered; see {@link ProcessMetadata#hint}. */
  public void hintProcess(ProcessInfo info) {
    metadata.hint(info);
  }

  /** The process exited: its in-flight streams end (incomplete), its resource and metrics are dropped. */
  public void processExited(int pid) {
    assembler.processExited(pid);
    red.forget(pid);
    metadata.forget(pid);
  }

  /** A traced connection closed: its in-flight streams end (incomplete). */
  public void connectionClosed(int pid, long connectionId) {
    assembler.connectionClosed(pid, connectionId);
  }

  /**
   * gospan's meter ({@code io.gospan}) on its SDK meter provider: what is recorded here is read by
   * {@code /metrics} and, with {@code metrics.enabled}, exported over OTLP. Exists whatever the config.
   */
  public Meter meter() {
    return telemetry.meter();
  }

  public MonotonicClock clock() {
    return clock;
  }

  public SpanAssembler assembler() {
    return assembler;
  }

  /** Where {@code /metrics} is served (as configured), or {@code null}. */
  public InetSocketAddress telemetryAddress() {
    return telemetry.address();
  }

  /** Until {@link #close}. */
  public boolean healthy() {
    return telemetry.healthy();
  }

  /** Exports what is queued now (spans, then metrics); for tests and orderly shutdown. */
  public CompletableResultCode flush() {
    CompletableResultCode s = export.flush();
    CompletableResultCode metrics = telemetry.flush();
    return CompletableResultCode.ofAll(List.of(s, metrics));
  }

  /** Ends in-flight streams as incomplete ({@code shutdown}), exports everything, stops all threads. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    telemetry.unhealthy();
    scheduler.shutdownNow();
    assembler.flush();
    export.shutdown().join(10, TimeUnit.SECONDS); // exports what is queued, then shuts the exporter down
    reportDrops();
    telemetry.close();
  }

  /**
   * Logs the spans lost to admission, failed exports and the export queue since the last report,
   * and the loss counters' rise (run every few seconds by the scheduler); returns the spans lost.
   */
  public long reportDrops() {
    long spans = export.reportDrops();
    telemetry.reportLosses();
    return spans;
  }

  /** The export queue ({@code exporter.queue}), empty when spans are not queued. */
  Optional<ExportQueue> exportQueue() {
    return export.exportQueue();
  }
}
