package io.gospan.receiver.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The whole configuration. Every section may be omitted from the file; the compact constructors
 * fill in the defaults documented in {@code config/gospan.yaml}. Use {@link ConfigLoader} to build
 * one from a file and the environment, or {@link #defaults()}.
 */
public record GospanConfig(
    DiscoveryConfig discovery,
    HeadersConfig headers,
    StreamsConfig streams,
    SemconvConfig semconv,
    ResourceConfig resource,
    ExporterConfig exporter,
    MetricsConfig metrics,
    TelemetryConfig telemetry,
    OffsetsConfig offsets,
    LinkConfig link,
    SamplingConfig sampling) {

  public GospanConfig {
    discovery = discovery != null ? discovery : new DiscoveryConfig(null, null, null, null, null, null);
    headers = headers != null ? headers : new HeadersConfig(null);
    streams = streams != null ? streams : new StreamsConfig(null, null, null, null);
    semconv = semconv != null ? semconv : new SemconvConfig(null);
    resource = resource != null ? resource : new ResourceConfig(null);
    exporter = exporter != null ? exporter : new ExporterConfig(null, null, null, null, null, null, null);
    metrics = metrics != null ? metrics : new MetricsConfig(null, null, null);
    telemetry = telemetry != null ? telemetry : new TelemetryConfig(null);
    offsets = offsets != null ? offsets : new OffsetsConfig(null);
    link = link != null ? link : new LinkConfig(null, null, null, null);
    sampling = sampling != null ? sampling : new SamplingConfig(null, null);
  }

  /** The configuration with no file and no environment: trace every Go gRPC process, OTLP/gRPC to localhost:4317. */
  public static GospanConfig defaults() {
    return new GospanConfig(null, null, null, null, null, null, null, null, null, null, null);
  }

  /**
   * Which processes to trace. Empty {@code instrument} = every Go process that links grpc-go.
   *
   * @param linger how long a binary's probes stay attached after its last process exited, so a
   *     short-lived process of it (a command-line client) is traced from its first call; 0 =
   *     detached with the last process. Default 10 minutes
   * @param maxLingeringBinaries binaries lingering at once at most; beyond, the one lingering
   *     longest is detached. Default 64
   * @param holdNewBinaries hold each exec of a binary not judged yet until gospan has judged it
   *     (fanotify FAN_OPEN_EXEC_PERM), so that its first run is traced too. Default false
   * @param holdLimit the longest an exec is held, whatever inspection says. Default 1 s
   */
  public record DiscoveryConfig(
      List<Selector> instrument, List<Selector> excludeInstrument, Duration linger, Integer maxLingeringBinaries,
      Boolean holdNewBinaries, Duration holdLimit) {
    public DiscoveryConfig {
      instrument = instrument != null ? List.copyOf(instrument) : List.of();
      excludeInstrument = excludeInstrument != null ? List.copyOf(excludeInstrument) : List.of();
      linger = linger != null ? linger : Duration.ofMinutes(10);
      maxLingeringBinaries = maxLingeringBinaries != null ? maxLingeringBinaries : 64;
      holdNewBinaries = holdNewBinaries != null ? holdNewBinaries : false;
      holdLimit = holdLimit != null ? holdLimit : Duration.ofSeconds(1);
    }
  }

  /**
   * Matches a process when every key that is set matches.
   *
   * @param exePath glob on the executable's absolute path
   * @param name regular expression on the executable's file name (whole-name match)
   * @param openPort the process listens on this TCP port
   * @param containerId the process runs in this container (full id or a prefix of at least 12 hex digits)
   */
  public record Selector(String exePath, String name, Integer openPort, String containerId) {}

  /**
   * Extra header names exported as {@code rpc.request.metadata.<name>} / {@code
   * rpc.response.metadata.<name>} attributes.
   *
   * @param allow captured in requests, response headers and trailers (the headers probe set reads
   *     the latter: more hits per call)
   * @param allowRequest captured in requests only, where they are received (a server span; a client
   *     span too when gospan sees its server): no extra hit
   */
  public record HeadersConfig(List<String> allow, List<String> allowRequest) {
    public HeadersConfig {
      allow = allow != null ? List.copyOf(allow) : List.of();
      allowRequest = allowRequest != null ? List.copyOf(allowRequest) : List.of();
    }

    public HeadersConfig(List<String> allow) {
      this(allow, List.of());
    }

    /** Every name exported as metadata. */
    public List<String> all() {
      java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>(allow);
      out.addAll(allowRequest);
      return List.copyOf(out);
    }
  }

  /**
   * In-flight stream bookkeeping.
   *
   * @param timeout a stream whose end has not been seen this long after its start ends, marked incomplete
   * @param maxInFlight streams tracked at once; more are not traced and counted
   * @param linkWait how long a span waits for its parent: a finished server span for its client span's
   *     start, a call made while serving one for that served call's final trace id
   * @param maxPendingLinks finished server spans held at once; more are exported unlinked and counted
   */
  public record StreamsConfig(Duration timeout, Integer maxInFlight, Duration linkWait, Integer maxPendingLinks) {
    public StreamsConfig {
      timeout = timeout != null ? timeout : Duration.ofMinutes(2);
      maxInFlight = maxInFlight != null ? maxInFlight : 65_536;
      linkWait = linkWait != null ? linkWait : Duration.ofSeconds(2);
      maxPendingLinks = maxPendingLinks != null ? maxPendingLinks : 16_384;
    }
  }

  /**
   * Which traces are exported (head sampling, the OpenTelemetry SDK's samplers): decided once per
   * trace, when its trace id is final, the same in every gospan that traces part of it. RED metrics
   * count every call, sampled or not.
   *
   * @param sampler the sampler; default {@code always_on}
   * @param ratio the fraction of traces {@code traceidratio} and {@code parentbased_traceidratio}
   *     keep, 0 to 1; default 1
   */
  public record SamplingConfig(SamplerName sampler, Double ratio) {
    public SamplingConfig {
      sampler = sampler != null ? sampler : SamplerName.ALWAYS_ON;
      ratio = ratio != null ? ratio : 1.0;
    }
  }

  /** Which RPC semantic conventions to emit: {@code stable} (default), {@code old} or {@code dup}. */
  /**
   * Where probe offsets come from when the embedded catalog and the binary's DWARF both answer
   * and disagree (a disagreement is logged either way).
   *
   * @param prefer {@code dwarf} (default: it describes exactly what was compiled) or {@code catalog}
   */
  public record OffsetsConfig(String prefer) {
    public OffsetsConfig {
      prefer = prefer != null ? prefer : "dwarf";
      if (!prefer.equals("dwarf") && !prefer.equals("catalog")) {
        throw new IllegalArgumentException("must be dwarf or catalog, got '" + prefer + "'");
      }
    }

    /** Whether the embedded catalog wins over the binary's DWARF ({@code prefer: catalog}). */
    public boolean preferCatalog() {
      return prefer.equals("catalog");
    }
  }

  public record SemconvConfig(SemconvMode rpc) {
    public SemconvConfig {
      rpc = rpc != null ? rpc : SemconvMode.STABLE;
    }
  }

  /** Resource attributes added to every traced process's resource and to gospan's own. */
  public record ResourceConfig(Map<String, String> attributes) {
    public ResourceConfig {
      attributes = attributes != null ? Map.copyOf(attributes) : Map.of();
    }
  }

  /** Where spans (and metrics) go. */
  /**
   * Where spans go.
   *
   * @param console also print every span as one line on stdout, whatever {@code type} is (the
   *     demo uses it to show spans while exporting them over OTLP)
   */
  public record ExporterConfig(
      ExporterType type,
      OtlpConfig otlp,
      FileConfig file,
      BatchConfig batch,
      RetryConfig retry,
      Boolean console,
      QueueConfig queue) {
    public ExporterConfig {
      queue = queue != null ? queue : new QueueConfig(null, null, null);
      console = console != null ? console : Boolean.FALSE;
      type = type != null ? type : ExporterType.OTLP;
      otlp = otlp != null ? otlp : new OtlpConfig(null, null, null, null, null, null, null, null);
      file = file != null ? file : new FileConfig(null, null);
      batch = batch != null ? batch : new BatchConfig(null, null, null, null, null);
      retry = retry != null ? retry : new RetryConfig(null, null, null);
    }
  }

  /**
   * OTLP exporter settings, shared by spans and metrics; {@code traces} and {@code metrics} override
   * any of them for one signal (the {@code OTEL_EXPORTER_OTLP_TRACES_*} / {@code _METRICS_*}
   * variables land there). {@link #forSignal} gives the settings one exporter uses.
   *
   * @param endpoint {@code http://} (plaintext) or {@code https://} (TLS) URL; for http/protobuf a base
   *     URL to which {@code /v1/traces} and {@code /v1/metrics} are appended. {@code null} = the
   *     protocol's default (localhost:4317 for grpc, localhost:4318 for http/protobuf)
   */
  public record OtlpConfig(
      OtlpProtocol protocol,
      String endpoint,
      Map<String, String> headers,
      Compression compression,
      Duration timeout,
      TlsConfig tls,
      OtlpSignalOverrides traces,
      OtlpSignalOverrides metrics) {
    public OtlpConfig {
      protocol = protocol != null ? protocol : OtlpProtocol.GRPC;
      if (endpoint == null || endpoint.isBlank()) {
        endpoint = defaultEndpoint(protocol);
      }
      headers = headers != null ? Map.copyOf(headers) : Map.of();
      compression = compression != null ? compression : Compression.NONE;
      timeout = timeout != null ? timeout : Duration.ofSeconds(10);
      tls = tls != null ? tls : new TlsConfig(null, null, null);
      traces = traces != null ? traces : OtlpSignalOverrides.NONE;
      metrics = metrics != null ? metrics : OtlpSignalOverrides.NONE;
    }

    static String defaultEndpoint(OtlpProtocol protocol) {
      return protocol == OtlpProtocol.GRPC ? "http://localhost:4317" : "http://localhost:4318";
    }

    /**
     * The settings of {@code signal}'s exporter: its overrides over the shared ones (headers merged,
     * the signal's win; TLS files each on its own). The endpoint, as the OTLP exporter spec says: a
     * per-signal endpoint is used as it is; the shared one is, for http/protobuf, a base URL to which
     * the signal's path ({@code /v1/traces}, {@code /v1/metrics}) is appended; when only the signal's
     * protocol differs from the shared one and no endpoint is set, that protocol's default.
     */
    public OtlpSignalConfig forSignal(OtlpSignal signal) {
      OtlpSignalOverrides o = signal == OtlpSignal.TRACES ? traces : metrics;
      OtlpProtocol p = o.protocol() != null ? o.protocol() : protocol;
      String url;
      if (o.endpoint() != null && !o.endpoint().isBlank()) {
        url = o.endpoint();
      } else {
        String base = p != protocol && endpoint.equals(defaultEndpoint(protocol)) ? defaultEndpoint(p) : endpoint;
        url = p == OtlpProtocol.GRPC ? base : appendPath(base, signal.httpPath());
      }
      Map<String, String> h = new java.util.LinkedHashMap<>(headers);
      h.putAll(o.headers());
      TlsConfig t = o.tls() == null ? tls : new TlsConfig(
          o.tls().caFile() != null ? o.tls().caFile() : tls.caFile(),
          o.tls().certFile() != null ? o.tls().certFile() : tls.certFile(),
          o.tls().keyFile() != null ? o.tls().keyFile() : tls.keyFile());
      return new OtlpSignalConfig(
          signal,
          p,
          url,
          Map.copyOf(h),
          o.compression() != null ? o.compression() : compression,
          o.timeout() != null ? o.timeout() : timeout,
          t);
    }

    private static String appendPath(String base, String signalPath) {
      String b = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
      return b.endsWith(signalPath) ? b : b + signalPath;
    }
  }

  /** Per-signal OTLP settings ({@code exporter.otlp.traces}, {@code exporter.otlp.metrics}); {@code null} = the shared one. */
  public record OtlpSignalOverrides(
      OtlpProtocol protocol,
      String endpoint,
      Map<String, String> headers,
      Compression compression,
      Duration timeout,
      TlsConfig tls) {
    static final OtlpSignalOverrides NONE = new OtlpSignalOverrides(null, null, null, null, null, null);

    public OtlpSignalOverrides {
      headers = headers != null ? Map.copyOf(headers) : Map.of();
    }
  }

  /**
   * What one OTLP exporter uses ({@link OtlpConfig#forSignal}).
   *
   * @param endpoint the full URL the exporter sends to (for http/protobuf, with the signal's path)
   */
  public record OtlpSignalConfig(
      OtlpSignal signal,
      OtlpProtocol protocol,
      String endpoint,
      Map<String, String> headers,
      Compression compression,
      Duration timeout,
      TlsConfig tls) {}

  /** PEM files for TLS: a CA bundle to trust, and a client certificate + key for mutual TLS. */
  public record TlsConfig(String caFile, String certFile, String keyFile) {}

  /**
   * The {@code file} exporter: spans as OTLP JSON lines appended to {@code path}; metrics likewise to
   * {@code metricsPath} when set.
   */
  public record FileConfig(String path, String metricsPath) {
    public FileConfig {
      path = path != null ? path : "gospan-spans.jsonl";
    }
  }

  /** Bounded batching between span assembly and the exporter. */
  public record BatchConfig(
      Integer maxQueueSize,
      @com.fasterxml.jackson.databind.annotation.JsonDeserialize(using = ByteSizeParser.class) Long maxQueueBytes,
      Integer maxExportBatchSize,
      Duration scheduleDelay,
      @com.fasterxml.jackson.databind.annotation.JsonDeserialize(using = ByteSizeParser.class) Long maxExportRequestBytes) {
    /** Default bound of the span processor's queue in bytes (estimated heap of the spans): 8 MiB. */
    public static final long DEFAULT_MAX_QUEUE_BYTES = 8L << 20;
    /**
     * Default bound of one export request: 3 MiB of OTLP protobuf before compression, below the 4 MiB
     * (4,194,304 bytes) a gRPC server takes by default (grpc-go's {@code defaultServerMaxReceiveMessageSize},
     * and so the OpenTelemetry Collector's and Jaeger's OTLP/gRPC receivers unless configured), with
     * room for the estimate's error.
     */
    public static final long DEFAULT_MAX_EXPORT_REQUEST_BYTES = 3L << 20;

    public BatchConfig {
      maxQueueSize = maxQueueSize != null ? maxQueueSize : 32768;
      maxQueueBytes = maxQueueBytes != null ? maxQueueBytes : DEFAULT_MAX_QUEUE_BYTES;
      maxExportBatchSize = maxExportBatchSize != null ? maxExportBatchSize : 2048;
      // the OpenTelemetry SDK's default (OTEL_BSP_SCHEDULE_DELAY). An export costs the sidecar ~4 ms
      // of CPU whatever its size (docs/benchmarks.md, "The batch processor's delay"): where a batch
      // takes longer than the delay to fill (below ~2,000 spans/s at 1 s, ~400 at 5 s), a longer
      // delay means fewer exports
      scheduleDelay = scheduleDelay != null ? scheduleDelay : Duration.ofSeconds(5);
      maxExportRequestBytes = maxExportRequestBytes != null ? maxExportRequestBytes : DEFAULT_MAX_EXPORT_REQUEST_BYTES;
    }
  }

  /** Retries of a failed OTLP export (retryable codes only), with exponential backoff. */
  public record RetryConfig(Integer maxAttempts, Duration initialBackoff, Duration maxBackoff) {
    public RetryConfig {
      maxAttempts = maxAttempts != null ? maxAttempts : 5;
      initialBackoff = initialBackoff != null ? initialBackoff : Duration.ofSeconds(1);
      maxBackoff = maxBackoff != null ? maxBackoff : Duration.ofSeconds(5);
    }
  }

  /**
   * The export queue between the span processor and the OTLP span exporter: spans the collector
   * does not take (down, unreachable, answering a retryable error) wait here and are sent, oldest
   * first, as soon as it answers again; beyond {@code maxBytes} the oldest are dropped, counted.
   *
   * @param maxBytes the queue's bound in bytes (config: a number, or with a unit {@code KiB},
   *     {@code MiB}, {@code GiB}); in memory an estimate of the spans' heap size, on disk the
   *     files' size (at most 2 GiB - 1). {@code 0} = no queue: a batch is dropped after the SDK's
   *     retries ({@code exporter.retry.*}). Default 32 MiB
   * @param directory when set, the queue is kept in files there (the OpenTelemetry Java contrib
   *     disk-buffering library), survives a restart of gospan and is sent after it; else in memory
   * @param retryInterval how often the oldest waiting batch is tried again while the collector
   *     does not answer (each try also cuts grpc-java's reconnect backoff short). Default 500 ms
   */
  public record QueueConfig(
      @com.fasterxml.jackson.databind.annotation.JsonDeserialize(using = ByteSizeParser.class) Long maxBytes,
      String directory,
      Duration retryInterval) {
    /** Default bound: 32 MiB. */
    public static final long DEFAULT_MAX_BYTES = 32L << 20;

    public QueueConfig {
      maxBytes = maxBytes != null ? maxBytes : DEFAULT_MAX_BYTES;
      directory = directory != null && !directory.isBlank() ? directory : null;
      retryInterval = retryInterval != null ? retryInterval : Duration.ofMillis(500);
    }

    /** Whether spans are queued at all ({@code max_bytes > 0}). */
    public boolean enabled() {
      return maxBytes > 0;
    }
  }

  /**
   * RED metrics and self-telemetry over OTLP (same exporter settings as spans), and the RED metrics
   * on {@code /metrics}.
   *
   * @param enabled export over OTLP (default true)
   * @param exportInterval the OTLP export's period (default 30 s)
   * @param prometheus the RED metrics also on {@code telemetry.http}'s {@code /metrics}, labelled with
   *     their process's resource (default true; without {@code telemetry.http} nothing is served)
   */
  public record MetricsConfig(Boolean enabled, Duration exportInterval, Boolean prometheus) {
    public MetricsConfig {
      enabled = enabled != null ? enabled : Boolean.TRUE;
      exportInterval = exportInterval != null ? exportInterval : Duration.ofSeconds(30);
      prometheus = prometheus != null ? prometheus : Boolean.TRUE;
    }
  }

  /**
   * Linking across gospans (one gospan per pod or host): the link service this gospan serves, and
   * asks other gospans through, at the same port.
   *
   * @param enabled serve and ask (default true); false: a server span whose client another gospan
   *     traced is a root after {@code streams.link_wait}
   * @param listen {@code host:port} the link service listens on; other gospans are asked at this
   *     port on their client's address. Default {@code 0.0.0.0:9465}
   * @param tls mutual TLS between gospans (all of {@code ca_file}, {@code cert_file}, {@code
   *     key_file}, or none: plaintext)
   * @param clockSkew how far another gospan's clock may be from this one's (the tolerance around a
   *     client span when another gospan names its server span's start). Default 250 ms
   */
  public record LinkConfig(Boolean enabled, String listen, LinkTlsConfig tls, Duration clockSkew) {
    public LinkConfig {
      enabled = enabled != null ? enabled : Boolean.TRUE;
      listen = listen != null ? listen : "0.0.0.0:9465";
      tls = tls != null ? tls : new LinkTlsConfig(null, null, null, null);
      clockSkew = clockSkew != null ? clockSkew : Duration.ofMillis(250);
    }
  }

  /**
   * PEM files for the link service's mutual TLS: the CA that signed every gospan's certificate,
   * this gospan's certificate (presented as server and as client) and its PKCS#8 key; and the DNS
   * name the gospans' certificates carry (peers are reached by IP address, so this name is checked
   * instead). Default name {@code gospan-link}.
   */
  public record LinkTlsConfig(String caFile, String certFile, String keyFile, String serverName) {
    public LinkTlsConfig {
      serverName = serverName != null ? serverName : "gospan-link";
    }

    /** Whether TLS is on (any file set; validation wants all three). */
    public boolean enabled() {
      return caFile != null || certFile != null || keyFile != null;
    }
  }

  /** gospan's own HTTP endpoint. */
  public record TelemetryConfig(HttpConfig http) {
    public TelemetryConfig {
      http = http != null ? http : new HttpConfig(null, null);
    }
  }

  /** {@code /metrics} (Prometheus text) and {@code /healthz} on {@code address} ({@code host:port}). */
  public record HttpConfig(Boolean enabled, String address) {
    public HttpConfig {
      enabled = enabled != null ? enabled : Boolean.TRUE;
      address = address != null ? address : "0.0.0.0:9464";
    }
  }
}
