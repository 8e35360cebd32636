package io.gospan.receiver.export;

import io.gospan.receiver.config.Compression;
import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ExporterType;
import io.gospan.receiver.config.GospanConfig.ExporterConfig;
import io.gospan.receiver.config.GospanConfig.OtlpConfig;
import io.gospan.receiver.config.GospanConfig.RetryConfig;
import io.gospan.receiver.config.OtlpProtocol;
import io.opentelemetry.exporter.logging.otlp.internal.metrics.OtlpStdoutMetricExporter;
import io.opentelemetry.exporter.logging.otlp.internal.traces.OtlpStdoutSpanExporter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporterBuilder;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.exporter.otlp.metrics.OtlpGrpcMetricExporter;
import io.opentelemetry.exporter.otlp.metrics.OtlpGrpcMetricExporterBuilder;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporterBuilder;
import io.grpc.ManagedChannel;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.RetryPolicy;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.Collection;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Builds the SDK exporters {@code exporter.*} asks for. OTLP/gRPC goes through grpc-java over Netty
 * (the managed-channel sender, on a channel gospan configures: {@link GrpcChannels}), OTLP/HTTP
 * through the JDK HTTP client; the {@code file} exporter is
 * the SDK's OTLP-JSON exporter writing one {@code {"resourceSpans":[…]}} object per line, the
 * OpenTelemetry Collector file exporter's format.
 */
public final class Exporters {
  private Exporters() {}

  /**
   * The span exporter for {@code c}; {@code console} writes to {@code System.out}, and
   * {@code exporter.console: true} adds that to any other type.
   */
  public static SpanExporter spanExporter(ExporterConfig c) {
    SpanExporter main = typed(c);
    return c.console() && c.type() != ExporterType.CONSOLE
        ? SpanExporter.composite(main, ConsoleSpanExporter.create(System.out))
        : main;
  }

  private static SpanExporter typed(ExporterConfig c) {
    return switch (c.type()) {
      case OTLP -> otlpSpanExporter(c.otlp(), c.retry());
      case CONSOLE -> ConsoleSpanExporter.create(System.out);
      case FILE -> OtlpStdoutSpanExporter.builder()
          .setOutput(openAppend("exporter.file.path", c.file().path()))
          .setWrapperJsonObject(true)
          .build();
      case NONE -> SpanExporter.composite();
    };
  }

  /** The metric exporter for {@code c}, or {@code null} when metrics have nowhere to go. */
  public static MetricExporter metricExporter(ExporterConfig c) {
    return switch (c.type()) {
      case OTLP -> otlpMetricExporter(c.otlp(), c.retry());
      case FILE -> c.file().metricsPath() == null
          ? null
          : OtlpStdoutMetricExporter.builder()
              .setOutput(openAppend("exporter.file.metrics_path", c.file().metricsPath()))
              .setWrapperJsonObject(true)
              .build();
      case CONSOLE, NONE -> null;
    };
  }

  static SpanExporter otlpSpanExporter(OtlpConfig o, RetryConfig r) {
    if (o.protocol() == OtlpProtocol.GRPC) {
      ManagedChannel channel = GrpcChannels.create(o);
      OtlpGrpcSpanExporterBuilder b =
          OtlpGrpcSpanExporter.builder()
              .setEndpoint(o.endpoint())
              .setChannel(channel)
              .setTimeout(o.timeout())
              .setCompression(compression(o.compression()))
              .setRetryPolicy(retry(r));
      o.headers().forEach(b::addHeader);
      return new ChannelOwningSpanExporter(b.build(), channel);
    }
    OtlpHttpSpanExporterBuilder b =
        OtlpHttpSpanExporter.builder()
            .setEndpoint(httpUrl(o.endpoint(), "/v1/traces"))
            .setTimeout(o.timeout())
            .setCompression(compression(o.compression()))
            .setRetryPolicy(retry(r));
    o.headers().forEach(b::addHeader);
    if (o.tls().caFile() != null) {
      b.setTrustedCertificates(read("exporter.otlp.tls.ca_file", o.tls().caFile()));
    }
    if (o.tls().certFile() != null) {
      b.setClientTls(
          read("exporter.otlp.tls.key_file", o.tls().keyFile()), read("exporter.otlp.tls.cert_file", o.tls().certFile()));
    }
    return b.build();
  }

  static MetricExporter otlpMetricExporter(OtlpConfig o, RetryConfig r) {
    if (o.protocol() == OtlpProtocol.GRPC) {
      ManagedChannel channel = GrpcChannels.create(o);
      OtlpGrpcMetricExporterBuilder b =
          OtlpGrpcMetricExporter.builder()
              .setEndpoint(o.endpoint())
              .setChannel(channel)
              .setTimeout(o.timeout())
              .setCompression(compression(o.compression()))
              .setRetryPolicy(retry(r));
      o.headers().forEach(b::addHeader);
      return new ChannelOwningMetricExporter(b.build(), channel);
    }
    OtlpHttpMetricExporterBuilder b =
        OtlpHttpMetricExporter.builder()
            .setEndpoint(httpUrl(o.endpoint(), "/v1/metrics"))
            .setTimeout(o.timeout())
            .setCompression(compression(o.compression()))
            .setRetryPolicy(retry(r));
    o.headers().forEach(b::addHeader);
    if (o.tls().caFile() != null) {
      b.setTrustedCertificates(read("exporter.otlp.tls.ca_file", o.tls().caFile()));
    }
    if (o.tls().certFile() != null) {
      b.setClientTls(
          read("exporter.otlp.tls.key_file", o.tls().keyFile()), read("exporter.otlp.tls.cert_file", o.tls().certFile()));
    }
    return b.build();
  }

  /** OTLP/HTTP: the endpoint is a base URL; the signal path is appended (as for OTEL_EXPORTER_OTLP_ENDPOINT). */
  static String httpUrl(String base, String signalPath) {
    String b = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
    return b.endsWith(signalPath) ? b : b + signalPath;
  }

  /** Maximum time one export may take including retries; the batcher waits this long for a result. */
  static long worstCaseExportMillis(OtlpConfig o, RetryConfig r) {
    long attempts = r.maxAttempts();
    return attempts * o.timeout().toMillis() + (attempts - 1) * r.maxBackoff().toMillis() + 1000;
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

  private static String compression(Compression c) {
    return c == Compression.GZIP ? "gzip" : "none";
  }

  private static byte[] read(String key, String file) {
    try {
      return Files.readAllBytes(Path.of(file));
    } catch (IOException e) {
      throw new ConfigException(key + ": cannot read '" + file + "': " + e.getMessage(), e);
    }
  }

  private static OutputStream openAppend(String key, String file) {
    try {
      Path p = Path.of(file);
      if (p.getParent() != null) {
        Files.createDirectories(p.getParent());
      }
      return new FileOutputStream(p.toFile(), true);
    } catch (IOException e) {
      throw new ConfigException(key + ": cannot open '" + file + "' for writing: " + e.getMessage(), e);
    }
  }

  /** Shuts the gRPC channel down with the exporter (the SDK leaves a channel it was given open). */
  private static final class ChannelOwningSpanExporter implements SpanExporter {
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
