package io.gospan.receiver.bench;

import io.gospan.receiver.discovery.ProcessSelector;
import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (not a test) for discovery: the time from a new process's exec to its probes being
 * attached (its first call traceable), median of 20, for
 *
 * <ul>
 *   <li>binaries gospan has not seen (each run a fresh copy: a new inode, so inspection included);
 *   <li>a binary seen before whose probes were detached with its last process (linger 0): its
 *       inspection comes from the cache, only the offsets and the uprobes are set up again;
 *   <li>a lingering binary (linger 10 min): its probes were never detached, the time is only
 *       discovery noticing the process (exec notice, {@code /proc} read);
 * </ul>
 *
 * and the CPU an idle gospan process uses with 200 unrelated processes on the machine ({@code
 * --attach-only} skips it).
 *
 * <p>Run: {@code scripts/bench-discovery.sh} (root).
 */
public final class DiscoveryBenchmark {
  private DiscoveryBenchmark() {}

  /**
   * Starts {@code binary} as a greeter server, waits until discovery traces it, stops it; returns
   * the milliseconds from just before the exec to traced. With {@code detached}, also waits until
   * its binary's probes are detached (no linger).
   */
  static double execToTraced(Sidecar sidecar, Path binary, boolean detached) throws Exception {
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(binary.toString(), "-addr", "127.0.0.1:0")
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    int pid = (int) p.pid();
    while (!sidecar.tracer().isTraced(pid)) {
      if (System.nanoTime() - t0 > 10_000_000_000L) {
        throw new IllegalStateException("pid " + pid + " not traced within 10 s");
      }
      Thread.sleep(0, 200_000);
    }
    double ms = (System.nanoTime() - t0) / 1e6;
    p.destroy();
    p.waitFor(10, TimeUnit.SECONDS);
    // the scan (every 500 ms) sees it exit
    ExeKey key = ExeKey.of(binary);
    while (sidecar.tracer().isTraced(pid) || (detached && sidecar.tracer().binary(key).isPresent())) {
      Thread.sleep(10);
    }
    return ms;
  }

  static String summary(List<Double> ms) {
    List<Double> s = new ArrayList<>(ms);
    s.sort(Double::compare);
    return String.format("%6.1f ms (%.1f-%.1f)", s.get(s.size() / 2), s.get(0), s.get(s.size() - 1));
  }

  public static void main(String[] args) throws Exception {
    Path dir = ExampleApps.build();
    Path tmp = Files.createTempDirectory("gospan-discovery");
    // only the benchmark's binaries (other Go gRPC programs on the machine are not traced)
    Sidecar.Options d = Sidecar.Options.defaults();
    Sidecar.Options ours = new Sidecar.Options(d.headerNames(), d.ringBufferBytes(), d.scanInterval(),
        new ProcessSelector(List.of(new ProcessSelector.Rule(tmp + "/*", null, null, null)), List.of()), d.procFs(),
        d.maxSkippedBinaries(), d.preference(), d.linger(), d.maxLingeringBinaries(), false, d.holdLimit());
    Sidecar.Options noLinger = ours.withLinger(Duration.ZERO, 0);
    List<Double> fresh = new ArrayList<>();
    List<Double> cached = new ArrayList<>();
    long readsBefore;
    long readsAfter;
    try (Sidecar sidecar = Sidecar.start(noLinger, e -> { }, new Tracer.Listener() {})) {
      sidecar.awaitFirstScan(Duration.ofSeconds(10));
      for (int i = 0; i < 20; i++) {
        Path copy = tmp.resolve("greeter-server-" + i);
        Files.copy(dir.resolve("greeter-server"), copy, StandardCopyOption.COPY_ATTRIBUTES);
        fresh.add(execToTraced(sidecar, copy, true));
        Files.delete(copy);
      }
      // one binary, run 20 times: each time its probes were detached with the previous process
      Path known = tmp.resolve("greeter-server-known");
      Files.copy(dir.resolve("greeter-server"), known, StandardCopyOption.COPY_ATTRIBUTES);
      execToTraced(sidecar, known, true); // seen once (read)
      readsBefore = sidecar.tracer().inspections();
      for (int i = 0; i < 20; i++) {
        cached.add(execToTraced(sidecar, known, true));
      }
      readsAfter = sidecar.tracer().inspections();
    }
    List<Double> lingering = new ArrayList<>();
    try (Sidecar sidecar = Sidecar.start(ours, e -> { }, new Tracer.Listener() {})) {
      sidecar.awaitFirstScan(Duration.ofSeconds(10));
      Path known = tmp.resolve("greeter-server-known");
      execToTraced(sidecar, known, false); // seen once: lingers from now on
      for (int i = 0; i < 20; i++) {
        lingering.add(execToTraced(sidecar, known, false));
      }
    }
    System.out.printf("exec -> probes attached (process traced), 20 runs each, median (min-max):%n");
    System.out.printf("  new binary (inspection included):             %s%n", summary(fresh));
    System.out.printf("  known binary, detached (inspection cached):   %s  (binary reads during the 20 runs: %d)%n",
        summary(cached), readsAfter - readsBefore);
    System.out.printf("  known binary, lingering (probes attached):    %s  (already traceable at exec; the time is discovery noticing)%n",
        summary(lingering));
    if (List.of(args).contains("--attach-only")) {
      return;
    }

    // Idle CPU of a gospan process with 200 unrelated processes.
    List<Process> sleepers = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      sleepers.add(new ProcessBuilder("sleep", "600").start());
    }
    Path config = Files.createTempFile("gospan-idle", ".yaml");
    Files.writeString(config, "exporter:\n  type: none\nmetrics:\n  enabled: false\ntelemetry:\n  http:\n    enabled: false\n");
    Path jar = ExampleApps.repoRoot().resolve("receiver/target/gospan.jar");
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(LoadBenchmark.JVM);
    cmd.addAll(List.of("-jar", jar.toString(), "run", "--config", config.toString()));
    Process gospan = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    try {
      Thread.sleep(15_000); // start-up and JIT settle
      long cpu0 = LoadBenchmark.cpuNs(gospan.pid());
      long t0 = System.nanoTime();
      Thread.sleep(30_000);
      double cpuShare = (LoadBenchmark.cpuNs(gospan.pid()) - cpu0) / (double) (System.nanoTime() - t0);
      System.out.printf("idle gospan, %d processes on the machine, 30 s: %.2f%% of one core, RSS %d MiB%n",
          ProcessHandle.allProcesses().count(), cpuShare * 100, LoadBenchmark.rssKb(gospan.pid()) / 1024);
    } finally {
      gospan.destroy();
      gospan.waitFor(20, TimeUnit.SECONDS);
      sleepers.forEach(Process::destroy);
    }
  }
}
