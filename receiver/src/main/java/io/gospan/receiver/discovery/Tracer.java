package io.gospan.receiver.discovery;

import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.probe.ExecNotice;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Follows the processes gospan traces, as a pipeline of stages run on one thread ({@link
 * DiscoveryThread}, {@code gospan-discovery}) that owns the discovery state ({@link
 * DiscoveryStages}); the stages are wired in one place, this class's constructor:
 *
 * <ol>
 *   <li>{@link ProcessWatcher}: new and exited pids, from a {@code /proc} scan at an interval
 *       ({@link ScanCadence}) and from exec notices ({@link #execed}, the raw tracepoint {@code
 *       sched_process_exec});
 *   <li>the matcher, {@link ProcessSelector}: which processes may be traced; one selected but for
 *       its {@code open_port} waits in the {@link PortWaitList};
 *   <li>{@link BinaryInspection}: once per binary (device + inode), whether it gives spans and
 *       which probes attach; unsuitable binaries are remembered (bounded) and not read again;
 *       the inspections of traceable ones are kept by file identity ({@link BinaryCache}:
 *       device, inode, size, mtime, ctime; bounded), so a binary attached again after it was
 *       detached, or reached by another hard link, is not read again;
 *   <li>{@link ProbeAttacher}: the binary's offsets and probes, once (every process of the binary
 *       is then traced from its first call, even before a scan sees it), kept attached for the
 *       linger after its last process exits ({@link ProbeAttacher#expireLingering} on every scan),
 *       so a short-lived process of a binary seen before is traced from its first call; hpack
 *       WriteField attached once its ServeHTTP path serves gRPC ({@link #serveHttpInUse}).
 * </ol>
 *
 * <p>Other threads hand work to the discovery thread ({@link #execed}, {@link #serveHttpInUse},
 * {@link #scan}); the accessors ({@link #traced}, {@link #binaries}, ...) may be called from any
 * thread: they read {@link DiscoveryFindings} and the attacher.
 */
public final class Tracer implements AutoCloseable {

  /** Tasks queued for the discovery thread at most (exec notices beyond are lost: the next scan finds them). */
  static final int MAX_QUEUED = 1 << 16;

  /** Called on the discovery thread, except {@link #undiscovered}. */
  public interface Listener {
    /** A process is traced (its binary's probes are attached). */
    default void attached(ProcessEntry process, TracedBinary binary) {}

    /** A traced process exited. */
    default void exited(int pid, TracedBinary binary) {}

    /**
     * Events arrived from a process the scan has not discovered (yet, or ever: it may have
     * exited already) running a binary gospan traces. Called on the ring buffer thread.
     */
    default void undiscovered(int pid, TracedBinary binary) {}

    /**
     * The kernel refused every probe of a binary for lack of privileges ({@code EACCES} or {@code
     * EPERM}) and no probe was ever attached in this run: nothing can be traced. Called once, with
     * one line saying so and naming the capability.
     */
    default void noPrivileges(String message) {}
  }

  /**
   * The one line {@link Listener#noPrivileges} gets. Creating a uprobe needs {@code
   * CAP_SYS_ADMIN} again since the 2025 kernel change "perf: Revert to requiring CAP_SYS_ADMIN
   * for uprobes" (backported to stable kernels); before it {@code CAP_BPF} + {@code CAP_PERFMON}
   * sufficed.
   */
  static final String NO_PRIVILEGES =
      "no probe can be attached: the kernel refused every uprobe (%s) for lack of privileges; gospan needs"
          + " CAP_SYS_ADMIN to create uprobes (older kernels: CAP_BPF + CAP_PERFMON); run it as root or grant CAP_SYS_ADMIN";

  /**
   * What discovery is configured with.
   *
   * @param procFs the procfs to scan
   * @param selector which processes may be traced
   * @param maxSkippedBinaries how many unsuitable binaries are remembered (not re-inspected)
   * @param preference which source wins when the offsets catalog and DWARF disagree
   * @param responseHeaders response metadata is captured ({@code headers.allow}), so every binary
   *     gets the headers probe set ({@link BinaryInspection#probeSet()})
   */
  public record Options(
      ProcFs procFs, ProcessSelector selector, int maxSkippedBinaries, Preference preference, boolean responseHeaders) {
    public Options {
      Objects.requireNonNull(procFs, "procFs");
      Objects.requireNonNull(selector, "selector");
      Objects.requireNonNull(preference, "preference");
      if (maxSkippedBinaries < 0) {
        throw new IllegalArgumentException("maxSkippedBinaries must not be negative: " + maxSkippedBinaries);
      }
    }

    /** {@code selector} over {@code procFs}; 4096 unsuitable binaries remembered, DWARF preferred, no response headers. */
    public static Options of(ProcFs procFs, ProcessSelector selector) {
      return new Options(procFs, selector, 4096, Preference.DWARF, false);
    }

    public Options withMaxSkippedBinaries(int max) {
      return new Options(procFs, selector, max, preference, responseHeaders);
    }

    public Options withPreference(Preference p) {
      return new Options(procFs, selector, maxSkippedBinaries, p, responseHeaders);
    }

    /** These options, capturing response metadata or not ({@code headers.allow}). */
    public Options withResponseHeaders(boolean capture) {
      return new Options(procFs, selector, maxSkippedBinaries, preference, capture);
    }
  }

  private final ProcessSelector selector;
  private final ProbeAttacher attacher;
  private final Listener listener;
  /** Also handed notices' fate from any thread ({@link #execNoticeLost}). */
  private final ProcessWatcher watcher;
  private final DiscoveryFindings findings;
  private final DiscoveryThread<DiscoveryStages> discovery;
  /** (binary, server copy) pairs with a ServeHTTP task queued: one task per pair at a time. */
  private final Set<String> serveHttpQueued = ConcurrentHashMap.newKeySet();
  private final CountDownLatch firstScan = new CountDownLatch(1);
  private final EarlyInspections early;

  /**
   * Wires discovery's stages: watcher → matcher (with the {@code open_port} wait list) → inspection
   * → attacher → {@code listener}, on the discovery thread, scanning at the {@link ScanCadence}.
   *
   * @param attacher attaches the probes (its owner thread becomes the discovery thread)
   * @param listener told of traced processes
   */
  public Tracer(Options options, ProbeAttacher attacher, Listener listener) {
    this(options, attacher, listener, EarlyInspections.NONE);
  }

  /**
   * As {@link #Tracer(Options, ProbeAttacher, Listener)}; the binaries {@code early} reads are
   * taken from it, which ends with the first scan.
   */
  public Tracer(Options options, ProbeAttacher attacher, Listener listener, EarlyInspections early) {
    this.early = early;
    this.selector = options.selector();
    this.attacher = attacher;
    this.listener = listener;
    this.watcher = new ProcessWatcher(options.procFs());
    this.findings = new DiscoveryFindings(options.maxSkippedBinaries());
    DiscoveryStages stages = new DiscoveryStages(
        options, watcher, attacher, listener, new BinaryInspections(options, findings, early), new ScanCadence(), new PortWaitList(),
        findings);
    this.discovery = new DiscoveryThread<>(stages, MAX_QUEUED);
  }

  /**
   * Scans {@code /proc} now and then every {@code interval} (after the previous scan ended). While
   * exec notices arrive and none was lost, a periodic scan lists {@code /proc} only every {@link
   * ScanCadence#LISTING_INTERVAL_NANOS} and otherwise checks the traced pids alone for exit ({@link
   * ProcessWatcher#scanFollowed}), and comes every {@link ScanCadence#QUIET_SCAN_INTERVAL_NANOS} unless a
   * process waits for its {@code open_port} in its first {@link PortWaitList#AWAIT_PORT_EAGER_NANOS}.
   */
  public void start(Duration interval) {
    discovery.schedule(s -> {
      s.scanInterval(interval);
      periodicScanAndNext(s);
    }, 0);
  }

  /** The periodic scan's interval, without starting it (tests: {@link #nextScanDelay}). */
  void scanInterval(Duration interval) {
    discovery.run(s -> s.scanInterval(interval));
  }

  private void periodicScanAndNext(DiscoveryStages stages) {
    try {
      discovery.guarded("scanning processes", s -> s.scan(false));
      early.close(); // what the first scan did not take belongs to processes gone meanwhile
      firstScan.countDown();
    } finally {
      discovery.schedule(this::periodicScanAndNext, stages.nextScanDelayNanos(System.nanoTime()));
    }
  }

  /** Waits until the first scan of {@link #start} (processes already running are then attached). */
  public boolean awaitFirstScan(Duration timeout) throws InterruptedException {
    return firstScan.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Exec notices reach {@link #execed}: scans need not re-check ignored processes' start times.
   * {@code dropped} counts the notices dropped before they reached it (the kernel's, a full buffer):
   * read at each scan; when it rose, that scan lists {@code /proc} and re-checks start times. Logged
   * once.
   */
  public void execNoticesOn(LongSupplier dropped) {
    discovery.run(s -> s.execNoticesOn(dropped));
    watcher.execNoticesOn();
  }

  /** An exec notice could not be delivered: the next scan re-checks every ignored process's start time. Any thread. */
  public void execNoticeLost() {
    watcher.execNoticeLost();
  }

  /** One pass over all of {@code /proc} on the discovery thread: attach new processes, forget exited ones. Waits for it. */
  public void scan() {
    discovery.run(s -> s.scan(true));
  }

  /** What the periodic scan does ({@link #start}), now, on the discovery thread. Waits for it. */
  void periodicScan() {
    discovery.run(s -> s.scan(false));
  }

  /**
   * A process exec'd a new image (any thread; queued for the discovery thread): it is looked at
   * again, since a scan that saw it between fork and exec judged its parent's executable (exec
   * keeps the pid and the start time), and a traced process may have become another program. When
   * the process is gone by the time discovery looks (a command-line client that lives 10 ms), its
   * binary is learned from the notice itself ({@link DiscoveryStages#learn}): inspected by the notice's path, or
   * through a live process running the same file, attached, and left lingering, so that its next
   * run is traced from its first call.
   */
  public void execed(ExecNotice notice) {
    if (!discovery.offer("discovery task", s -> s.execed(notice))) {
      execNoticeLost(); // the next scan finds it
    }
  }

  /** As {@link #execed(ExecNotice)} for a notice that names only the pid. */
  public void execed(int pid) {
    execed(ExecNotice.pidOnly(pid));
  }

  /**
   * A process of binary {@code key} received a gRPC request through HTTP/2 server {@code server}
   * ({@code ServeHTTP}; any thread, quick): when the binary waits for that server's WriteField
   * probe, the discovery thread attaches it ({@link ProbeAttacher#serveHttpInUse}).
   */
  public void serveHttpInUse(ExeKey key, Probe.HttpServer server, int pid) {
    if (!attacher.binary(key).map(b -> b.isDeferred(Probe.writeField(server))).orElse(false)) {
      return;
    }
    String k = key + "/" + server;
    if (serveHttpQueued.add(k) && !discovery.offer("discovery task", s -> {
      serveHttpQueued.remove(k);
      s.serveHttpInUse(key, server, pid);
    })) {
      serveHttpQueued.remove(k);
    }
  }

  /**
   * Events arrived from {@code pid} running binary {@code exe} (the ring buffer thread, for the
   * first event of each pid): a process of a known binary is traced from its first call, before
   * any scan sees it, and may exit before one does. The listener is told which binary it runs.
   */
  public void undiscovered(int pid, ExeKey exe) {
    if (!findings.traced.containsKey(pid)) {
      attacher.binary(exe).ifPresent(b -> listener.undiscovered(pid, b));
    }
  }

  /**
   * Which runs of a traceable binary {@code gospan run} traces with this discovery configuration, in
   * one line ({@code gospan inspect} prints it): with {@code hold}, every run, the first included
   * (an exec of the binary not judged yet waits for its probes, at most {@code holdLimit}); else every
   * run once gospan has seen the binary, which a process that exits before gospan looks teaches it
   * through its exec notice (when binaries may linger); with no linger, only processes gospan sees
   * running.
   */
  public static String runsTraced(boolean hold, Duration holdLimit, boolean lingers) {
    if (!lingers) {
      return "the processes gospan finds running (discovery.linger 0s: a process that exits before gospan looks is not"
          + " traced, nor are the next runs of its binary)";
    }
    if (hold) {
      return "every run, the first included: an exec of this binary, until gospan has judged it, waits for its probes,"
          + " at most " + holdLimit.toMillis() + " ms (discovery.hold_new_binaries; a binary judged later has its first"
          + " run missed)";
    }
    return "every run once gospan has seen the binary: a first run that exits before gospan looks is missed, and gospan"
        + " learns the binary from its exec notice, so the runs that start after it is attached are traced"
        + " (discovery.hold_new_binaries traces the first run too)";
  }

  /**
   * What discovery says of the execs {@link ExecHold} holds ({@code discovery.hold_new_binaries}): an
   * exec of a binary judged already (traced, or not traceable), not wanted by the selectors (judged on
   * its path alone: a selector that needs the process lets it go), or seen while binaries may not
   * linger is allowed at once; any other binary is inspected and attached on the discovery thread, then
   * lingers until its process is found (by its exec notice, right after the exec).
   */
  public ExecHold.Judge holdJudge(Duration limit) {
    return new ExecHold.Judge() {
      @Override
      public boolean judged(ExeKey key) {
        return attacher.binary(key).isPresent() || findings.skipped.containsKey(key);
      }

      @Override
      public Verdict quick(ExeKey key, String path) {
        return attacher.lingers() && selector.judgeExecutable(Path.of(path)) == ProcessSelector.Verdict.TRACE
            ? Verdict.HOLD : Verdict.ALLOW;
      }

      @Override
      public CompletableFuture<?> judge(PinnedFile file, String path, int pid) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        boolean queued = discovery.offer("discovery task", s -> {
          try (file) {
            s.judgeHeld(file, path, pid, limit);
          } finally {
            done.complete(null);
          }
        });
        if (!queued) {
          file.close();
          done.complete(null);
        }
        return done;
      }
    };
  }

  // ---- any thread

  /** Traced processes now: pid → binary. */
  public Map<Integer, TracedBinary> traced() {
    return Map.copyOf(findings.traced);
  }

  /** The traced binary with this key, if any. */
  public Optional<TracedBinary> binary(ExeKey key) {
    return attacher.binary(key);
  }

  /** Whether discovery traces this pid. */
  public boolean isTraced(int pid) {
    return findings.traced.containsKey(pid);
  }

  /** Binaries traced now. */
  public List<TracedBinary> binaries() {
    return attacher.binaries();
  }

  /** Binaries lingering now: no process runs them, their probes stay attached. */
  public List<TracedBinary> lingering() {
    return attacher.lingering();
  }

  /** The delay the next periodic scan would come after, were one to end now (ns). Waits for the discovery thread. */
  long nextScanDelay() {
    Long delay = discovery.call(s -> s.nextScanDelayNanos(System.nanoTime()));
    return delay == null ? -1 : delay;
  }

  /** The pids waiting for their {@code open_port} now. Waits for the discovery thread. */
  Set<Integer> awaitingPort() {
    Set<Integer> pids = discovery.call(DiscoveryStages::awaitingPort);
    return pids == null ? Set.of() : pids;
  }

  /** Binaries read so far (each once while it stays known, or its inspection stays cached). */
  public long inspections() {
    return findings.inspections.sum();
  }

  /**
   * Binaries learned from the exec notice of a process that was gone when discovery looked
   * (attached, then lingering).
   */
  public long learnedFromExecs() {
    return findings.learned.sum();
  }

  /**
   * Binaries of exec notices whose process was gone and whose file could not be reached (deleted or
   * replaced at its path, no live process running it): not learned, and not tried again from notices
   * for a minute (each time counted).
   */
  public long unreachableBinaries() {
    return findings.unreachable.sum();
  }

  /** Binaries attached again without being read: their inspection came from the cache. */
  public long inspectionCacheHits() {
    return findings.inspectionCache.hits();
  }

  /** Probe attachments the kernel refused. */
  public long attachFailures() {
    return attacher.attachFailures();
  }

  /** Stops the discovery thread (a task under way ends first), then detaches everything. */
  @Override
  public void close() {
    early.close();
    discovery.close();
    findings.traced.clear();
    attacher.close();
  }
}
