package io.gospan.receiver.cli;

import io.gospan.receiver.app.GospanSidecar;
import io.gospan.receiver.bpf.BpfException;
import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ConfigLoader;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
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
      "SIGTERM or SIGINT: flush spans, detach every probe, exit 0.",
      "Exits 1 when the kernel refuses every uprobe for lack of privileges (CAP_SYS_ADMIN): nothing could be traced."
    })
public final class RunCommand implements Callable<Integer> {

  private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "prints this help and exits 0")
  boolean help;

  @Option(names = {"-c", "--config"}, paramLabel = "FILE", description = "gospan.yaml (see config/gospan.yaml for every key)")
  Path config;

  @Override
  public Integer call() throws Exception {
    GospanSidecar gospan;
    try {
      gospan = GospanSidecar.builder(ConfigLoader.load(config)).start();
    } catch (ConfigException e) { // includes telemetry.http.address already in use
      System.err.println("gospan: configuration: " + e.getMessage());
      return ExitCodes.USAGE;
    } catch (BpfException e) {
      System.err.println("gospan: cannot load the BPF probes: " + e.getMessage());
      return ExitCodes.ERROR;
    }
    CountDownLatch stop = new CountDownLatch(1);
    // Handle the signals ourselves (not a shutdown hook) so the exit status is 0, not 128+signal.
    for (String signal : List.of("TERM", "INT")) {
      sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> stop.countDown());
    }
    // Nothing can be traced without the privileges to create uprobes: say so and exit 1.
    AtomicReference<String> fatal = new AtomicReference<>();
    gospan.noPrivileges().thenAccept(message -> {
      fatal.set(message);
      stop.countDown();
    });
    LOG.info("gospan {} running; waiting for Go gRPC processes", VersionCommand.version());
    stop.await();
    if (fatal.get() != null) {
      LOG.error("{}", fatal.get());
      gospan.close();
      return ExitCodes.ERROR;
    }
    LOG.info("stopping: flushing spans, detaching probes");
    gospan.close();
    return ExitCodes.OK;
  }
}
