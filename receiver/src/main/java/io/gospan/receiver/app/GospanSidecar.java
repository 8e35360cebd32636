package io.gospan.receiver.app;

import io.gospan.offsets.resolve.Preference;
import io.gospan.receiver.bpf.BpfException;
import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.discovery.EarlyInspections;
import io.gospan.receiver.discovery.ProcFs;
import io.gospan.receiver.discovery.ProcessEntry;
import io.gospan.receiver.discovery.ProcessSelector;
import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.event.ProcessInfo;
import io.gospan.receiver.export.Pipeline;
import io.gospan.receiver.link.LinkService;
import io.gospan.receiver.link.LinkSettings;
import io.gospan.receiver.probe.HeaderNames;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * gospan's composition root: the one place that knows every part and wires them from a {@link
 * GospanConfig}.
 *
 * <pre>
 *  discovery.Sidecar ── header events ──► export.Pipeline (span assembly, SpanExport, SelfTelemetry;
 *    probes, ring buffer, Tracer             ▲ wired by PipelineBuilder)
 *    └─ Tracer.Listener ─────────────────────┘ registerProcess / processExited / hintProcess
 *  ProbeTelemetry: the BPF counters and the tracer's state on the pipeline's meter
 *  link.LinkService (link.enabled): serves other gospans from span assembly, and is the
 *    RemoteLinks span assembly asks them through
 * </pre>
 *
 * <pre>{@code
 * try (GospanSidecar g = GospanSidecar.builder(ConfigLoader.load(path)).start()) {
 *   ... // until SIGTERM
 * }   // flushes spans, detaches every probe
 * }</pre>
 *
 * <p>Configuration errors ({@link ConfigException}: a header name refused by the credential
 * policy, a bad selector, the telemetry port in use) are thrown before any probe is loaded; a
 * {@link BpfException} means the probes could not be loaded (privileges, kernel).
 */
public final class GospanSidecar implements AutoCloseable {
  private final Pipeline pipeline;
  private final Sidecar sidecar;
  private final LinkService link; // null: link.enabled false, or linking off (streams.link_wait 0)
  private final CompletableFuture<String> noPrivileges;

  private GospanSidecar(Pipeline pipeline, Sidecar sidecar, LinkService link, CompletableFuture<String> noPrivileges) {
    this.pipeline = pipeline;
    this.sidecar = sidecar;
    this.link = link;
    this.noPrivileges = noPrivileges;
  }

  /**
   * Completes, with one line naming the missing capability, when the kernel refused every probe
   * of a binary for lack of privileges ({@code EACCES}/{@code EPERM}) and no probe was attached
   * before: nothing can be traced ({@code gospan run} then exits 1). Never completes otherwise.
   */
  public CompletionStage<String> noPrivileges() {
    return noPrivileges;
  }

  public static Builder builder(GospanConfig config) {
    return new Builder(config);
  }

  /** The span pipeline (assembly and export). */
  public Pipeline pipeline() {
    return pipeline;
  }

  /** The probes, the ring buffer reader and discovery. */
  public Sidecar sidecar() {
    return sidecar;
  }

  /** The link service (linking across gospans), or {@code null} when it is off. */
  public LinkService link() {
    return link;
  }

  /** Where {@code /metrics} and {@code /healthz} are served, or {@code null}. */
  public InetSocketAddress telemetryAddress() {
    return pipeline.telemetryAddress();
  }

  /** Stops discovery and polling (draining the ring buffer), detaches every probe, then flushes and stops export. */
  @Override
  public void close() {
    try {
      sidecar.close();
    } finally {
      try {
        if (link != null) {
          link.close();
        }
      } finally {
        pipeline.close();
      }
    }
  }

  /** What the configuration does not say: overrides for tests and embedding. */
  public static final class Builder {
    private final GospanConfig config;
    private final PipelineBuilder pipeline;
    private ProcFs procFs = ProcFs.system();
    private Duration scanInterval;
    private int ringBufferBytes;
    private boolean startLink = true;

    private Builder(GospanConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      this.pipeline = PipelineBuilder.create(config);
      Sidecar.Options d = Sidecar.Options.defaults();
      this.scanInterval = d.scanInterval();
      this.ringBufferBytes = d.ringBufferBytes();
    }

    /** Spans go here instead of the configured exporter. */
    public Builder spanExporter(SpanExporter e) {
      pipeline.spanExporter(e);
      return this;
    }

    /** Also read gospan's own metrics with {@code reader} (tests). */
    public Builder metricReader(MetricReader reader) {
      pipeline.metricReader(reader);
      return this;
    }

    /** Whether to serve {@code telemetry.http} (default: as the configuration says). */
    public Builder telemetryServer(boolean start) {
      pipeline.telemetryServer(start);
      return this;
    }

    /** Whether to start the link service (default: as {@code link.enabled} says). */
    public Builder linkService(boolean start) {
      this.startLink = start;
      return this;
    }

    /** How often {@code /proc} is scanned (default 500 ms). */
    public Builder scanInterval(Duration d) {
      this.scanInterval = d;
      return this;
    }

    /** The procfs to scan (default {@code /proc}). */
    public Builder procFs(ProcFs p) {
      this.procFs = p;
      return this;
    }

    /**
     * Validates the configuration's parts that need other packages, builds the pipeline (exporters,
     * {@code /metrics}), loads the probes and starts discovery.
     *
     * @throws ConfigException a configuration value refused here (one line naming the key)
     * @throws BpfException the probes could not be loaded
     */
    public GospanSidecar start() {
      HeaderNames names;
      ProcessSelector selector;
      try {
        names = HeaderNames.of(config.headers().allow(), config.headers().allowRequest());
        selector = new ProcessSelector(
            rules(config.discovery().instrument()), rules(config.discovery().excludeInstrument()));
      } catch (IllegalArgumentException e) {
        throw new ConfigException(e.getMessage(), e);
      }
      Preference preference = config.offsets().preferCatalog() ? Preference.CATALOG : Preference.DWARF;
      Sidecar.Options d = Sidecar.Options.defaults();
      Sidecar.Options options =
          new Sidecar.Options(names, ringBufferBytes, scanInterval, selector, procFs, d.maxSkippedBinaries(), preference)
              .withLinger(config.discovery().linger(), config.discovery().maxLingeringBinaries())
              .withHold(config.discovery().holdNewBinaries(), config.discovery().holdLimit());

      // the binaries of the processes running now are read while the pipeline is built and the
      // probes load (only read: nothing is attached before the probes are loaded, and a
      // configuration error below still fails the start before any probe is)
      EarlyInspections early = EarlyInspections.start(options);
      Pipeline p;
      try {
        p = pipeline.build();
      } catch (RuntimeException e) {
        early.close();
        throw e;
      }
      LinkService link = null;
      if (startLink && config.link().enabled() && !config.streams().linkWait().isZero()) {
        try {
          link = LinkService.start(linkSettings(config), p.assembler(), p.meter());
        } catch (IllegalArgumentException e) {
          early.close();
          p.close();
          throw new ConfigException("link.tls: " + e.getMessage(), e);
        }
      }
      CompletableFuture<String> noPrivileges = new CompletableFuture<>();
      Sidecar s;
      try {
        s = Sidecar.start(options, p, listener(p, noPrivileges), early); // a ProbeEventSink: each poll's events in runs
      } catch (RuntimeException e) {
        early.close();
        if (link != null) {
          link.close();
        }
        p.close();
        throw e;
      }
      ProbeTelemetry.register(p.meter(), s);
      return new GospanSidecar(p, s, link, noPrivileges);
    }
  }

  /** Discovery's facts about processes, handed to span assembly (their resources). */
  private static Tracer.Listener listener(Pipeline pipeline, CompletableFuture<String> noPrivileges) {
    return new Tracer.Listener() {
      @Override
      public void noPrivileges(String message) {
        noPrivileges.complete(message);
      }

      @Override
      public void attached(ProcessEntry p, TracedBinary b) {
        pipeline.registerProcess(new ProcessInfo(p.pid(), p.executable(), b.goVersion()));
      }

      @Override
      public void exited(int pid, TracedBinary b) {
        pipeline.processExited(pid);
      }

      @Override
      public void undiscovered(int pid, TracedBinary b) {
        pipeline.hintProcess(new ProcessInfo(pid, b.executable(), b.goVersion()));
      }
    };
  }

  /** The link service's settings from {@code link.*} and {@code streams.link_wait}. */
  static LinkSettings linkSettings(GospanConfig c) {
    var l = c.link();
    InetSocketAddress a = io.gospan.receiver.config.ConfigLoader.parseHostPort("link.listen", l.listen());
    InetSocketAddress listen = new InetSocketAddress(a.getHostString(), a.getPort());
    LinkSettings.Tls tls = null;
    if (l.tls().enabled()) {
      tls = new LinkSettings.Tls(java.nio.file.Path.of(l.tls().caFile()), java.nio.file.Path.of(l.tls().certFile()),
          java.nio.file.Path.of(l.tls().keyFile()), l.tls().serverName());
    }
    return LinkSettings.of(listen, a.getPort(), tls, c.streams().linkWait()).withClockSkew(l.clockSkew());
  }

  static List<ProcessSelector.Rule> rules(List<GospanConfig.Selector> selectors) {
    return selectors.stream()
        .map(s -> new ProcessSelector.Rule(s.exePath(), s.name(), s.openPort(), s.containerId()))
        .toList();
  }
}
