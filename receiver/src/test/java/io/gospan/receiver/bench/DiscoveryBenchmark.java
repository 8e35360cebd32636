package io.gospan.receiver.bench;

import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Benchmark (not a test) for discovery: the time from a new process's exec to its probes being
 * attached (its first call traceable), for binaries gospan has not seen (each run a fresh copy:
 * a new inode, so inspection included), median of 20; and the CPU an idle gospan process uses
 * with 200 unrelated processes on the machine.
 *
 * <p>Run: {@code scripts/bench-discovery.sh} (root).
 */
public final class DiscoveryBenchmark {
  private DiscoveryBenchmark() {}

  public static void main(String[] args) throws Exception {
    Path dir = ExampleApps.build();
    Path tmp = Files.createTempDirectory("gospan-discovery");
    List<Double> latencies = new ArrayList<>();
    try (Sidecar sidecar = Sidecar.start(Sidecar.Options.defaults(), e -> { }, new Tracer.Listener() {})) {
      sidecar.awaitFirstScan(java.time.Duration.ofSeconds(10));
      for (int i = 0; i < 20; i++) {
        Path copy = tmp.resolve("greeter-server-" + i);
        Files.copy(dir.resolve("greeter-server"), copy, StandardCopyOption.COPY_ATTRIBUTES);
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(copy.toString(), "-addr", "127.0.0.1:0")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        int pid = (int) p.pid();
        while (!sidecar.tracer().traced().containsKey(pid)) {
          if (System.nanoTime() - t0 > 10_000_000_000L) {
            throw new IllegalStateException("pid " + pid + " not traced within 10 s");
          }
          Thread.sleep(1);
        }
        latencies.add((System.nanoTime() - t0) / 1e6);
        p.destroy();
        p.waitFor(10, TimeUnit.SECONDS);
        Thread.sleep(600); // let the scan see it exit (its binary is detached)
        Files.delete(copy);
      }
    }
    latencies.sort(Double::compare);
    System.out.printf("exec -> probes attached, new binary (inspection included), 20 runs, scan every 500 ms:%n");
    System.out.printf("  median %.0f ms, min %.0f ms, max %.0f ms%n", latencies.get(10), latencies.get(0), latencies.get(19));

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
