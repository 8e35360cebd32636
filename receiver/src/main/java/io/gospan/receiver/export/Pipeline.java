package io.gospan.receiver.export;

import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.ExporterType;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.ProcessInfo;
import io.gospan.receiver.metrics.RedMetrics;
import io.gospan.receiver.metrics.TelemetryServer;
import io.gospan.receiver.span.FinishedSpan;
import io.gospan.receiver.span.MonotonicClock;
import io.gospan.receiver.span.ProcFsProcessMetadata;
import io.gospan.receiver.span.ProcessMetadata;
import io.gospan.receiver.span.RpcSemconv;
import io.gospan.receiver.span.SpanAssembler;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.exporter.prometheus.PrometheusHttpServer;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.InternalTelemetryVersion;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.SdkMeterProviderBuilder;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gospan's user-space back end, built from the config: header events in; spans, RED metrics and
 * self-telemetry out.
 *
 * <pre>{@code
 * Pipeline pipeline = Pipeline.create(ConfigLoader.load(path));   // starts exporters, /metrics
 * pipeline.registerProcess(new ProcessInfo(pid, exe, "go1.22.3"));  // when a process is attached
 * pipeline.accept(event);                                            // ring-buffer thread, never blocks on export
 * pipeline.meter().counterBuilder("gospan.x").buildWithCallback(...); // BPF counters, at each collection
 * pipeline.processExited(pid);
 * pipeline.close();                                                  // flushes
 * }</pre>
 *
 * <p>Spans go through the SDK's {@link BatchSpanProcessor} ({@code exporter.batch.*}: bounded queue,
 * a full queue drops the span, never blocks); its own metrics count them ({@code
 * otel.sdk.processor.span.processed{error.type}}, {@code otel.sdk.processor.span.queue.size}); it
 * logs queue-full drops with their count at the next export, and failed exports are logged with
 * their span count every {@value #DROP_REPORT_SECONDS} s ({@link ExportFailureLog}). With {@code
 * exporter.type: otlp} and {@code exporter.queue.max_bytes > 0}, the {@link ExportQueue} sits
 * between the processor and the OTLP exporter: spans the collector does not take wait there
 * (bounded in bytes, in memory or on disk) and are sent oldest first once it answers; its drops
 * are counted ({@code gospan.export.queue.dropped{reason}}) and logged with the same report.
 *
 * <p>Metrics: one {@link SdkMeterProvider}, always built, with gospan's meter {@code io.gospan}
 * ({@link #meter}); its readers are the OTLP periodic reader ({@code metrics.enabled}; RED metrics
 * are added to what it exports) and the Prometheus reader behind {@code /metrics} ({@code
 * telemetry.http}). RED metrics carry each traced process's resource, so they go over OTLP only.
 *
 * <p>Threads: one scheduler (stream timeouts and link waits every 100–500 ms as the event rate
 * asks, every second once no event came for 10 s; clock recalibration every minute; drop
 * reports), the SDK's span export worker, the export queue's sender, the SDK's periodic metric
 * reader, the Prometheus HTTP server.
 */
public final class Pipeline implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Pipeline.class);
  /** The expiry period at high event rates, and its shortest (ms). */
  static final long EXPIRE_PERIOD_MILLIS = 100;
  /**
   * The longest expiry period while events come (ms). Between the two, the period is the time
   * {@link #EVENTS_PER_EXPIRY} events took to arrive before the last run: at 1,000 spans/s (~2,000
   * events/s) the timer wakes twice a second instead of 10 times, at 10,000 events/s and above
   * every 100 ms. A wake-up costs ~60 µs of CPU on a VM before any work (docs/benchmarks.md "What
   * wakes the idle sidecar"), so at low rates the wake-ups were most of the timer's cost. What is
   * due (a span that waited {@code streams.link_wait}, a stream's timeout, an ended span forgotten)
   * is done up to this much later; the ended spans remembered grow by at most ~{@link
   * #EVENTS_PER_EXPIRY} (more events wake the timer early: {@link #BURST_EVENTS}).
   */
  static final long EXPIRE_SLOW_PERIOD_MILLIS = 500;
  /** Events an expiry period is sized for (see {@link #EXPIRE_SLOW_PERIOD_MILLIS}). */
  static final long EVENTS_PER_EXPIRY = 1024;
  /**
   * Events after which the next one wakes a timer on a period longer than {@link
   * #EXPIRE_PERIOD_MILLIS} (a burst after a slow or idle spell): it runs at 100 ms again at once.
   */
  static final long BURST_EVENTS = 4 * EVENTS_PER_EXPIRY;
  /**
   * The expiry period once no event came for {@link #EXPIRE_IDLE_AFTER_NANOS}: an idle sidecar's
   * timer wakes once a second instead of 10 times (each wake-up costs ~60 µs of CPU on a VM,
   * docs/benchmarks.md "What wakes the idle sidecar"). The next event brings the 100 ms period
   * back at once; what is due in the idle spell (a stream's timeout, a client span kept for other
   * gospans) is done up to this much later.
   */
  static final long EXPIRE_IDLE_PERIOD_MILLIS = 1000;
  /** How long without an event before expiry runs every {@link #EXPIRE_IDLE_PERIOD_MILLIS}. */
  static final long EXPIRE_IDLE_AFTER_NANOS = 10_000_000_000L;
  private static final java.lang.invoke.VarHandle EVENTS_SEEN;
  /** Events whose read lag is measured: one in {@code LAG_SAMPLE_MASK + 1} (the first of each run of them). */
  private static final long LAG_SAMPLE_MASK = 7;

  static {
    try {
      EVENTS_SEEN = java.lang.invoke.MethodHandles.lookup().findVarHandle(Pipeline.class, "eventsSeen", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
  static final long RECALIBRATE_PERIOD_SECONDS = 60;
  static final long DROP_REPORT_SECONDS = 10;
  /** gospan's instrumentation scope for its own metrics. */
  public static final String METER_NAME = "io.gospan";
  /** Gauge: processes traced now. */
  public static final String PROCESSES_TRACED = "gospan.processes.traced";

  private final GospanConfig config;
  private final SdkMeterProvider meterProvider;
  private final Meter meter;
  private final MonotonicClock clock;
  private final ProcessMetadata metadata;
  private final SpanAssembler assembler;
  private final ExportFailureLog exportFailures;
  private final SpanAdmission admission;
  private final LossReport losses = new LossReport();
  private final ExportQueue exportQueue; // null: no queue (exporter.queue.max_bytes 0, or not OTLP)
  private final BatchSpanProcessor spans;
  private final RedMetrics red;
  private final InetSocketAddress telemetryAddress;
  private final ScheduledExecutorService scheduler;
  private volatile boolean closed;
  /** Events accepted (opaque access: only its change matters, to the expiry timer). */
  @SuppressWarnings("unused") // through EVENTS_SEEN
  private long eventsSeen;
  /**
   * An event accepted when {@code eventsSeen} is at least this wakes the expiry timer to its 100 ms
   * period: the count at the timer's last run when idle (the next event), that + {@link
   * #BURST_EVENTS} on a longer period; {@code Long.MAX_VALUE} at 100 ms.
   */
  private volatile long expiryWakeAt = Long.MAX_VALUE;
  // the expiry timer's own state, on the scheduler thread only
  private java.util.concurrent.ScheduledFuture<?> nextExpiry;
  private long expiryEventsSeen;
  private long expiryRanAt;
  private long expiryPeriodMillis = EXPIRE_PERIOD_MILLIS;
  private long expiryQuietSince;
  private final long expiryIdleAfterNanos;
  private final long expiryIdlePeriodMillis;

  private Pipeline(Builder b) {
    this.config = b.config;
    this.expiryIdleAfterNanos = b.expiryIdleAfterNanos;
    this.expiryIdlePeriodMillis = b.expiryIdlePeriodMillis;
    this.clock = b.clock != null ? b.clock : MonotonicClock.system();
    this.metadata =
        b.metadata != null ? b.metadata : ProcFsProcessMetadata.create(config.resource().attributes());

    SdkMeterProviderBuilder mp = SdkMeterProvider.builder().setResource(ownResource(config));
    InetSocketAddress address = null;
    if (b.startTelemetryServer && config.telemetry().http().enabled()) {
      address = ConfigLoader.parseHostPort("telemetry.http.address", config.telemetry().http().address());
      PrometheusHttpServer server;
      try {
        server = TelemetryServer.start("telemetry.http.address", address, this::healthy);
      } catch (java.io.UncheckedIOException e) { // in use: a configuration error, said in one line
        throw new io.gospan.receiver.config.ConfigException(e.getMessage(), e);
      }
      mp.registerMetricReader(server);
      log.info("telemetry endpoint on http://{}:{}/metrics and /healthz", address.getHostString(), address.getPort());
    }
    this.telemetryAddress = address;
    MetricExporter metricExporter = null;
    if (config.metrics().enabled()) {
      metricExporter = b.metricExporter != null ? b.metricExporter : Exporters.metricExporter(config.exporter());
    }
    if (metricExporter != null) {
      this.red = new RedMetrics(rpcSemconv(config), metadata::resource);
      mp.registerMetricReader(
          PeriodicMetricReader.builder(new RedAppendingMetricExporter(metricExporter, red))
              .setInterval(config.metrics().exportInterval())
              .build());
    } else {
      this.red = null;
    }
    b.metricReaders.forEach(mp::registerMetricReader);
    mp.registerMetricReader(losses);
    this.meterProvider = mp.build();
    this.meter = meterProvider.get(METER_NAME);
    meter.gaugeBuilder(PROCESSES_TRACED).setDescription("Processes traced").ofLongs()
        .buildWithCallback(m -> m.record(metadata.size()));

    long exportMillis = Exporters.worstCaseExportMillis(config.exporter().otlp(), config.exporter().retry());
    var queueConfig = config.exporter().queue();
    boolean queued = queueConfig.enabled() && config.exporter().type() == ExporterType.OTLP;
    ExportQueue[] queue = {null};
    var batch = config.exporter().batch();
    java.util.function.UnaryOperator<SpanExporter> wrap = e -> {
      if (!queued) {
        return e;
      }
      long attemptMillis = config.exporter().otlp().forSignal(io.gospan.receiver.config.OtlpSignal.TRACES).timeout().toMillis() + 1000;
      queue[0] = ExportQueue.create(queueConfig, e, attemptMillis, meter);
      return queue[0];
    };
    SpanExporter spanExporter =
        b.spanExporter != null ? wrap.apply(b.spanExporter) : Exporters.spanExporter(config.exporter(), wrap);
    this.exportQueue = queue[0];
    this.exportFailures = new ExportFailureLog(spanExporter);
    this.admission = new SpanAdmission(batch.maxQueueSize(), batch.maxQueueBytes(), meter);
    this.spans =
        // each batch in requests within the collector's message size, above the failure log and
        // the export queue (which keep, count and retry each request)
        BatchSpanProcessor.builder(admission.tracking(new RequestSplitter(exportFailures, batch.maxExportRequestBytes())))
            .setMaxQueueSize(batch.maxQueueSize())
            .setMaxExportBatchSize(batch.maxExportBatchSize())
            .setScheduleDelay(batch.scheduleDelay())
            .setExporterTimeout(Duration.ofMillis(exportMillis))
            .setExportUnsampledSpans(true) // gospan exports every call it saw, whatever the caller's sampled flag
            .setMeterProvider(meterProvider)
            .setInternalTelemetryVersion(InternalTelemetryVersion.LATEST)
            .build();

    this.assembler =
        new SpanAssembler(
            assemblerSettings(config), clock, metadata, meter, this::onSpan, IdGenerator.random());

    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "gospan-assembler-timer");
              t.setDaemon(true);
              return t;
            });
    expiryQuietSince = System.nanoTime();
    expiryRanAt = expiryQuietSince;
    scheduler.execute(() -> scheduleExpiry(EXPIRE_PERIOD_MILLIS));
    scheduler.scheduleWithFixedDelay(
        this::recalibrate, RECALIBRATE_PERIOD_SECONDS, RECALIBRATE_PERIOD_SECONDS, TimeUnit.SECONDS);
    scheduler.scheduleWithFixedDelay(this::reportDrops, DROP_REPORT_SECONDS, DROP_REPORT_SECONDS, TimeUnit.SECONDS);
    // Resources of exited, never-registered processes go once no span of theirs can still end.
    java.time.Duration keepDead =
        config.streams().timeout().plus(config.streams().linkWait()).plusSeconds(30);
    scheduler.scheduleWithFixedDelay(() -> {
      try {
        metadata.sweep(keepDead);
      } catch (RuntimeException e) {
        log.warn("process metadata sweep failed", e);
      }
    }, 30, 30, TimeUnit.SECONDS);

    log.info(
        "pipeline ready: exporter={} endpoint={} semconv={} metrics={}",
        config.exporter().type().configName(),
        config.exporter().type() == ExporterType.OTLP
            ? config.exporter().otlp().forSignal(io.gospan.receiver.config.OtlpSignal.TRACES).endpoint()
            : "-",
        config.semconv().rpc().configName(),
        metricExporter != null);
  }

  /** Builds the pipeline {@code config} describes, with the real clock, {@code /proc} and exporters. */
  public static Pipeline create(GospanConfig config) {
    return builder(config).build();
  }

  public static Builder builder(GospanConfig config) {
    return new Builder(config);
  }

  /** Overrides for tests and embedding. */
  public static final class Builder {
    private final GospanConfig config;
    private SpanExporter spanExporter;
    private MetricExporter metricExporter;
    private MonotonicClock clock;
    private ProcessMetadata metadata;
    private boolean startTelemetryServer = true;
    private final List<MetricReader> metricReaders = new ArrayList<>();
    private long expiryIdleAfterNanos = EXPIRE_IDLE_AFTER_NANOS;
    private long expiryIdlePeriodMillis = EXPIRE_IDLE_PERIOD_MILLIS;

    private Builder(GospanConfig config) {
      this.config = config;
    }

    public Builder spanExporter(SpanExporter e) {
      this.spanExporter = e;
      return this;
    }

    public Builder metricExporter(MetricExporter e) {
      this.metricExporter = e;
      return this;
    }

    public Builder clock(MonotonicClock c) {
      this.clock = c;
      return this;
    }

    public Builder processMetadata(ProcessMetadata m) {
      this.metadata = m;
      return this;
    }

    /** Whether to serve {@code telemetry.http} (default: as the config says). */
    public Builder telemetryServer(boolean start) {
      this.startTelemetryServer = start;
      return this;
    }

    /** An additional reader on gospan's meter provider (tests: the SDK's {@code InMemoryMetricReader}). */
    public Builder metricReader(MetricReader reader) {
      this.metricReaders.add(reader);
      return this;
    }

    /** Tests: the expiry timer's idle spell and period (default 10 s, 1 s). */
    Builder expiryIdle(java.time.Duration after, java.time.Duration period) {
      this.expiryIdleAfterNanos = after.toNanos();
      this.expiryIdlePeriodMillis = period.toMillis();
      return this;
    }

    public Pipeline build() {
      return new Pipeline(this);
    }
  }

  // ------------------------------------------------------------------------------ API for the reader

  /** Feeds one decoded event. Thread-safe; never waits for export. */
  public void accept(ProbeEvent event) {
    long seen = (long) EVENTS_SEEN.getOpaque(this);
    if ((seen & LAG_SAMPLE_MASK) == 0) {
      admission.eventRead(event.monotonicNs()); // how late events are read: every 8th is enough (a clock read each)
    }
    assembler.accept(event);
    EVENTS_SEEN.setOpaque(this, seen + 1);
    if (seen >= expiryWakeAt) {
      expiryWakeAt = Long.MAX_VALUE;
      try {
        scheduler.execute(() -> scheduleExpiry(EXPIRE_PERIOD_MILLIS));
      } catch (java.util.concurrent.RejectedExecutionException closing) {
        // closed: nothing to expire any more
      }
    }
  }

  /** Records inspector facts about a newly attached process (its resource is built from them and /proc). */
  public void registerProcess(ProcessInfo info) {
    metadata.register(info);
    metadata.resource(info.pid()); // read /proc now, not under the assembler's lock at the first span
    if (red != null) {
      red.processStarted(info.pid());
    }
  }

  /** The process exited: its in-flight streams end (incomplete), its resource and metrics are dropped. */
  /** What is known of a process the scan has not discovered; see {@link ProcessMetadata#hint}. */
  public void hintProcess(ProcessInfo info) {
    metadata.hint(info);
  }

  public void processExited(int pid) {
    assembler.processExited(pid);
    if (red != null) {
      red.forget(pid);
    }
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
    return meter;
  }

  public MonotonicClock clock() {
    return clock;
  }

  public SpanAssembler assembler() {
    return assembler;
  }

  public GospanConfig config() {
    return config;
  }

  /** Where {@code /metrics} is served (as configured), or {@code null}. */
  public InetSocketAddress telemetryAddress() {
    return telemetryAddress;
  }

  /** Until {@link #close}. */
  public boolean healthy() {
    return !closed;
  }

  /** Exports what is queued now (spans, then metrics); for tests and orderly shutdown. */
  public CompletableResultCode flush() {
    CompletableResultCode s = spans.forceFlush();
    CompletableResultCode metrics = meterProvider.forceFlush();
    return CompletableResultCode.ofAll(List.of(s, metrics));
  }

  /** Ends in-flight streams as incomplete ({@code shutdown}), exports everything, stops all threads. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    scheduler.shutdownNow();
    assembler.flush();
    spans.shutdown().join(10, TimeUnit.SECONDS); // exports what is queued, then shuts the exporter down
    reportDrops();
    meterProvider.forceFlush().join(10, TimeUnit.SECONDS);
    meterProvider.shutdown().join(10, TimeUnit.SECONDS); // stops /metrics too
    if (red != null) {
      red.close();
    }
  }

  // ------------------------------------------------------------------------------ internals

  private void onSpan(FinishedSpan f) {
    if (red != null) {
      red.record(f);
    }
    if (admission.admit(f.span())) {
      spans.onEnd(new FinishedReadableSpan(f.span()));
    }
  }

  /** Logs the spans lost to failed exports since the last report (also every {@value #DROP_REPORT_SECONDS} s); returns their number. */
  long reportDrops() {
    long queueDrops = exportQueue != null ? exportQueue.report() : 0;
    long admissionDrops = admission.report();
    try {
      losses.report();
    } catch (RuntimeException e) {
      log.warn("loss report failed", e);
    }
    return exportFailures.report() + queueDrops + admissionDrops;
  }

  /** What enters the span processor's queue ({@link SpanAdmission}). */
  SpanAdmission admission() {
    return admission;
  }

  /** The export queue ({@code exporter.queue}), or {@code null} when spans are not queued. */
  ExportQueue exportQueue() {
    return exportQueue;
  }

  private void expire() {
    try {
      assembler.expire();
    } catch (RuntimeException e) {
      log.warn("stream expiry failed", e);
    }
    long seen = (long) EVENTS_SEEN.getOpaque(this);
    long now = System.nanoTime();
    long events = seen - expiryEventsSeen;
    long elapsed = now - expiryRanAt;
    expiryEventsSeen = seen;
    expiryRanAt = now;
    if (events != 0) {
      expiryQuietSince = now;
    }
    long period;
    if (now - expiryQuietSince > expiryIdleAfterNanos) {
      period = expiryIdlePeriodMillis;
      expiryWakeAt = seen; // before the look at the events again: an event from now on wakes the timer
      if ((long) EVENTS_SEEN.getVolatile(this) != seen) {
        expiryWakeAt = Long.MAX_VALUE;
        period = EXPIRE_PERIOD_MILLIS;
        expiryQuietSince = now;
      }
    } else {
      period = periodMillis(events, elapsed);
      expiryWakeAt = period > EXPIRE_PERIOD_MILLIS ? seen + BURST_EVENTS : Long.MAX_VALUE;
    }
    scheduleExpiry(period);
  }

  /**
   * The expiry period while events come: the time {@link #EVENTS_PER_EXPIRY} events take at the
   * rate of {@code events} in {@code elapsedNanos}, within {@link #EXPIRE_PERIOD_MILLIS}–{@link
   * #EXPIRE_SLOW_PERIOD_MILLIS} ms.
   */
  static long periodMillis(long events, long elapsedNanos) {
    if (events <= 0) {
      return EXPIRE_SLOW_PERIOD_MILLIS;
    }
    double millis = (double) EVENTS_PER_EXPIRY * elapsedNanos / events / 1e6;
    return Math.max(EXPIRE_PERIOD_MILLIS, Math.min(EXPIRE_SLOW_PERIOD_MILLIS, (long) millis));
  }

  /** Tests: the period the expiry timer was last scheduled with (ms). */
  long expiryPeriodMillis() {
    try {
      return scheduler.submit(() -> expiryPeriodMillis).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Replaces the next expiry run by one {@code delayMillis} from now. Scheduler thread. */
  private void scheduleExpiry(long delayMillis) {
    if (nextExpiry != null) {
      nextExpiry.cancel(false);
    }
    expiryPeriodMillis = delayMillis;
    try {
      nextExpiry = scheduler.schedule(this::expire, delayMillis, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      nextExpiry = null;
    }
  }

  private void recalibrate() {
    try {
      if (clock.recalibrate()) {
        log.info("wall clock stepped; epoch-monotonic offset now {} ns", clock.offsetNanos());
      }
    } catch (RuntimeException e) {
      log.warn("clock recalibration failed", e);
    }
  }

  /** The assembler's settings from the configuration's {@code streams.*}, {@code semconv.rpc}, {@code headers.allow*}. */
  public static SpanAssembler.Settings assemblerSettings(GospanConfig c) {
    return new SpanAssembler.Settings(
        c.streams().timeout(),
        c.streams().maxInFlight(),
        c.streams().linkWait(),
        c.streams().maxPendingLinks(),
        rpcSemconv(c),
        Set.copyOf(c.headers().all()));
  }

  /** The configuration's {@code semconv.rpc} as span assembly and RED metrics take it. */
  static RpcSemconv.Mode rpcSemconv(GospanConfig c) {
    return switch (c.semconv().rpc()) {
      case STABLE -> RpcSemconv.Mode.STABLE;
      case OLD -> RpcSemconv.Mode.OLD;
      case DUP -> RpcSemconv.Mode.DUP;
    };
  }

  /** gospan's own resource (for self-telemetry): service.name=gospan, host.name, configured attributes. */
  static Resource ownResource(GospanConfig config) {
    AttributesBuilder b = Attributes.builder();
    b.put(AttributeKey.stringKey("service.name"), "gospan");
    config.resource().attributes().forEach(b::put);
    b.put(AttributeKey.stringKey("service.version"), io.gospan.receiver.version.GospanVersion.get());
    try {
      b.put(AttributeKey.stringKey("host.name"), java.net.InetAddress.getLocalHost().getHostName());
    } catch (IOException e) {
      // no host name
    }
    b.put(AttributeKey.longKey("process.pid"), ProcessHandle.current().pid());
    b.put(AttributeKey.stringKey("process.runtime.name"), "java");
    return Resource.getDefault().merge(Resource.create(b.build()));
  }
}
