package io.gospan.receiver.app;

import io.gospan.receiver.config.ExporterType;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.config.OtlpSignal;
import io.gospan.receiver.export.Pipeline;
import io.gospan.receiver.export.SelfTelemetry;
import io.gospan.receiver.export.SpanExport;
import io.gospan.receiver.metrics.SpanMetrics;
import io.gospan.receiver.span.ExpiryTimer;
import io.gospan.receiver.span.MonotonicClock;
import io.gospan.receiver.span.ProcFsProcessMetadata;
import io.gospan.receiver.span.ProcessMetadata;
import io.gospan.receiver.span.RpcSemconv;
import io.gospan.receiver.span.SpanAssembler;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
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
 * Wires the {@link Pipeline} a {@link GospanConfig} describes: gospan's metrics ({@link
 * SelfTelemetry}: meter provider, {@code /metrics}, RED metrics), the span export chain ({@link
 * SpanExport}), span assembly feeding both, and the pipeline's scheduler with its tasks (the
 * {@link ExpiryTimer}, clock recalibration every {@value #RECALIBRATE_PERIOD_SECONDS} s, drop reports
 * every {@value #DROP_REPORT_SECONDS} s, the process metadata sweep every {@value
 * #SWEEP_PERIOD_SECONDS} s).
 *
 * <pre>{@code
 * Pipeline p = PipelineBuilder.create(config).build();                        // the configured exporters
 * Pipeline t = PipelineBuilder.create(config).spanExporter(inMemory).build(); // tests
 * }</pre>
 */
public final class PipelineBuilder {
  private static final Logger log = LoggerFactory.getLogger(PipelineBuilder.class);
  static final long RECALIBRATE_PERIOD_SECONDS = 60;
  static final long DROP_REPORT_SECONDS = 10;
  static final long SWEEP_PERIOD_SECONDS = 30;
  /** Gauge: processes traced now. */
  public static final String PROCESSES_TRACED = "gospan.processes.traced";

  private final GospanConfig config;
  private SpanExporter spanExporter; // null: the configured one
  private MetricExporter metricExporter; // null: the configured one
  private MonotonicClock clock = MonotonicClock.system();
  private ProcessMetadata metadata; // null: /proc, with the configured resource attributes
  private boolean startTelemetryServer = true;
  private final List<MetricReader> metricReaders = new ArrayList<>();
  private Duration expiryIdleAfter = ExpiryTimer.EXPIRE_IDLE_AFTER;
  private Duration expiryIdlePeriod = ExpiryTimer.EXPIRE_IDLE_PERIOD;

  private PipelineBuilder(GospanConfig config) {
    this.config = config;
  }

  /** A builder of the pipeline {@code config} describes, with the real clock, {@code /proc} and exporters. */
  public static PipelineBuilder create(GospanConfig config) {
    return new PipelineBuilder(config);
  }

  /** Spans go here instead of the configured exporter (through the export queue when one is configured). */
  public PipelineBuilder spanExporter(SpanExporter e) {
    this.spanExporter = e;
    return this;
  }

  /** Metrics go here instead of the configured exporter (with {@code metrics.enabled}). */
  public PipelineBuilder metricExporter(MetricExporter e) {
    this.metricExporter = e;
    return this;
  }

  public PipelineBuilder clock(MonotonicClock c) {
    this.clock = c;
    return this;
  }

  public PipelineBuilder processMetadata(ProcessMetadata m) {
    this.metadata = m;
    return this;
  }

  /** Whether to serve {@code telemetry.http} (default: as the config says). */
  public PipelineBuilder telemetryServer(boolean start) {
    this.startTelemetryServer = start;
    return this;
  }

  /** An additional reader on gospan's meter provider (tests: the SDK's {@code InMemoryMetricReader}). */
  public PipelineBuilder metricReader(MetricReader reader) {
    this.metricReaders.add(reader);
    return this;
  }

  /** Tests: the expiry timer's idle spell and period (default 10 s, 1 s). */
  public PipelineBuilder expiryIdle(Duration after, Duration period) {
    this.expiryIdleAfter = after;
    this.expiryIdlePeriod = period;
    return this;
  }

  /**
   * Builds and starts the pipeline: exporters, {@code /metrics}, the scheduler's tasks.
   *
   * @throws io.gospan.receiver.config.ConfigException the telemetry address is in use or invalid
   */
  public Pipeline build() {
    ProcessMetadata metadata =
        this.metadata != null ? this.metadata : ProcFsProcessMetadata.create(config.resource().attributes());
    SelfTelemetry.Builder tb = SelfTelemetry.builder(config, metadata::resource)
        .rpcSemconv(rpcSemconv(config))
        .telemetryServer(startTelemetryServer);
    if (metricExporter != null) {
      tb.metricExporter(metricExporter);
    }
    metricReaders.forEach(tb::metricReader);
    SelfTelemetry telemetry = tb.build();
    telemetry.meter().gaugeBuilder(PROCESSES_TRACED).setDescription("Processes traced").ofLongs()
        .buildWithCallback(m -> m.record(metadata.size()));

    SpanExport export = spanExporter != null
        ? SpanExport.create(config.exporter(), spanExporter, telemetry.meter(), telemetry.meterProvider())
        : SpanExport.create(config.exporter(), telemetry.meter(), telemetry.meterProvider());
    SpanMetrics red = telemetry.spanMetrics();
    SpanAssembler assembler = new SpanAssembler(
        assemblerSettings(config), clock, metadata, telemetry.meter(),
        finished -> {
          red.record(finished); // every call, sampled or not
          if (finished.sampled()) {
            export.admit(finished.span());
          }
        },
        IdGenerator.random());
    Sampler sampler = sampler(config);
    assembler.sampler(sampler);

    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "gospan-assembler-timer");
      t.setDaemon(true);
      return t;
    });
    ExpiryTimer expiry = ExpiryTimer.start(scheduler, assembler::expire, expiryIdleAfter, expiryIdlePeriod);
    Pipeline pipeline =
        new Pipeline(new Pipeline.Parts(clock, metadata, assembler, expiry, export, telemetry, scheduler));
    scheduler.scheduleWithFixedDelay(
        () -> recalibrate(clock), RECALIBRATE_PERIOD_SECONDS, RECALIBRATE_PERIOD_SECONDS, TimeUnit.SECONDS);
    scheduler.scheduleWithFixedDelay(pipeline::reportDrops, DROP_REPORT_SECONDS, DROP_REPORT_SECONDS, TimeUnit.SECONDS);
    // Resources of exited, never-registered processes go once no span of theirs can still end.
    Duration keepDead = config.streams().timeout().plus(config.streams().linkWait()).plusSeconds(30);
    scheduler.scheduleWithFixedDelay(() -> {
      try {
        metadata.sweep(keepDead);
      } catch (RuntimeException e) {
        log.warn("process metadata sweep failed", e);
      }
    }, SWEEP_PERIOD_SECONDS, SWEEP_PERIOD_SECONDS, TimeUnit.SECONDS);

    log.info(
        "pipeline ready: exporter={} endpoint={} semconv={} metrics={} red_on_metrics_endpoint={} sampler={}",
        config.exporter().type().configName(),
        config.exporter().type() == ExporterType.OTLP
            ? config.exporter().otlp().forSignal(OtlpSignal.TRACES).endpoint()
            : "-",
        config.semconv().rpc().configName(),
        telemetry.exportsMetrics(),
        telemetry.servesRedMetrics(),
        sampler.getDescription());
    return pipeline;
  }

  private static void recalibrate(MonotonicClock clock) {
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

  /**
   * The configuration's {@code sampling.*} as the OpenTelemetry SDK's own {@link Sampler}: {@code
   * always_on}, {@code always_off}, {@code traceidratio} ({@link Sampler#traceIdRatioBased}, a
   * function of the trace id) and the {@code parentbased_*} ones ({@link Sampler#parentBased}
   * over those), as the SDK's autoconfigure builds them from {@code OTEL_TRACES_SAMPLER}.
   */
  public static Sampler sampler(GospanConfig c) {
    double ratio = c.sampling().ratio();
    return switch (c.sampling().sampler()) {
      case ALWAYS_ON -> Sampler.alwaysOn();
      case ALWAYS_OFF -> Sampler.alwaysOff();
      case TRACEIDRATIO -> Sampler.traceIdRatioBased(ratio);
      case PARENTBASED_ALWAYS_ON -> Sampler.parentBased(Sampler.alwaysOn());
      case PARENTBASED_ALWAYS_OFF -> Sampler.parentBased(Sampler.alwaysOff());
      case PARENTBASED_TRACEIDRATIO -> Sampler.parentBased(Sampler.traceIdRatioBased(ratio));
    };
  }
}
