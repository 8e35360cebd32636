package io.gospan.receiver.discovery;

import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.probe.ExecNotice;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Discovery's stages and the state they keep, owned by the discovery thread ({@link
 * DiscoveryThread}: nothing here is reached from another thread, but {@link DiscoveryFindings}).
 * For each process a scan or an exec notice brings: the matcher ({@link ProcessSelector}; a
 * process that waits for its {@code open_port} goes to the {@link PortWaitList}), the inspection
 * of its binary ({@link BinaryInspections}: once per binary, cached by file identity, unsuitable
 * binaries remembered), the attacher ({@link ProbeAttacher}), then the {@link Tracer.Listener}; see
 * {@link #consider(ProcessEntry, PortLookup)}. A process gone before discovery looked teaches its
 * binary through its exec notice ({@link #learn}); an exec held by {@link ExecHold} has its binary
 * judged before it runs ({@link #judgeHeld}).
 *
 * <p>Near 500 lines: the learning from exec notices and the exec hold's judging are other ways
 * into the same inspect-and-attach steps, and share the logging that says once what became of a
 * binary.
 */
final class DiscoveryStages {
  private static final Logger LOG = LoggerFactory.getLogger(Tracer.class); // discovery's log lines, as ever

  /** Binaries remembered as not learnable from exec notices, at most. */
  static final int MAX_NOT_LEARNED = 4096;

  /**
   * How long a binary not learned from a notice is not tried again from notices (ns): one {@code /proc}
   * pass a minute at most for a deleted binary that keeps being run by processes that exit at once.
   */
  static final long NOT_LEARNED_RETRY_NANOS = 60_000_000_000L;

  private final ProcFs procFs;
  private final ProcessSelector selector;
  private final ProbeAttacher attacher;
  private final Tracer.Listener listener;
  private final ProcessWatcher watcher;
  private final ScanCadence cadence;
  private final PortWaitList portWaits;
  private final BinaryInspections inspections;
  private final DiscoveryFindings findings;

  /** {@link Tracer.Listener#noPrivileges} was called. */
  private boolean noPrivilegesSaid;
  /** Exec notices dropped before they reached {@link #execed} (see {@link #execNoticesOn}). */
  private LongSupplier execNoticesDropped = () -> 0;
  private long execNoticesDroppedSeen;

  /**
   * Binaries not learned from an exec notice, with when ({@link System#nanoTime()}): unreachable (no
   * file of that device and inode found by the notice's path nor through a live process), or a
   * selector needs the process; LRU-bounded. Notices of such a binary are not acted on for {@link
   * #NOT_LEARNED_RETRY_NANOS} (its inode number may be given to a new file meanwhile); a live
   * process of it is judged as any.
   */
  private final Map<ExeKey, Long> notLearned =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ExeKey, Long> e) {
          return size() > MAX_NOT_LEARNED;
        }
      };

  /** The stages as {@link Tracer} wires them: each given, none built here. */
  DiscoveryStages(
      Tracer.Options options, ProcessWatcher watcher, ProbeAttacher attacher, Tracer.Listener listener,
      BinaryInspections inspections, ScanCadence cadence, PortWaitList portWaits, DiscoveryFindings findings) {
    this.procFs = options.procFs();
    this.selector = options.selector();
    this.watcher = watcher;
    this.attacher = attacher;
    this.listener = listener;
    this.cadence = cadence;
    this.portWaits = portWaits;
    this.inspections = inspections;
    this.findings = findings;
  }

  /** See {@link Tracer#execNoticesOn}. */
  void execNoticesOn(LongSupplier dropped) {
    this.execNoticesDropped = dropped;
  }

  /** The periodic scan's interval. */
  void scanInterval(Duration interval) {
    cadence.interval(interval.toNanos());
  }

  /** The pids waiting for their {@code open_port} now. */
  Set<Integer> awaitingPort() {
    return portWaits.pids();
  }

  /** See {@link Tracer#serveHttpInUse}. */
  void serveHttpInUse(ExeKey key, Probe.HttpServer server, int pid) {
    attacher.serveHttpInUse(key, server, pid);
  }

  /**
   * One scan: exited processes forgotten (their binaries may start to linger), lingering binaries
   * past their linger detached, processes waiting for their {@code open_port} judged again, and,
   * when this scan lists {@code /proc} ({@code listing}, or as {@link ScanCadence#listsAt} says), new
   * processes considered.
   */
  void scan(boolean listing) {
    long now = System.nanoTime();
    checkExecNoticesDropped();
    PortLookup ports = new PortLookup(procFs);
    if (!cadence.listsAt(now, listing, watcher.listingNeeded())) {
      watcher.scanFollowed().exited().forEach(this::exited);
      attacher.expireLingering();
      judgeAwaitingPort(now, ports);
      return;
    }
    ProcessWatcher.Changes changes = watcher.scan();
    changes.exited().forEach(this::exited);
    attacher.expireLingering();
    judgeAwaitingPort(now, ports);
    changes.started().forEach(pid -> consider(pid, ports));
  }

  /** The delay the next periodic scan comes after, were one to end at {@code now} (ns). */
  long nextScanDelayNanos(long now) {
    return cadence.nextDelayNanos(watcher.listingNeeded(), portWaits.anyEager(now));
  }

  /** Judges again the processes waiting for their {@code open_port} whose time has come. */
  private void judgeAwaitingPort(long now, PortLookup ports) {
    for (PortWaitList.Due d : portWaits.due(now)) {
      Optional<ProcessEntry> e = procFs.entry(d.pid());
      if (e.isEmpty() || !e.get().key().equals(d.key())) {
        portWaits.remove(d.pid()); // exited, or exec'd another program (its notice or a listing judges that)
        continue;
      }
      consider(e.get(), ports);
    }
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

  /** An exec notice ({@link Tracer#execed}): the process is looked at again, or its binary learned from the notice. */
  void execed(ExecNotice notice) {
    int pid = notice.pid();
    TracedBinary was = findings.traced.get(pid);
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
      portWaits.remove(pid);
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
  /** The binary of a held exec, opened as {@code file}: inspected and attached, lingering until its process shows. */
  void judgeHeld(PinnedFile file, String path, int pid, Duration limit) {
    ExeKey key = file.key();
    if (attacher.binary(key).isPresent() || inspections.skipped(key)) {
      return;
    }
    long t0 = System.nanoTime();
    Path name = Path.of(path).getFileName();
    ProcessEntry p = new ProcessEntry(pid, file.path(), path, key, name == null ? path : name.toString());
    BinaryInspection inspection = inspections.inspection(p, file.path(), true);
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
    if (inspections.skipped(key) || !attacher.lingers()) {
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
      BinaryInspection inspection = inspections.inspection(p, file.path(), true);
      if (inspection == null) {
        return; // not traceable: remembered in skipped
      }
      TracedBinary binary = attach(p, file.path(), inspection);
      if (binary == null) {
        return;
      }
      attacher.lingerWithoutProcess(binary);
      findings.learned.increment();
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
      findings.unreachable.increment();
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
      portWaits.remove(pid);
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
      boolean waiting = portWaits.waits(pid, p.key());
      if (!waiting && attacher.binary(p.key()).isEmpty()
          && (inspections.skipped(p.key()) || inspections.inspection(p, BinaryInspections.durablePath(p), false) == null)) {
        portWaits.remove(pid);
        return;
      }
      portWaits.await(p, System.nanoTime());
      return;
    }
    portWaits.remove(pid);
    if (verdict == ProcessSelector.Verdict.IGNORE) {
      return;
    }
    TracedBinary binary = attacher.binary(p.key()).orElse(null);
    if (binary == null) {
      if (inspections.skipped(p.key())) {
        return;
      }
      binary = inspectAndAttach(p);
      if (binary == null) {
        return;
      }
    }
    attacher.processStarted(binary, pid);
    findings.traced.put(pid, binary);
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
    try (PinnedFile file = PinnedFile.open(BinaryInspections.durablePath(p))) {
      if (!file.key().equals(p.key())) {
        LOG.debug("pid {} exited, and {} is another file now", p.pid(), Printable.escape(p.exePath()));
        return null;
      }
      BinaryInspection inspection = inspections.inspection(p, file.path(), true);
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
        listener.noPrivileges(Tracer.NO_PRIVILEGES.formatted(errno));
      }
      if (o.exeGone()) {
        LOG.debug("pid {} exited while attaching", p.pid());
        return null;
      }
      return inspections.skip(p, o.failure(), true);
    }
    return o.binary();
  }

  private void exited(int pid) {
    TracedBinary binary = findings.traced.remove(pid);
    if (binary == null) {
      return;
    }
    LOG.info("pid {} ({}) exited", pid, Printable.escape(binary.path()));
    listener.exited(pid, binary);
    attacher.processExited(binary, pid);
  }
}
