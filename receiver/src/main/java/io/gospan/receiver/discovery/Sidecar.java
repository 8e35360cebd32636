package io.gospan.receiver.discovery;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.probe.GrpcProbes;
import io.gospan.receiver.probe.HeaderNames;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running tracer: the probes loaded, one thread polling the ring buffer into an event
 * consumer, one thread scanning {@code /proc} at an interval. {@link #close()} stops both,
 * detaches every probe and frees every map.
 */
public final class Sidecar implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Sidecar.class);

  /** The longest an event waits in the ring buffer before it is read (records below the
   * wakeup threshold do not wake the reader). */
  static final int POLL_MILLIS = 20;

  /**
   * @param headerNames header names captured
   * @param ringBufferBytes events ring buffer size (power of 2, multiple of the page size)
   * @param scanInterval how often {@code /proc} is scanned for new and exited processes
   * @param selector which processes may be traced
   * @param procFs the procfs to scan
   * @param maxSkippedBinaries how many unsuitable binaries are remembered (not re-inspected)
   * @param preference which source wins when the offsets catalog and DWARF disagree
   */
  public record Options(
      HeaderNames headerNames,
      int ringBufferBytes,
      Duration scanInterval,
      ProcessSelector selector,
      ProcFs procFs,
      int maxSkippedBinaries,
      io.gospan.offsets.resolve.Preference preference) {

    /** With DWARF preferred over the catalog (the default). */
    public Options(
        HeaderNames headerNames, int ringBufferBytes, Duration scanInterval, ProcessSelector selector, ProcFs procFs, int maxSkippedBinaries) {
      this(headerNames, ringBufferBytes, scanInterval, selector, procFs, maxSkippedBinaries, io.gospan.offsets.resolve.Preference.DWARF);
    }

    public static Options defaults() {
      return new Options(HeaderNames.defaults(), 1 << 22, Duration.ofMillis(500), ProcessSelector.all(), ProcFs.system(), 4096);
    }
  }

  private final GrpcProbes probes;
  private volatile Tracer tracer;
  private final Thread poller;
  private final Thread scanner;
  private final CountDownLatch firstScan = new CountDownLatch(1);
  private volatile boolean running = true;
  /**
   * Work for the discovery thread from the polling thread: a pid that exec'd, a binary whose
   * ServeHTTP path served gRPC. Bounded: when full, the next scan still finds new processes.
   */
  private final java.util.concurrent.BlockingQueue<Runnable> tasks = new java.util.concurrent.LinkedBlockingQueue<>(1 << 16);
  /** (binary, server copy) pairs with a ServeHTTP task queued: one task per pair at a time. */
  private final java.util.Set<String> serveHttpQueued = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private volatile boolean execsWatched;

  private Sidecar(Options options, Consumer<HeaderEvent> events, Tracer.Listener listener) {
    this.probes =
        GrpcProbes.open(
            GrpcProbes.Options.of(options.headerNames(), options.ringBufferBytes(), events)
                .withNewProcesses(
                    (pid, exe) -> {
                      // A process of a known binary is traced from its first call, before any scan
                      // sees it; it may exit before one does. Tell the listener which binary it runs.
                      Tracer t = this.tracer;
                      if (t != null && !t.isTraced(pid)) {
                        t.binary(exe).ifPresent(b -> listener.undiscovered(pid, b));
                      }
                    }));
    this.tracer =
        new Tracer(options.procFs(), options.selector(), probes, listener, options.maxSkippedBinaries(), options.preference());
    this.poller = new Thread(this::pollLoop, "gospan-ringbuf");
    this.scanner = new Thread(() -> scanLoop(options.scanInterval()), "gospan-discovery");
    poller.setDaemon(true);
    scanner.setDaemon(true);
  }

  /**
   * Loads the probes and starts polling and scanning.
   *
   * @throws io.gospan.receiver.bpf.BpfException when the probes cannot be loaded
   */
  public static Sidecar start(Options options, Consumer<HeaderEvent> events, Tracer.Listener listener) {
    Sidecar s = new Sidecar(options, events, listener);
    try {
      s.probes.watchExecs(pid -> {
        if (!s.tasks.offer(() -> s.tracer.execed(pid))) {
          s.tracer.execNoticeLost(); // the next scan finds it
        }
      });
      s.execsWatched = true;
      s.tracer.execNoticesOn();
    } catch (io.gospan.receiver.bpf.BpfException e) {
      LOG.warn("no exec notices ({}): new processes are found by the /proc scan alone, every {} ms",
          e.getMessage(), options.scanInterval().toMillis());
    }
    s.probes.onServeHttpGrpc((exe, server, pid) -> {
      Tracer t = s.tracer;
      if (t.binary(exe).map(b -> b.isDeferred(io.gospan.offsets.resolve.Probe.writeField(server))).orElse(false)) {
        String k = exe + "/" + server;
        if (s.serveHttpQueued.add(k) && !s.tasks.offer(() -> {
          s.serveHttpQueued.remove(k);
          t.serveHttpInUse(exe, server, pid);
        })) {
          s.serveHttpQueued.remove(k);
        }
      }
    });
    s.poller.start();
    s.scanner.start();
    return s;
  }

  /** Waits until the first scan (processes already running are then attached). */
  public boolean awaitFirstScan(Duration timeout) throws InterruptedException {
    return firstScan.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  public Tracer tracer() {
    return tracer;
  }

  public GrpcProbes probes() {
    return probes;
  }

  private void pollLoop() {
    while (running) {
      try {
        probes.poll(POLL_MILLIS);
      } catch (RuntimeException e) {
        LOG.error("polling the ring buffer failed; retrying", e);
        sleep(Duration.ofMillis(100));
      }
    }
  }

  /** Whether exec notices reach discovery (else only the periodic scan finds new processes). */
  public boolean watchesExecs() {
    return execsWatched;
  }

  private void scanLoop(Duration interval) {
    while (running) {
      try {
        tracer.scan();
      } catch (RuntimeException e) {
        LOG.error("scanning processes failed; retrying", e);
      }
      firstScan.countDown();
      awaitExecs(interval);
    }
  }

  /** Until the next scan is due, runs the polling thread's tasks (exec'd pids, ServeHTTP in use) as they come. */
  private void awaitExecs(Duration interval) {
    long due = System.nanoTime() + interval.toNanos();
    try {
      for (long left = interval.toNanos(); running && left > 0; left = due - System.nanoTime()) {
        Runnable task = tasks.poll(Math.min(left, 100_000_000L), TimeUnit.NANOSECONDS);
        if (task != null) {
          try {
            task.run();
          } catch (RuntimeException e) {
            LOG.error("discovery task failed", e);
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops scanning and polling (draining what the ring buffer holds), detaches, frees. */
  @Override
  public void close() {
    running = false;
    try {
      scanner.join(5000);
      poller.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      probes.poll(0); // what was already written still reaches the consumer
    } catch (RuntimeException e) {
      LOG.debug("final ring buffer drain failed", e);
    }
    tracer.close();
    probes.close();
  }
}
