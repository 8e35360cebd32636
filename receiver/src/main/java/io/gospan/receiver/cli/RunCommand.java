package io.gospan.receiver.cli;

import io.gospan.receiver.bpf.BpfException;
import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.discovery.ProcessEntry;
import io.gospan.receiver.discovery.ProcessSelector;
import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.event.ProcessInfo;
import io.gospan.receiver.export.Pipeline;
import io.gospan.receiver.probe.HeaderNames;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code gospan run}: the sidecar. Runs until SIGTERM or SIGINT, then flushes and exits 0. */
@Command(
    name = "run",
    description = {
      "Runs the sidecar: finds the Go gRPC processes it can see, attaches uprobes, exports spans over OTLP.",
      "Without --config: trace every Go gRPC process, OTLP/gRPC to localhost:4317 (or OTEL_EXPORTER_OTLP_ENDPOINT).",
      "SIGTERM or SIGINT: flush spans, detach every probe, exit 0."
    })
public final class RunCommand implements Callable<Integer> {

  private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

  @Option(names = {"-c", "--config"}, paramLabel = "FILE", description = "gospan.yaml (see config/gospan.yaml for every key)")
  Path config;

  @Override
  public Integer call() throws Exception {
    GospanConfig cfg;
    HeaderNames names;
    ProcessSelector selector;
    try {
      cfg = ConfigLoader.load(config);
      names = HeaderNames.of(cfg.headers().allow());
      selector = new ProcessSelector(rules(cfg.discovery().instrument()), rules(cfg.discovery().excludeInstrument()));
    } catch (ConfigException | IllegalArgumentException e) {
      System.err.println("gospan: configuration: " + e.getMessage());
      return ExitCodes.USAGE;
    }
    Pipeline pipeline;
    try {
      pipeline = Pipeline.create(cfg);
    } catch (ConfigException e) { // e.g. telemetry.http.address already in use
      System.err.println("gospan: configuration: " + e.getMessage());
      return ExitCodes.USAGE;
    }
    Sidecar.Options d = Sidecar.Options.defaults();
    Sidecar sidecar;
    try {
      sidecar =
          Sidecar.start(
              new Sidecar.Options(
                  names, d.ringBufferBytes(), d.scanInterval(), selector, d.procFs(), d.maxSkippedBinaries(),
                  cfg.offsets().preference()),
              pipeline::accept,
              new Tracer.Listener() {
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
              });
    } catch (BpfException e) {
      System.err.println("gospan: cannot load the BPF probes: " + e.getMessage());
      pipeline.close();
      return ExitCodes.ERROR;
    }
    Telemetry.register(pipeline, sidecar);
    CountDownLatch stop = new CountDownLatch(1);
    // Handle the signals ourselves (not a shutdown hook) so the exit status is 0, not 128+signal.
    for (String signal : List.of("TERM", "INT")) {
      sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> stop.countDown());
    }
    LOG.info("gospan {} running; waiting for Go gRPC processes", VersionCommand.version());
    stop.await();
    LOG.info("stopping: flushing spans, detaching probes");
    sidecar.close();
    pipeline.close();
    return ExitCodes.OK;
  }

  static List<ProcessSelector.Rule> rules(List<GospanConfig.Selector> selectors) {
    return selectors.stream()
        .map(s -> new ProcessSelector.Rule(s.exePath(), s.name(), s.openPort(), s.containerId()))
        .collect(Collectors.toList());
  }
}
