package io.gospan.receiver.export;

import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.metrics.RedMetrics;
import io.gospan.receiver.metrics.SpanMetrics;
import io.gospan.receiver.metrics.TelemetryServer;
import io.gospan.receiver.span.RpcSemconv;
import io.gospan.receiver.version.GospanVersion;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.SdkMeterProviderBuilder;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gospan's metrics: one {@link SdkMeterProvider} with gospan's meter {@code io.gospan} ({@link
 * #meter}), always built, under gospan's own resource; its readers are the OTLP periodic reader
 * ({@code metrics.enabled}; the RED metrics of the traced processes, {@link #spanMetrics}, are
 * added to what it exports), the Prometheus reader behind {@code /metrics} and {@code /healthz}
 * ({@code telemetry.http}), the {@link LossReport}, and any reader given. RED metrics carry each
 * traced process's resource, so they are not on this provider: the OTLP export adds them, and
 * {@code /metrics} serves them through a reader of their own ({@code metrics.prometheus}; {@link
 * TelemetryServer#start}), labelled with each process's resource attributes.
 *
 * <pre>{@code
 * SelfTelemetry t = SelfTelemetry.builder(config, metadata::resource).build(); // serves /metrics
 * t.meter().counterBuilder("gospan.x")...;
 * t.close();                                                                    // flushes, stops /metrics
 * }</pre>
 */
public final class SelfTelemetry implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SelfTelemetry.class);
  /** gospan's instrumentation scope for its own metrics. */
  public static final String METER_NAME = "io.gospan";

  private final SdkMeterProvider meterProvider;
  private final Meter meter;
  private final SpanMetrics spanMetrics;
  private final LossReport losses = new LossReport();
  private final InetSocketAddress address; // null: no telemetry server
  private final boolean exportsMetrics;
  private final boolean redServed;
  private volatile boolean healthy = true;

  private SelfTelemetry(Builder b) {
    GospanConfig config = b.config;
    SdkMeterProviderBuilder mp = SdkMeterProvider.builder().setResource(ownResource(config));
    boolean serve = b.startServer && config.telemetry().http().enabled();
    InetSocketAddress served =
        serve ? ConfigLoader.parseHostPort("telemetry.http.address", config.telemetry().http().address()) : null;
    MetricExporter exporter = null; // metrics.enabled false, or nowhere to send them (Exporters.metricExporter)
    if (config.metrics().enabled()) {
      exporter = b.metricExporter != null ? b.metricExporter : Exporters.metricExporter(config.exporter());
    }
    boolean redServed = serve && config.metrics().prometheus();
    RedMetrics red = exporter != null || redServed ? new RedMetrics(b.rpcSemconv, b.resourceOf, redSettle(config)) : null;
    if (serve) {
      try {
        mp.registerMetricReader(TelemetryServer.start(
            "telemetry.http.address", served, () -> healthy, redServed ? red.reader() : null));
      } catch (UncheckedIOException e) { // in use: a configuration error, said in one line
        if (exporter != null) { // built above; nothing else is yet
          exporter.shutdown();
        }
        throw new ConfigException(e.getMessage(), e);
      }
      log.info("telemetry endpoint on http://{}:{}/metrics and /healthz", served.getHostString(), served.getPort());
    }
    this.address = served;
    if (exporter != null) {
      mp.registerMetricReader(
          PeriodicMetricReader.builder(new RedAppendingMetricExporter(exporter, red.reader()))
              .setInterval(config.metrics().exportInterval())
              .build());
    }
    this.spanMetrics = red != null ? red : SpanMetrics.noop();
    this.exportsMetrics = exporter != null;
    this.redServed = redServed;
    b.readers.forEach(mp::registerMetricReader);
    mp.registerMetricReader(losses);
    this.meterProvider = mp.build();
    this.meter = meterProvider.get(METER_NAME);
  }

  /**
   * How long after a process's exit its spans may still end: held for their parent up to {@code
   * streams.link_wait}, then waiting for another gospan's answer up to 500 ms more, and a second
   * for the event reader.
   */
  static Duration redSettle(GospanConfig config) {
    return config.streams().linkWait().plusMillis(1500);
  }

  /**
   * @param resourceOf a traced process's resource (its RED metrics carry it), e.g. {@code ProcessMetadata::resource}
   */
  public static Builder builder(GospanConfig config, IntFunction<Resource> resourceOf) {
    return new Builder(config, resourceOf);
  }

  /** What the configuration does not say. */
  public static final class Builder {
    private final GospanConfig config;
    private final IntFunction<Resource> resourceOf;
    private RpcSemconv.Mode rpcSemconv = RpcSemconv.Mode.STABLE;
    private MetricExporter metricExporter;
    private boolean startServer = true;
    private final List<MetricReader> readers = new ArrayList<>();

    private Builder(GospanConfig config, IntFunction<Resource> resourceOf) {
      this.config = config;
      this.resourceOf = resourceOf;
    }

    /** Which RPC conventions the RED metrics follow ({@code semconv.rpc}). */
    public Builder rpcSemconv(RpcSemconv.Mode mode) {
      this.rpcSemconv = mode;
      return this;
    }

    /** Metrics go here instead of the configured exporter (with {@code metrics.enabled}). */
    public Builder metricExporter(MetricExporter e) {
      this.metricExporter = e;
      return this;
    }

    /** Whether to serve {@code telemetry.http} (default: as the configuration says). */
    public Builder telemetryServer(boolean start) {
      this.startServer = start;
      return this;
    }

    /** An additional reader (tests: the SDK's {@code InMemoryMetricReader}). */
    public Builder metricReader(MetricReader reader) {
      this.readers.add(reader);
      return this;
    }

    /**
     * Builds the meter provider and starts {@code /metrics}.
     *
     * @throws ConfigException the telemetry address is in use or invalid
     */
    public SelfTelemetry build() {
      return new SelfTelemetry(this);
    }
  }

  /**
   * gospan's meter ({@code io.gospan}): what is recorded here is read by {@code /metrics} and, with
   * {@code metrics.enabled}, exported over OTLP.
   */
  public Meter meter() {
    return meter;
  }

  /** The provider of {@link #meter}, for the SDK's own instruments (the span processor's). */
  public SdkMeterProvider meterProvider() {
    return meterProvider;
  }

  /** The RED metrics of the traced calls (recorded when exported or served), or a no-op. */
  public SpanMetrics spanMetrics() {
    return spanMetrics;
  }

  /** Whether metrics are exported over OTLP (then {@link #spanMetrics} records RED metrics). */
  public boolean exportsMetrics() {
    return exportsMetrics;
  }

  /** Whether the RED metrics are on {@code /metrics} ({@code metrics.prometheus} and {@code telemetry.http}). */
  public boolean servesRedMetrics() {
    return redServed;
  }

  /** Where {@code /metrics} is served (as configured), or {@code null}. */
  public InetSocketAddress address() {
    return address;
  }

  /** What {@code /healthz} answers: {@code true} until {@link #unhealthy}. */
  public boolean healthy() {
    return healthy;
  }

  /** From now on {@code /healthz} answers {@code 503} (the pipeline is closing). */
  public void unhealthy() {
    healthy = false;
  }

  /** Logs what gospan's loss counters rose by since the last report; returns the rise. */
  public long reportLosses() {
    try {
      return losses.report();
    } catch (RuntimeException e) {
      log.warn("loss report failed", e);
      return 0;
    }
  }

  /** Collects and exports every reader's metrics now. */
  public CompletableResultCode flush() {
    return meterProvider.forceFlush();
  }

  /** Exports the last metrics, stops the readers ({@code /metrics} too) and drops the RED metrics. */
  @Override
  public void close() {
    meterProvider.forceFlush().join(10, TimeUnit.SECONDS);
    meterProvider.shutdown().join(10, TimeUnit.SECONDS); // stops /metrics too
    spanMetrics.close();
  }

  /** gospan's own resource (for self-telemetry): service.name=gospan, host.name, configured attributes. */
  static Resource ownResource(GospanConfig config) {
    AttributesBuilder b = Attributes.builder();
    b.put(AttributeKey.stringKey("service.name"), "gospan");
    config.resource().attributes().forEach(b::put);
    b.put(AttributeKey.stringKey("service.version"), GospanVersion.get());
    try {
      b.put(AttributeKey.stringKey("host.name"), InetAddress.getLocalHost().getHostName());
    } catch (IOException e) {
      // no host name
    }
    b.put(AttributeKey.longKey("process.pid"), ProcessHandle.current().pid());
    b.put(AttributeKey.stringKey("process.runtime.name"), "java");
    return Resource.getDefault().merge(Resource.create(b.build()));
  }
}
