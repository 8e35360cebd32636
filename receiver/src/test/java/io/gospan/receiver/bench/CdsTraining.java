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
    long spans = run(List.of(args), 200, 20_000);
    System.err.println("received spans: " + spans);
  }

  /**
   * One training run: this build's jar with the recommended JVM settings plus {@code jvmOptions},
   * tracing the example server while the client makes {@code callsPerType} calls of each call type
   * (and a tenth as many failing ones), 20 that miss their deadline, then {@code bulk} unary calls
   * at 8 in flight (0: none); stopped with SIGTERM 5 s later.
   *
   * @return the spans the receiver counted (server spans only: the configuration selects the
   *     server by its port)
   * @throws IllegalStateException gospan did not trace, or did not stop within 60 s of SIGTERM
   */
  static long run(List<String> jvmOptions, int callsPerType, int bulk) throws Exception {
    Path dir = ExampleApps.build();
    LoadBenchmark.Build plain = LoadBenchmark.builds().values().iterator().next();
    List<String> jvm = new ArrayList<>(plain.jvm());
    jvm.addAll(jvmOptions);
    LoadBenchmark.Build build = new LoadBenchmark.Build(plain.jar(), List.copyOf(jvm), plain.env(), null);
    CountingOtlpReceiver receiver = new CountingOtlpReceiver();
    Path config = Files.createTempFile("gospan-cds", ".yaml");
    int telemetry = LoadBenchmark.freePort();
    try (ExampleApps.Server server = ExampleApps.startServer(dir)) {
      Files.writeString(config, PssBenchmark.configYaml(dir, receiver, telemetry, LoadBenchmark.freePort(), server.port()));
      Process gospan = LoadBenchmark.startGospan(build, config, telemetry);
      try {
        String n = Integer.toString(callsPerType);
        String failing = Integer.toString(Math.max(1, callsPerType / 10));
        for (String rpc : List.of("unary", "server-stream", "client-stream", "bidi")) {
          ExampleApps.runClient(dir, server.address(), "-rpc", rpc, "-n", n, "-concurrency", "4", "-quiet");
          ExampleApps.runClient(dir, server.address(), "-rpc", rpc, "-n", failing, "-fail-code", "NOT_FOUND", "-quiet");
        }
        ExampleApps.runClient(dir, server.address(), "-n", "20", "-delay-ms", "50", "-deadline", "10ms", "-quiet");
        if (bulk > 0) {
          ExampleApps.runClient(dir, server.address(), "-n", Integer.toString(bulk), "-concurrency", "8", "-conns", "4", "-quiet");
        }
        Thread.sleep(5000); // the last spans exported, the reader's and exporter's timers run
        LoadBenchmark.scrape(telemetry);
      } finally {
        gospan.destroy();
        if (!gospan.waitFor(60, TimeUnit.SECONDS)) {
          gospan.destroyForcibly().waitFor();
          throw new IllegalStateException("gospan did not stop within 60 s of SIGTERM");
        }
      }
      System.err.println("gospan exited with status " + gospan.exitValue());
      return receiver.spans.sum();
    } finally {
      receiver.close();
      Files.deleteIfExists(config);
    }
  }
}
