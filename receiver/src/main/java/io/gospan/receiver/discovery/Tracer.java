package io.gospan.receiver.discovery;

import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.NotGoBinaryException;
import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.probe.ExecNotice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the processes gospan traces, as a pipeline of stages run on one thread ({@code
 * gospan-discovery}, a single-threaded scheduled executor) that owns the discovery state:
 *
 * <ol>
 *   <li>{@link ProcessWatcher}: new and exited pids, from a {@code /proc} scan at an interval and
 *       from exec notices ({@link #execed}, the raw tracepoint {@code sched_process_exec});
 *   <li>the matcher, {@link ProcessSelector}: which processes may be traced;
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
 * thread.
 */
public final class Tracer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Tracer.class);

  /** Tasks queued for the discovery thread at most (exec notices beyond are lost: the next scan finds them). */
  static final int MAX_QUEUED = 1 << 16;

  /**
   * Inspections of traceable binaries kept after their probes are detached (each a few KB: the
   * resolved offsets and the probed functions' entries).
   */
  static final int INSPECTIONS_CACHED = 256;

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

  private final ProcFs procFs;
  private final ProcessSelector selector;
  private final ProbeAttacher attacher;
  /** Discovery thread only: {@link Listener#noPrivileges} was called. */
  private boolean noPrivilegesSaid;
  private final Listener listener;
  private final Preference preference;
  private final boolean responseHeaders;
  private final ProcessWatcher watcher;
  /** Exec notices dropped before they reached {@link #execed} (see {@link #execNoticesOn(java.util.function.LongSupplier)}). */
  private volatile java.util.function.LongSupplier execNoticesDropped = () -> 0;
  private long execNoticesDroppedSeen; // discovery thread

  /** pid → binary, for traced processes: written by the discovery thread, read by any. */
  private final Map<Integer, TracedBinary> traced = new ConcurrentHashMap<>();
  /** Binaries found unsuitable, with the reason; LRU-bounded. Written by the discovery thread, read by the exec hold's too. */
  private final Map<ExeKey, String> skipped;

  /**
   * Discovery thread only: binaries not learned from an exec notice, with when ({@link
   * System#nanoTime()}): unreachable (no file of that device and inode found by the notice's path nor
   * through a live process), or a selector needs the process; LRU-bounded. Notices of such a binary
   * are not acted on for {@link #NOT_LEARNED_RETRY_NANOS} (its inode number may be given to a new
   * file meanwhile); a live process of it is judged as any.
   */
  private final Map<ExeKey, Long> notLearned =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ExeKey, Long> e) {
          return size() > MAX_NOT_LEARNED;
        }
      };

  /** Binaries remembered as not learnable from exec notices, at most. */
  static final int MAX_NOT_LEARNED = 4096;

  /**
   * How long a binary not learned from a notice is not tried again from notices (ns): one {@code /proc}
   * pass a minute at most for a deleted binary that keeps being run by processes that exit at once.
   */
  static final long NOT_LEARNED_RETRY_NANOS = 60_000_000_000L;

  private final LongAdder learned = new LongAdder();
  private final LongAdder unreachable = new LongAdder();
  private final LongAdder inspections = new LongAdder();
  /** Discovery thread only (its counters: any). */
  private final BinaryCache<BinaryInspection> inspectionCache = new BinaryCache<>(INSPECTIONS_CACHED);

  private final ScheduledThreadPoolExecutor executor;
  private volatile Thread discoveryThread;
  private final AtomicInteger queued = new AtomicInteger();
  /** (binary, server copy) pairs with a ServeHTTP task queued: one task per pair at a time. */
  private final Set<String> serveHttpQueued = ConcurrentHashMap.newKeySet();
  private final CountDownLatch firstScan = new CountDownLatch(1);

  /**
   * @param procFs the procfs to scan
   * @param selector which processes may be traced
   * @param attacher attaches the probes (its owner thread becomes the discovery thread)
   * @param listener told of traced processes
   * @param maxSkipped how many unsuitable binaries are remembered (not re-inspected)
   * @param preference which source wins when the offsets catalog and DWARF disagree
   */
  public Tracer(
      ProcFs procFs, ProcessSelector selector, ProbeAttacher attacher, Listener listener, int maxSkipped,
      Preference preference) {
    this(procFs, selector, attacher, listener, maxSkipped, preference, false);
  }

  /**
   * As above; {@code responseHeaders}: response metadata is captured ({@code headers.allow}), so
   * every binary gets the headers probe set ({@link BinaryInspection#probeSet()}).
   */
  public Tracer(
      ProcFs procFs, ProcessSelector selector, ProbeAttacher attacher, Listener listener, int maxSkipped,
      Preference preference, boolean responseHeaders) {
    this.responseHeaders = responseHeaders;
    this.procFs = procFs;
    this.selector = selector;
    this.attacher = attacher;
    this.listener = listener;
    this.preference = preference;
    this.watcher = new ProcessWatcher(procFs);
    this.skipped = java.util.Collections.synchronizedMap(
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<ExeKey, String> e) {
            return size() > maxSkipped;
          }
        });
    this.executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "gospan-discovery");
      t.setDaemon(true);
      discoveryThread = t;
      return t;
    });
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    executor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
  }

  /**
   * Scans {@code /proc} now and then every {@code interval} (after the previous scan ended). While
   * exec notices arrive and none was lost, a periodic scan lists {@code /proc} only every {@link
   * #LISTING_INTERVAL_NANOS} and otherwise checks the traced pids alone for exit ({@link
   * ProcessWatcher#scanFollowed}), and comes every {@link #QUIET_SCAN_INTERVAL_NANOS} unless a
   * process waits for its {@code open_port} in its first {@link #AWAIT_PORT_EAGER_NANOS}.
   */
  public void start(Duration interval) {
    scanInterval(interval);
    executor.execute(this::periodicScanAndNext);
  }

  /** The periodic scan's interval, without starting it (tests: {@link #nextScanDelay}). */
  void scanInterval(Duration interval) {
    scanIntervalNanos = interval.toNanos();
  }

  private void periodicScanAndNext() {
    try {
      guarded("scanning processes", () -> scanOnce(false));
      firstScan.countDown();
    } finally {
      try {
        executor.schedule(this::periodicScanAndNext, nextScanDelayNanos(System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException closed) {
        // closed
      }
    }
  }

  /** The delay before the next periodic scan (ns): the scan interval, or {@link #QUIET_SCAN_INTERVAL_NANOS}. */
  private long nextScanDelayNanos(long now) {
    if (watcher.listingNeeded()) {
      return scanIntervalNanos; // no exec notices, or one was lost
    }
    for (AwaitingPort a : awaitingPort.values()) {
      if (now - a.sinceNanos() < AWAIT_PORT_EAGER_NANOS) {
        return scanIntervalNanos;
      }
    }
    return Math.max(scanIntervalNanos, QUIET_SCAN_INTERVAL_NANOS);
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
  public void execNoticesOn(java.util.function.LongSupplier dropped) {
    this.execNoticesDropped = dropped;
    watcher.execNoticesOn();
  }

  /** An exec notice could not be delivered: the next scan re-checks every ignored process's start time. Any thread. */
  public void execNoticeLost() {
    watcher.execNoticeLost();
  }

  /** One pass over all of {@code /proc} on the discovery thread: attach new processes, forget exited ones. Waits for it. */
  public void scan() {
    onDiscoveryThread(() -> scanOnce(true));
  }

  /** What the periodic scan does ({@link #start}), now, on the discovery thread. Waits for it. */
  void periodicScan() {
    onDiscoveryThread(() -> scanOnce(false));
  }

  private void onDiscoveryThread(Runnable task) {
    if (Thread.currentThread() == discoveryThread) {
      task.run();
      return;
    }
    try {
      executor.submit(task).get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  /**
   * A process exec'd a new image (any thread; queued for the discovery thread): it is looked at
   * again, since a scan that saw it between fork and exec judged its parent's executable (exec
   * keeps the pid and the start time), and a traced process may have become another program. When
   * the process is gone by the time discovery looks (a command-line client that lives 10 ms), its
   * binary is learned from the notice itself ({@link #learn}): inspected by the notice's path, or
   * through a live process running the same file, attached, and left lingering, so that its next
   * run is traced from its first call.
   */
  public void execed(ExecNotice notice) {
    if (!enqueue(() -> execedNow(notice))) {
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
    if (serveHttpQueued.add(k) && !enqueue(() -> {
      serveHttpQueued.remove(k);
      attacher.serveHttpInUse(key, server, pid);
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
    if (!traced.containsKey(pid)) {
      attacher.binary(exe).ifPresent(b -> listener.undiscovered(pid, b));
    }
  }

  private boolean enqueue(Runnable task) {
    if (queued.incrementAndGet() > MAX_QUEUED) {
      queued.decrementAndGet();
      return false;
    }
    try {
      executor.execute(() -> {
        queued.decrementAndGet();
        guarded("discovery task", task);
      });
      return true;
    } catch (RejectedExecutionException e) {
      queued.decrementAndGet();
      return false; // closed
    }
  }

  private static void guarded(String what, Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      LOG.error("{} failed; continuing", what, e);
    }
  }

  // ---- the discovery thread from here on

  /**
   * A periodic scan lists {@code /proc} at least this often while exec notices arrive (ns): the
   * listing then finds only what a notice could not announce (a notice dropped because its ring
   * buffer was full, 4,096 execs within one drain). Listing every 500 ms cost the idle sidecar
   * ~2 ms of CPU a second with 64 processes on the machine; checking the traced pids alone costs
   * one {@code /proc/<pid>/stat} read each (docs/benchmarks.md, "The idle sidecar's discovery").
   */
  static final long LISTING_INTERVAL_NANOS = 5_000_000_000L;

  /**
   * The periodic scan's period while exec notices arrive and none was lost, and no process waits for
   * its {@code open_port} in its first {@link #AWAIT_PORT_EAGER_NANOS} (ns). Such a scan only checks
   * the traced pids for exit (a new program, or a traced one exec'ing another, is announced by its
   * exec notice, handled at once between scans): an exit is then seen up to 2 s after it instead of
   * 500 ms, which delays only when the process's binary starts to linger. Each scan costs a wake-up
   * and a {@code /proc/<pid>/stat} read per traced pid, ~0.9 ms of CPU a second at 500 ms
   * (docs/benchmarks.md, "The idle sidecar's discovery").
   */
  static final long QUIET_SCAN_INTERVAL_NANOS = 2_000_000_000L;

  /** The scan interval {@link #start} was given (ns). */
  private volatile long scanIntervalNanos;

  /** Discovery thread only: when {@code /proc} was last listed ({@link System#nanoTime()}). */
  private long lastListing;
  private boolean listed;

  /**
   * How long after a process is first found waiting for its {@code open_port} every periodic scan
   * judges it again (ns); later, every {@link #LISTING_INTERVAL_NANOS}. Servers mostly listen
   * within a second or two of their exec (after reading their configuration, connecting to what
   * they need); one that waits longer is traced up to 5 s after it listens. Each check costs a few
   * {@code /proc} reads: its network namespace's socket tables once per scan, its fds only when
   * something in that namespace listens on the port.
   */
  static final long AWAIT_PORT_EAGER_NANOS = 10_000_000_000L;
  /** At most this many processes wait for their port; beyond, the longest-waiting is given up. */
  static final int MAX_AWAITING_PORT = 4096;

  /** A process selected but for its {@code open_port}: judged again at {@code nextNanos}. */
  private record AwaitingPort(ExeKey key, long sinceNanos, long nextNanos) {}

  /** Discovery thread only: pid → a process waiting for its {@code open_port}, oldest first. */
  private final Map<Integer, AwaitingPort> awaitingPort = new LinkedHashMap<>();
  /** Discovery thread only: the warning that {@link #MAX_AWAITING_PORT} was reached was logged. */
  private boolean awaitingFullSaid;

  private void scanOnce(boolean listing) {
    long now = System.nanoTime();
    checkExecNoticesDropped();
    PortLookup ports = new PortLookup(procFs);
    if (!listing && listed && !watcher.listingNeeded() && now - lastListing < LISTING_INTERVAL_NANOS) {
      watcher.scanFollowed().exited().forEach(this::exited);
      attacher.expireLingering();
      judgeAwaitingPort(now, ports);
      return;
    }
    listed = true;
    lastListing = now;
    ProcessWatcher.Changes changes = watcher.scan();
    changes.exited().forEach(this::exited);
    attacher.expireLingering();
    judgeAwaitingPort(now, ports);
    changes.started().forEach(pid -> consider(pid, ports));
  }

  /** Whether exec notices were dropped since the last scan: then this scan lists {@code /proc}. */
  private void checkExecNoticesDropped() {
    long dropped;
    try {
      dropped = execNoticesDropped.getAsLong();
    } catch (RuntimeException e) { // the BPF object closed under a scan: shutting down
      return;
    }
    if (dropped > execNoticesDroppedSeen) {
      if (execNoticesDroppedSeen == 0) {
        LOG.warn("{} exec notices dropped (more execs than their buffer holds between two reads): scans list /proc"
            + " when that happens (counted in gospan.events.lost{probe=\"sched_process_exec\"})", dropped);
      }
      execNoticesDroppedSeen = dropped;
      watcher.execNoticeLost();
    }
  }

  /** Judges again the processes waiting for their {@code open_port} whose time has come. */
  private void judgeAwaitingPort(long now, PortLookup ports) {
    if (awaitingPort.isEmpty()) {
      return;
    }
    for (Integer pid : List.copyOf(awaitingPort.keySet())) {
      AwaitingPort a = awaitingPort.get(pid);
      if (a == null || a.nextNanos() > now) {
        continue;
      }
      Optional<ProcessEntry> e = procFs.entry(pid);
      if (e.isEmpty() || !e.get().key().equals(a.key())) {
        awaitingPort.remove(pid); // exited, or exec'd another program (its notice or a listing judges that)
        continue;
      }
      consider(e.get(), ports);
    }
  }

  /** Remembers a process that waits for its {@code open_port}, keeping when it began to wait. */
  private void awaitPort(ProcessEntry p) {
    long now = System.nanoTime();
    AwaitingPort was = awaitingPort.get(p.pid());
    long since = was != null && was.key().equals(p.key()) ? was.sinceNanos() : now;
    if (was == null) {
      LOG.debug("pid {} ({}) is selected once it listens on its open_port", p.pid(), Printable.escape(p.exePath()));
      if (awaitingPort.size() >= MAX_AWAITING_PORT) {
        Integer eldest = awaitingPort.keySet().iterator().next();
        awaitingPort.remove(eldest);
        if (!awaitingFullSaid) {
          awaitingFullSaid = true;
          LOG.warn("more than {} processes wait for their open_port; the longest-waiting are no longer checked",
              MAX_AWAITING_PORT);
        }
      }
    }
    long next = now - since < AWAIT_PORT_EAGER_NANOS ? now : now + LISTING_INTERVAL_NANOS;
    awaitingPort.put(p.pid(), new AwaitingPort(p.key(), since, next));
  }

  private void execedNow(ExecNotice notice) {
    int pid = notice.pid();
    TracedBinary was = traced.get(pid);
    if (was != null) {
      // notices arrive after the fact: a scan may already have seen the new image
      Optional<ProcessEntry> now = procFs.entry(pid);
      if (now.isPresent() && now.get().key().equals(was.key())) {
        return;
      }
      watcher.forget(pid);
      exited(pid);
    }
    if (!watcher.seenAgain(pid)) {
      return; // gospan itself
    }
    Optional<ProcessEntry> now = procFs.entry(pid);
    if (now.isPresent()) {
      consider(now.get(), new PortLookup(procFs));
    } else {
      awaitingPort.remove(pid);
    }
    ExeKey key = notice.exe();
    if (key == null || now.isPresent() && now.get().key().equals(key)) {
      return;
    }
    // The process no longer runs what this notice names: it exited (or exec'd again) before
    // discovery looked.
    Optional<TracedBinary> known = attacher.binary(key);
    if (known.isPresent()) {
      // a process of a traced binary, gone before it was seen (its run, stamped by the exec tracepoint,
      // keeps the binary lingering: ProbeAttacher.ranSince)
      if (now.isEmpty()) {
        listener.exited(pid, known.get());
      }
      return;
    }
    learn(notice);
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
        return attacher.binary(key).isPresent() || skipped.containsKey(key);
      }

      @Override
      public Verdict quick(ExeKey key, String path) {
        return attacher.lingers() && selector.judgeExecutable(Path.of(path)) == ProcessSelector.Verdict.TRACE
            ? Verdict.HOLD : Verdict.ALLOW;
      }

      @Override
      public java.util.concurrent.CompletableFuture<?> judge(PinnedFile file, String path, int pid) {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        Runnable task = () -> {
          try (file) {
            judgeHeld(file, path, pid, limit);
          } finally {
            done.complete(null);
          }
        };
        if (!enqueue(task)) {
          file.close();
          done.complete(null);
        }
        return done;
      }
    };
  }

  /** The binary of a held exec, opened as {@code file}: inspected and attached, lingering until its process shows. */
  private void judgeHeld(PinnedFile file, String path, int pid, Duration limit) {
    ExeKey key = file.key();
    if (attacher.binary(key).isPresent() || skipped.containsKey(key)) {
      return;
    }
    long t0 = System.nanoTime();
    Path name = Path.of(path).getFileName();
    ProcessEntry p = new ProcessEntry(pid, file.path(), path, key, name == null ? path : name.toString());
    BinaryInspection inspection = inspection(p, file.path(), true);
    if (inspection == null) {
      return;
    }
    TracedBinary binary = attach(p, file.path(), inspection);
    if (binary == null) {
      return;
    }
    attacher.lingerWithoutProcess(binary);
    binary.announce();
    long ms = (System.nanoTime() - t0) / 1_000_000;
    LOG.info("held the exec of {} (pid {}) {}: {} ({}, grpc-go {}, offsets from {}, probes attached {}{})",
        Printable.escape(path), pid,
        ms < limit.toMillis() ? ms + " ms until its probes were attached" : "until discovery.hold_limit (" + limit.toMillis()
            + " ms); its probes were attached after " + ms + " ms",
        ms < limit.toMillis() ? "its first run is traced" : "its first run may be missed, its next runs are traced",
        binary.goVersion(), binary.grpcVersion(), binary.offsetsSource(), binary.attached(),
        binary.refused().isEmpty() ? "" : ", refused " + Printable.escape(refusals(binary.refused())));
  }

  /**
   * Learns the binary of an exec notice whose process is gone: the selectors judged on the
   * notice's path alone ({@link ProcessSelector#judgeExecutable}); the file found by that path when
   * it is still the same device and inode, else through a live process of the same mount namespace
   * ({@code /proc/<pid>/root} + the path) or one running the same file ({@code /proc/<pid>/exe}),
   * else counted unreachable; inspected and attached as any binary, then lingering. Each binary is
   * tried once: one that is not traceable is remembered as for a live process, one that cannot be
   * reached or judged without its process is not tried again from notices for a minute.
   */
  private void learn(ExecNotice notice) {
    ExeKey key = notice.exe();
    if (skipped.containsKey(key) || !attacher.lingers()) {
      return;
    }
    Long since = notLearned.get(key);
    if (since != null && System.nanoTime() - since < NOT_LEARNED_RETRY_NANOS) {
      return;
    }
    if (notice.path() == null) {
      notLearn(notice, "the kernel gave no whole path for it", true);
      return;
    }
    ProcessSelector.Verdict verdict = selector.judgeExecutable(Path.of(notice.path()));
    if (verdict == ProcessSelector.Verdict.IGNORE) {
      return;
    }
    if (verdict == ProcessSelector.Verdict.NEEDS_PROCESS) {
      notLearn(notice, "a discovery selector asks for its container_id or open_port, which only a live process"
          + " shows", false);
      return;
    }
    PinnedFile file = reach(notice);
    if (file == null) {
      notLearn(notice, "its file is no longer at that path (deleted or replaced) and no live process runs it", true);
      return;
    }
    try (file) {
      ProcessEntry p = new ProcessEntry(notice.pid(), file.path(), notice.path(), key,
          Path.of(notice.path()).getFileName().toString());
      BinaryInspection inspection = inspection(p, file.path(), true);
      if (inspection == null) {
        return; // not traceable: remembered in skipped
      }
      TracedBinary binary = attach(p, file.path(), inspection);
      if (binary == null) {
        return;
      }
      attacher.lingerWithoutProcess(binary);
      learned.increment();
      binary.announce();
      LOG.info("learned {} from its exec after the process exited: its next runs are traced ({}, grpc-go {}, offsets from {},"
              + " probes attached {}{})",
          Printable.escape(notice.path()), binary.goVersion(), binary.grpcVersion(), binary.offsetsSource(), binary.attached(),
          binary.refused().isEmpty() ? "" : ", refused " + Printable.escape(refusals(binary.refused())));
    }
  }

  /** Remembers a binary that is not learned from notices, said once (at INFO when a selector named it). */
  private void notLearn(ExecNotice notice, String why, boolean unreachableFile) {
    notLearned.put(notice.exe(), System.nanoTime());
    if (unreachableFile) {
      unreachable.increment();
    }
    String path = notice.path() == null ? "pid " + notice.pid() + "'s executable" : Printable.escape(notice.path());
    if (selector.namesProcesses()) {
      LOG.info("not learning {} from its exec: the process exited before gospan looked, and {}", path, why);
    } else {
      LOG.debug("not learning {} from its exec: the process exited before gospan looked, and {}", path, why);
    }
  }

  /**
   * The notice's executable, opened: at the notice's path in gospan's mount namespace, else under the
   * root of a live process in the notice's mount namespace, else through a live process running that
   * file; each only when it is the same device and inode. Null when none is found.
   */
  private PinnedFile reach(ExecNotice notice) {
    PinnedFile f = openIf(Path.of(notice.path()), notice.exe());
    if (f != null) {
      return f;
    }
    Set<Integer> pids;
    try {
      pids = procFs.pids();
    } catch (IllegalStateException e) {
      return null;
    }
    int self = (int) ProcessHandle.current().pid();
    for (int q : pids) {
      if (q == self || q == notice.pid()) {
        continue;
      }
      if (notice.mountNamespace() != 0 && procFs.mountNamespace(q) == notice.mountNamespace()
          && (f = openIf(procFs.underRoot(q, notice.path()), notice.exe())) != null) {
        return f;
      }
      Optional<ProcessEntry> e = procFs.entry(q);
      if (e.isPresent() && e.get().key().equals(notice.exe()) && (f = openIf(e.get().exe(), notice.exe())) != null) {
        return f;
      }
    }
    return null;
  }

  /** {@code file} opened when it is {@code key}; else null. */
  private static PinnedFile openIf(Path file, ExeKey key) {
    PinnedFile f;
    try {
      f = PinnedFile.open(file);
    } catch (IOException | RuntimeException e) {
      return null;
    }
    if (f.key().equals(key)) {
      return f;
    }
    f.close();
    return null;
  }

  /** Matcher, inspection, attacher: traces {@code pid} when it passes them all. */
  private void consider(int pid, PortLookup ports) {
    Optional<ProcessEntry> e = procFs.entry(pid);
    if (e.isEmpty()) {
      awaitingPort.remove(pid);
      return;
    }
    consider(e.get(), ports);
  }

  private void consider(ProcessEntry p, PortLookup ports) {
    int pid = p.pid();
    ProcessSelector.Verdict verdict = selector.judge(p, procFs, ports);
    if (verdict == ProcessSelector.Verdict.AWAIT_PORT) {
      // worth waiting for only if it can be traced: its binary is inspected when it begins to wait
      // (once per binary, as every binary is without selectors), and a program without grpc-go is
      // not checked again
      AwaitingPort was = awaitingPort.get(pid);
      boolean waiting = was != null && was.key().equals(p.key());
      if (!waiting && attacher.binary(p.key()).isEmpty()
          && (skipped.containsKey(p.key()) || inspection(p, durablePath(p), false) == null)) {
        awaitingPort.remove(pid);
        return;
      }
      awaitPort(p);
      return;
    }
    awaitingPort.remove(pid);
    if (verdict == ProcessSelector.Verdict.IGNORE) {
      return;
    }
    TracedBinary binary = attacher.binary(p.key()).orElse(null);
    if (binary == null) {
      if (skipped.containsKey(p.key())) {
        return;
      }
      binary = inspectAndAttach(p);
      if (binary == null) {
        return;
      }
    }
    attacher.processStarted(binary, pid);
    traced.put(pid, binary);
    watcher.follow(pid);
    if (binary.announce()) {
      LOG.info(
          "tracing pid {} ({}): {}, grpc-go {}, offsets from {}, probes attached {}{}",
          pid, Printable.escape(p.exePath()), binary.goVersion(), binary.grpcVersion(), binary.offsetsSource(), binary.attached(),
          binary.refused().isEmpty() ? "" : ", refused " + Printable.escape(refusals(binary.refused())));
    } else {
      // a binary's probes serve all its processes: said once, not again for every run of a command-line client
      LOG.info("tracing pid {} ({}): its binary is traced already", pid, Printable.escape(p.exePath()));
    }
    listener.attached(p, binary);
  }

  /**
   * The refused probes grouped by the reason they share, each reason once: {@code [A, B]: why; [C]:
   * other}. A reason of the form {@code "field unresolved: why"} is grouped by {@code why}.
   */
  static String refusals(Map<Probe, String> refused) {
    Map<String, List<Probe>> byReason = new LinkedHashMap<>();
    refused.forEach((probe, reason) -> {
      int i = reason.indexOf(" unresolved: ");
      byReason.computeIfAbsent(i < 0 ? reason : reason.substring(i + " unresolved: ".length()), r -> new ArrayList<>()).add(probe);
    });
    StringBuilder b = new StringBuilder();
    byReason.forEach((reason, probes) -> b.append(b.isEmpty() ? "" : "; ").append(probes).append(": ").append(reason));
    return b.toString();
  }

  /**
   * Inspects a binary (or takes its inspection from the cache) and attaches its probes; null when
   * it is not traceable (remembered). The file is opened once ({@link PinnedFile}): what is checked,
   * read and attached is one file, even if its path is replaced meanwhile.
   */
  private TracedBinary inspectAndAttach(ProcessEntry p) {
    try (PinnedFile file = PinnedFile.open(durablePath(p))) {
      if (!file.key().equals(p.key())) {
        LOG.debug("pid {} exited, and {} is another file now", p.pid(), Printable.escape(p.exePath()));
        return null;
      }
      BinaryInspection inspection = inspection(p, file.path(), true);
      return inspection == null ? null : attach(p, file.path(), inspection);
    } catch (IOException e) {
      LOG.debug("pid {} exited before its binary could be opened: {}", p.pid(), e.getMessage());
      return null;
    }
  }

  /** Attaches an inspected binary reached at {@code exe}; null when nothing could be (remembered unless it vanished). */
  private TracedBinary attach(ProcessEntry p, Path exe, BinaryInspection inspection) {
    ProbeAttacher.Outcome o = attacher.attach(p.key(), exe, p.exePath(), inspection);
    if (o.binary() == null) {
      if (o.permissionDenied() && !attacher.everAttached() && !noPrivilegesSaid) {
        noPrivilegesSaid = true;
        String errno = o.failure().contains("EPERM") ? "EPERM" : "EACCES";
        listener.noPrivileges(NO_PRIVILEGES.formatted(errno));
      }
      if (o.exeGone()) {
        LOG.debug("pid {} exited while attaching", p.pid());
        return null;
      }
      return skip(p, o.failure(), true);
    }
    return o.binary();
  }

  /**
   * The binary's inspection, from the cache or read now; null when it is not traceable
   * (remembered unless the process just exited).
   *
   * @param selected the selector chose the process (an unsuitable binary is then said at INFO);
   *     false for one that waits for its {@code open_port}
   */
  private BinaryInspection inspection(ProcessEntry p, Path exe, boolean selected) {
    BinaryCache.FileIdentity id = null;
    try {
      id = BinaryCache.FileIdentity.of(exe);
    } catch (IOException | RuntimeException e) {
      // exited meanwhile, or not stat'able: inspected without the cache (and fails the same way)
    }
    if (id != null && !id.key().equals(p.key())) {
      id = null; // the pid names another process now: no cache for this race
    }
    BinaryInspection cached = id == null ? null : inspectionCache.get(id).orElse(null);
    BinaryInspection inspection = cached != null ? cached : inspect(p, exe, selected);
    if (inspection == null) {
      return null;
    }
    if (cached == null && id != null) {
      inspectionCache.put(id, inspection);
    }
    return inspection;
  }

  /**
   * A path to the process's executable that stays valid after the process exits: the
   * executable's own path when it names the same file (device and inode) in gospan's mount
   * namespace, else {@code /proc/<pid>/exe} (another mount namespace, a deleted file). A client
   * that lives 20 ms exits while its binary is inspected (tens to hundreds of ms): its
   * {@code /proc/<pid>/exe} is gone by the time the uprobes are attached, its own path is not.
   */
  static Path durablePath(ProcessEntry p) {
    if (!p.exePath().endsWith(" (deleted)")) {
      try {
        Path own = p.executable();
        if (own.isAbsolute() && ExeKey.of(own).equals(p.key())) {
          return own;
        }
      } catch (IOException | RuntimeException e) {
        // not reachable from this mount namespace
      }
    }
    return p.reachable();
  }

  /** Reads the binary; null when it is not traceable (remembered unless the process just exited). */
  private BinaryInspection inspect(ProcessEntry p, Path exe, boolean selected) {
    inspections.increment();
    BinaryInspection inspection;
    try {
      inspection = BinaryInspection.inspect(exe, preference, responseHeaders);
    } catch (NotGoBinaryException e) {
      return skip(p, "not a Go binary", selected);
    } catch (GoBinaryException e) {
      return skip(p, "cannot be inspected: " + Printable.escape(e.getMessage()), selected);
    } catch (IOException e) {
      if (!Files.exists(exe)) {
        LOG.debug("pid {} exited during inspection", p.pid());
        return null; // not remembered: nothing is wrong with the binary
      }
      return skip(p, "cannot be read: " + Printable.escape(e.getMessage()), selected);
    }
    Optional<String> unsupported = inspection.unsupported();
    if (unsupported.isPresent()) {
      return skip(p, unsupported.get(), selected);
    }
    return inspection;
  }

  private <T> T skip(ProcessEntry p, String reason, boolean selected) {
    // once per binary (remembered below); at INFO when a selector rule named it, the default
    // "every process" (or an open_port rule judging every program on the host) would log every
    // non-Go program on the host
    if (selected && selector.namesProcesses()) {
      LOG.info("not tracing {} (pid {}), selected by discovery.instrument: {}", Printable.escape(p.exePath()), p.pid(),
          Printable.escape(reason));
    } else {
      LOG.debug("not tracing {} (pid {}): {}", Printable.escape(p.exePath()), p.pid(), Printable.escape(reason));
    }
    skipped.put(p.key(), reason);
    return null;
  }

  private void exited(int pid) {
    TracedBinary binary = traced.remove(pid);
    if (binary == null) {
      return;
    }
    LOG.info("pid {} ({}) exited", pid, Printable.escape(binary.path()));
    listener.exited(pid, binary);
    attacher.processExited(binary, pid);
  }

  // ---- any thread

  /** Traced processes now: pid → binary. */
  public Map<Integer, TracedBinary> traced() {
    return Map.copyOf(traced);
  }

  /** The traced binary with this key, if any. */
  public Optional<TracedBinary> binary(ExeKey key) {
    return attacher.binary(key);
  }

  /** Whether discovery traces this pid. */
  public boolean isTraced(int pid) {
    return traced.containsKey(pid);
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
    long[] delay = {-1};
    onDiscoveryThread(() -> delay[0] = nextScanDelayNanos(System.nanoTime()));
    return delay[0];
  }

  /** The pids waiting for their {@code open_port} now. Waits for the discovery thread. */
  Set<Integer> awaitingPort() {
    Set<Integer> pids = new java.util.HashSet<>();
    onDiscoveryThread(() -> pids.addAll(awaitingPort.keySet()));
    return pids;
  }

  /** Binaries read so far (each once while it stays known, or its inspection stays cached). */
  public long inspections() {
    return inspections.sum();
  }

  /**
   * Binaries learned from the exec notice of a process that was gone when discovery looked
   * (attached, then lingering).
   */
  public long learnedFromExecs() {
    return learned.sum();
  }

  /**
   * Binaries of exec notices whose process was gone and whose file could not be reached (deleted or
   * replaced at its path, no live process running it): not learned, and not tried again from notices
   * for a minute (each time counted).
   */
  public long unreachableBinaries() {
    return unreachable.sum();
  }

  /** Binaries attached again without being read: their inspection came from the cache. */
  public long inspectionCacheHits() {
    return inspectionCache.hits();
  }

  /** Probe attachments the kernel refused. */
  public long attachFailures() {
    return attacher.attachFailures();
  }

  /** Stops the discovery thread (a task under way ends first), then detaches everything. */
  @Override
  public void close() {
    executor.shutdown(); // cancels the periodic scan
    executor.getQueue().clear(); // queued exec notices and ServeHTTP tasks: moot now
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("the discovery thread did not stop within 10 s; detaching anyway");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    traced.clear();
    attacher.close();
  }
}
