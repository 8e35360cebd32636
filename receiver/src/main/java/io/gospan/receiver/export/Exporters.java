package io.gospan.receiver.export;

import io.gospan.receiver.config.Compression;
import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ExporterType;
import io.gospan.receiver.config.GospanConfig.ExporterConfig;
import io.gospan.receiver.config.GospanConfig.OtlpConfig;
import io.gospan.receiver.config.GospanConfig.OtlpSignalConfig;
import io.gospan.receiver.config.GospanConfig.RetryConfig;
import io.gospan.receiver.config.OtlpProtocol;
import io.gospan.receiver.config.OtlpSignal;
import io.grpc.ManagedChannel;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporterBuilder;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.exporter.otlp.metrics.OtlpGrpcMetricExporter;
import io.opentelemetry.exporter.otlp.metrics.OtlpGrpcMetricExporterBuilder;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporterBuilder;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.RetryPolicy;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Builds the SDK exporters {@code exporter.*} asks for. OTLP/gRPC goes through grpc-java over Netty
 * (the managed-channel sender, on a channel gospan configures: {@link GrpcChannels}), OTLP/HTTP
 * through the JDK HTTP client; both signals' OTLP exporters are set up by one function, {@link
 * #configure}, as the SDK autoconfigure's {@code OtlpConfigUtil.configureOtlpExporterBuilder} does.
 * The {@code file} exporter is the SDK's OTLP-JSON exporter writing one {@code {"resourceSpans":[…]}}
 * object per line, the OpenTelemetry Collector file exporter's format ({@link OtlpJsonFile}).
 */
public final class Exporters {
  private static final RetryConfig NO_RETRY = new RetryConfig(1, null, null);

  private Exporters() {}

  /**
   * The span exporter for {@code c}; {@code console} writes to {@code System.out}, and
   * {@code exporter.console: true} adds that to any other type.
   */
  public static SpanExporter spanExporter(ExporterConfig c) {
    return withConsole(c, typedSpanExporter(c));
  }

  /** {@code main} and, with {@code exporter.console: true} and another type, the console exporter beside it. */
  static SpanExporter withConsole(ExporterConfig c, SpanExporter main) {
    return c.console() && c.type() != ExporterType.CONSOLE
        ? SpanExporter.composite(main, ConsoleSpanExporter.create(System.out))
        : main;
  }

  /**
   * The exporter {@code exporter.type} names, without the console one {@code exporter.console}
   * adds (the export queue goes in between: {@link SpanExport}).
   */
  static SpanExporter typedSpanExporter(ExporterConfig c) {
    return switch (c.type()) {
      // With the export queue, the queue retries (without the SDK's backoff sleeps in between).
      case OTLP -> otlpSpanExporter(c.otlp(), c.queue().enabled() ? NO_RETRY : c.retry());
      case CONSOLE -> ConsoleSpanExporter.create(System.out);
      case FILE -> OtlpJsonFile.spans(Path.of(c.file().path()), "exporter.file.path");
      case NONE -> SpanExporter.composite();
    };
  }

  /** The metric exporter for {@code c}, or {@code null} when metrics have nowhere to go. */
  public static MetricExporter metricExporter(ExporterConfig c) {
    return switch (c.type()) {
      case OTLP -> otlpMetricExporter(c.otlp(), c.retry());
      case FILE -> c.file().metricsPath() == null
          ? null
          : OtlpJsonFile.metrics(Path.of(c.file().metricsPath()), "exporter.file.metrics_path");
      case CONSOLE, NONE -> null;
    };
  }

  static SpanExporter otlpSpanExporter(OtlpConfig o, RetryConfig r) {
    OtlpSignalConfig s = o.forSignal(OtlpSignal.TRACES);
    if (s.protocol() == OtlpProtocol.GRPC) {
      OtlpGrpcSpanExporterBuilder b = OtlpGrpcSpanExporter.builder();
      ManagedChannel channel = configure(s, r, new Setters(b::setEndpoint, b::addHeader, b::setTimeout,
          b::setCompression, b::setRetryPolicy, b::setTrustedCertificates, b::setClientTls, b::setChannel));
      // connect now, in the channel's own threads, while the sidecar loads its probes: the first
      // batch then finds the connection up (docs/benchmarks.md, "Cold start")
      channel.getState(true);
      return new ChannelOwningSpanExporter(b.build(), channel);
    }
    OtlpHttpSpanExporterBuilder b = OtlpHttpSpanExporter.builder();
    configure(s, r, new Setters(b::setEndpoint, b::addHeader, b::setTimeout,
        b::setCompression, b::setRetryPolicy, b::setTrustedCertificates, b::setClientTls, null));
    return b.build();
  }

  static MetricExporter otlpMetricExporter(OtlpConfig o, RetryConfig r) {
    OtlpSignalConfig s = o.forSignal(OtlpSignal.METRICS);
    if (s.protocol() == OtlpProtocol.GRPC) {
      OtlpGrpcMetricExporterBuilder b = OtlpGrpcMetricExporter.builder();
      ManagedChannel channel = configure(s, r, new Setters(b::setEndpoint, b::addHeader, b::setTimeout,
          b::setCompression, b::setRetryPolicy, b::setTrustedCertificates, b::setClientTls, b::setChannel));
      return new ChannelOwningMetricExporter(b.build(), channel);
    }
    OtlpHttpMetricExporterBuilder b = OtlpHttpMetricExporter.builder();
    configure(s, r, new Setters(b::setEndpoint, b::addHeader, b::setTimeout,
        b::setCompression, b::setRetryPolicy, b::setTrustedCertificates, b::setClientTls, null));
    return b.build();
  }

  /**
   * The setters every OTLP exporter builder has (span and metric, gRPC and HTTP); {@code channel}
   * only for gRPC, where TLS goes through the channel gospan builds ({@link GrpcChannels}).
   */
  record Setters(
      Consumer<String> endpoint,
      BiConsumer<String, String> header,
      Consumer<Duration> timeout,
      Consumer<String> compression,
      Consumer<RetryPolicy> retry,
      Consumer<byte[]> trustedCertificates,
      BiConsumer<byte[], byte[]> clientTls,
      Consumer<ManagedChannel> channel) {}

  /**
   * Configures one OTLP exporter builder from one signal's settings ({@link OtlpConfig#forSignal}):
   * endpoint, headers, timeout, compression, retry, TLS. For gRPC, returns the channel it made (the
   * exporter owns it); else {@code null}.
   *
   * @throws ConfigException a TLS file cannot be read or used
   */
  static ManagedChannel configure(OtlpSignalConfig s, RetryConfig r, Setters b) {
    b.endpoint().accept(s.endpoint());
    s.headers().forEach(b.header());
    b.timeout().accept(s.timeout());
    b.compression().accept(s.compression() == Compression.GZIP ? "gzip" : "none");
    b.retry().accept(retry(r));
    if (b.channel() != null) {
      ManagedChannel channel = GrpcChannels.create(s);
      b.channel().accept(channel);
      return channel;
    }
    if (s.tls().caFile() != null) {
      b.trustedCertificates().accept(read("exporter.otlp.tls.ca_file", s.tls().caFile()));
    }
    if (s.tls().certFile() != null) {
      b.clientTls().accept(
          read("exporter.otlp.tls.key_file", s.tls().keyFile()), read("exporter.otlp.tls.cert_file", s.tls().certFile()));
    }
    return null;
  }

  /** Maximum time one span export may take including retries; the span processor waits this long for a result. */
  static long worstCaseExportMillis(OtlpConfig o, RetryConfig r) {
    long attempts = r.maxAttempts();
    long timeout = o.forSignal(OtlpSignal.TRACES).timeout().toMillis();
    return attempts * timeout + (attempts - 1) * r.maxBackoff().toMillis() + 1000;
  }

  private static RetryPolicy retry(RetryConfig r) {
    if (r.maxAttempts() <= 1) {
      return null;
    }
    return RetryPolicy.builder()
        .setMaxAttempts(r.maxAttempts())
        .setInitialBackoff(r.initialBackoff())
        .setMaxBackoff(r.maxBackoff())
        .setBackoffMultiplier(1.5)
        .build();
  }

  private static byte[] read(String key, String file) {
    try {
      return Files.readAllBytes(Path.of(file));
    } catch (IOException e) {
      throw new ConfigException(key + ": cannot read '" + file + "': " + e.getMessage(), e);
    }
  }

  /**
   * Shuts the gRPC channel down with the exporter (the SDK leaves a channel it was given open), and
   * lets the export queue cut the channel's reconnect backoff short.
   */
  private static final class ChannelOwningSpanExporter implements SpanExporter, ExportQueue.Reconnectable {
    private final SpanExporter delegate;
    private final ManagedChannel channel;

    ChannelOwningSpanExporter(SpanExporter delegate, ManagedChannel channel) {
      this.delegate = delegate;
      this.channel = channel;
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      return delegate.export(spans);
    }

    @Override
    public CompletableResultCode flush() {
      return delegate.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
      CompletableResultCode r = delegate.shutdown();
      GrpcChannels.shutdown(channel);
      return r;
    }

    @Override
    public String toString() {
      return delegate.toString();
    }

    /**
     * Ends grpc-java's reconnect backoff (a channel whose connection failed waits 1 s, growing 1.6×
     * up to 120 s, before it tries again, failing calls at once meanwhile) and waits (at most
     * 200 ms) for the channel to leave {@code TRANSIENT_FAILURE}: the reset runs on the channel's
     * own executor, and a call made before it would still fail at once; a call made while the
     * channel is {@code CONNECTING} waits for the connection's outcome.
     */
    @Override
    public void reconnectNow() {
      if (channel.getState(false) != io.grpc.ConnectivityState.TRANSIENT_FAILURE) {
        return;
      }
      java.util.concurrent.CountDownLatch left = new java.util.concurrent.CountDownLatch(1);
      channel.notifyWhenStateChanged(io.grpc.ConnectivityState.TRANSIENT_FAILURE, left::countDown);
      channel.resetConnectBackoff();
      try {
        left.await(200, java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static final class ChannelOwningMetricExporter implements MetricExporter {
    private final MetricExporter delegate;
    private final ManagedChannel channel;

    ChannelOwningMetricExporter(MetricExporter delegate, ManagedChannel channel) {
      this.delegate = delegate;
      this.channel = channel;
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
      return delegate.getAggregationTemporality(instrumentType);
    }

    @Override
    public io.opentelemetry.sdk.metrics.Aggregation getDefaultAggregation(InstrumentType instrumentType) {
      return delegate.getDefaultAggregation(instrumentType);
    }

    @Override
    public io.opentelemetry.sdk.common.export.MemoryMode getMemoryMode() {
      return delegate.getMemoryMode();
    }

    @Override
    public CompletableResultCode export(Collection<MetricData> metrics) {
      return delegate.export(metrics);
    }

    @Override
    public CompletableResultCode flush() {
      return delegate.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
      CompletableResultCode r = delegate.shutdown();
      GrpcChannels.shutdown(channel);
      return r;
    }
  }
}
