package io.gospan.receiver.bench;

import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Not a test: a real {@code gospan run} for the JVM to record which classes it loads, e.g. with
 * {@code -XX:DumpLoadedClassList=FILE} (what {@code scripts/cds-classlist.sh} passes) or {@code
 * -XX:ArchiveClassesAtExit=FILE}. This build's jar with the recommended JVM settings plus the
 * options given as arguments, tracing the example server (OTLP/gRPC export to a receiver that
 * counts, the telemetry endpoint scraped, linking on) while the example client makes every call
 * type — unary, both streams, bidi, failing calls and deadlines — and a 20,000-call run; then
 * stopped with SIGTERM, as a container runtime stops it, so that its shutdown's classes are
 * recorded too.
 *
 * <p>Run: {@code scripts/cds-classlist.sh} (root).
 */
public final class CdsTraining {
  private CdsTraining() {}

  public static void main(String[] args) throws Exception {
    Path dir = ExampleApps.build();
    LoadBenchmark.Build plain = LoadBenchmark.builds().values().iterator().next();
    List<String> jvm = new ArrayList<>(plain.jvm());
    jvm.addAll(List.of(args));
    LoadBenchmark.Build build = new LoadBenchmark.Build(plain.jar(), List.copyOf(jvm), plain.env(), null);
    CountingOtlpReceiver receiver = new CountingOtlpReceiver();
    Path config = Files.createTempFile("gospan-cds", ".yaml");
    int telemetry = LoadBenchmark.freePort();
    try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
      Files.writeString(config, PssBenchmark.configYaml(dir, receiver, telemetry, LoadBenchmark.freePort(), server.port()));
      Process gospan = LoadBenchmark.startGospan(build, config, telemetry);
      try {
        for (String rpc : List.of("unary", "server-stream", "client-stream", "bidi")) {
          ExampleApps.runClient(dir, server.address(), "-rpc", rpc, "-n", "200", "-concurrency", "4", "-quiet");
          ExampleApps.runClient(dir, server.address(), "-rpc", rpc, "-n", "20", "-fail-code", "NOT_FOUND", "-quiet");
        }
        ExampleApps.runClient(dir, server.address(), "-n", "20", "-delay-ms", "50", "-deadline", "10ms", "-quiet");
        ExampleApps.runClient(dir, server.address(), "-n", "20000", "-concurrency", "8", "-conns", "4", "-quiet");
        Thread.sleep(5000); // the last spans exported, the reader's and exporter's timers run
        LoadBenchmark.scrape(telemetry);
      } finally {
        gospan.destroy();
        if (!gospan.waitFor(60, TimeUnit.SECONDS)) {
          gospan.destroyForcibly().waitFor();
          throw new IllegalStateException("gospan did not stop within 60 s of SIGTERM");
        }
      }
      System.err.println("gospan exited with status " + gospan.exitValue() + "; received spans: " + receiver.spans.sum());
    } finally {
      receiver.close();
      Files.deleteIfExists(config);
    }
  }
}
