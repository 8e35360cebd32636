package io.gospan.receiver.discovery;

import io.gospan.offsets.buildinfo.Printable;
import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.probe.GrpcProbes;
import io.gospan.receiver.probe.HeaderNames;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running tracer: the probes loaded, one thread polling the ring buffer into an event
 * consumer (its poll blocks), and discovery ({@link Tracer}) on its own single thread.
 * {@link #close()} stops both, detaches every probe and frees every map.
 *
 * <p>A process's exit reaches the listener on the polling thread, after every event the process
 * wrote before it died: discovery finds an exit by a {@code /proc} scan, while the process's last
 * events (a short-lived client's trailers) may still wait in the ring buffer (up to {@link
 * #SLOW_POLL_MILLIS}, {@link #IDLE_POLL_MILLIS} after an idle spell); ending its spans at the exit first would make them incomplete ({@code
 * process_exited}) and lose the events that follow.
 */
public final class Sidecar implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Sidecar.class);

  /** The shortest wait for records (ms): at high rates, the reader polls every 20 ms (records below
   * the BPF wakeup threshold do not wake it). */
  static final int POLL_MILLIS = 20;

  /**
   * The longest wait while records arrive at a low rate (ms). Each wake-up of the reader costs
   * ~60 µs of CPU on a VM, whatever it reads: at 1,000 spans/s a 20 ms period spends 3 µs per span
   * on wake-ups alone. The period is the one in which {@link #RECORDS_PER_POLL} records arrive at
   * the last poll's rate, within [{@link #POLL_MILLIS}, this]: a record then waits at most this
   * long, far less than the batch processor's schedule delay (docs/benchmarks.md, "The reader's
   * period follows the rate").
   */
  static final int SLOW_POLL_MILLIS = 100;

  /** How many records a poll should find: the reader's period is the time this many take to arrive. */
  static final int RECORDS_PER_POLL = 512;

  /**
   * The longest the first record waits once nothing was read for {@link #IDLE_AFTER_NANOS}: an
   * idle reader wakes 5 times a second instead of 50 (each wake-up costs ~60 µs of CPU on a VM,
   * docs/benchmarks.md "What wakes the idle sidecar"). The BPF side still wakes the reader at
   * once when its wakeup threshold is reached, so a burst after an idle spell loses nothing; the
   * first records after it (and an exec notice, which never wakes the reader) wait up to this.
   */
  static final int IDLE_POLL_MILLIS = 200;

  /** How long without any record (event or exec notice) before the reader polls every {@link #IDLE_POLL_MILLIS}. */
  static final long IDLE_AFTER_NANOS = 5_000_000_000L;

  /**
   * @param headerNames header names captured
   * @param ringBufferBytes events ring buffer size (power of 2, multiple of the page size)
   * @param scanInterval how often {@code /proc} is scanned for new and exited processes
   * @param selector which processes may be traced
   * @param procFs the procfs to scan
   * @param maxSkippedBinaries how many unsuitable binaries are remembered (not re-inspected)
   * @param preference which source wins when the offsets catalog and DWARF disagree
   * @param linger how long a binary's probes stay attached after its last process exited, so a
   *     new process of it is traced from its first call ({@link Duration#ZERO}: detached with it)
   * @param maxLingeringBinaries binaries whose probes stay attached without a process, at most
   *     (the one lingering longest is detached first)
   * @param holdNewBinaries hold each exec of a binary not judged yet until it is ({@link ExecHold})
   * @param holdLimit the longest an exec is held
   */
  public record Options(
      HeaderNames headerNames,
      int ringBufferBytes,
      Duration scanInterval,
      ProcessSelector selector,
      ProcFs procFs,
      int maxSkippedBinaries,
      io.gospan.offsets.resolve.Preference preference,
      Duration linger,
      int maxLingeringBinaries,
      boolean holdNewBinaries,
      Duration holdLimit) {

    /** {@code discovery.linger}'s default. */
    public static final Duration DEFAULT_LINGER = Duration.ofMinutes(10);
    /** {@code discovery.max_lingering_binaries}' default. */
    public static final int DEFAULT_MAX_LINGERING = 64;
    /** {@code discovery.hold_limit}'s default. */
    public static final Duration DEFAULT_HOLD_LIMIT = Duration.ofSeconds(1);

    public Options {
      if (linger.isNegative() || maxLingeringBinaries < 0) {
        throw new IllegalArgumentException("linger and maxLingeringBinaries must not be negative");
      }
      if (holdLimit.isNegative() || holdLimit.isZero()) {
        throw new IllegalArgumentException("holdLimit must be positive");
      }
    }

    /** Without lingering (probes detached with a binary's last process). */
    public Options(
        HeaderNames headerNames, int ringBufferBytes, Duration scanInterval, ProcessSelector selector, ProcFs procFs,
        int maxSkippedBinaries, io.gospan.offsets.resolve.Preference preference) {
      this(headerNames, ringBufferBytes, scanInterval, selector, procFs, maxSkippedBinaries, preference, Duration.ZERO, 0,
          false, DEFAULT_HOLD_LIMIT);
    }

    /** With DWARF preferred over the catalog, without lingering (probes detached with a binary's last process). */
    public Options(
        HeaderNames headerNames, int ringBufferBytes, Duration scanInterval, ProcessSelector selector, ProcFs procFs, int maxSkippedBinaries) {
      this(headerNames, ringBufferBytes, scanInterval, selector, procFs, maxSkippedBinaries, io.gospan.offsets.resolve.Preference.DWARF);
    }

    /** The defaults: scan every 500 ms, DWARF preferred, linger 10 minutes (at most 64 binaries). */
    public static Options defaults() {
      return new Options(HeaderNames.defaults(), 1 << 22, Duration.ofMillis(500), ProcessSelector.all(), ProcFs.system(), 4096)
          .withLinger(DEFAULT_LINGER, DEFAULT_MAX_LINGERING);
    }

    /** These options with another linger (see {@link #linger()}, {@link #maxLingeringBinaries()}). */
    public Options withLinger(Duration linger, int maxLingeringBinaries) {
      return new Options(headerNames, ringBufferBytes, scanInterval, selector, procFs, maxSkippedBinaries, preference,
          linger, maxLingeringBinaries, holdNewBinaries, holdLimit);
    }

    /** These options holding execs of binaries not judged yet, each at most {@code limit} ({@link ExecHold}). */
    public Options withHold(boolean hold, Duration limit) {
      return new Options(headerNames, ringBufferBytes, scanInterval, selector, procFs, maxSkippedBinaries, preference,
          linger, maxLingeringBinaries, hold, limit);
    }
  }

  private final GrpcProbes probes;
  private final Tracer tracer;
  /** Null unless execs are held. */
  private volatile ExecHold hold;
  private final Thread poller;
  private volatile boolean running = true;
  private volatile boolean execsWatched;
  /** Exits discovery found, handed to the listener by the polling thread after a drain. */
  private final ConcurrentLinkedQueue<Exit> exits = new ConcurrentLinkedQueue<>();
  private final Tracer.Listener listener;

  private record Exit(int pid, TracedBinary binary) {}

  private Sidecar(Options options, Consumer<ProbeEvent> events, Tracer.Listener listener, EarlyInspections early) {
    this.listener = listener;
    // The tracer exists before the first event can arrive: probes attach only once it scans.
    this.probes =
        GrpcProbes.open(
            GrpcProbes.Options.of(options.headerNames(), options.ringBufferBytes(), events)
                .withNewProcesses(this::undiscovered));
    this.tracer =
        new Tracer(
            Tracer.Options.of(options.procFs(), options.selector())
                .withMaxSkippedBinaries(options.maxSkippedBinaries())
                .withPreference(options.preference())
                .withResponseHeaders(options.headerNames().capturesResponses()),
            new ProbeAttacher(probes, options.procFs(), options.linger(), options.maxLingeringBinaries()),
            new ExitsAfterEvents(listener, exits),
            early);
    this.poller = new Thread(this::pollLoop, "gospan-ringbuf");
    poller.setDaemon(true);
  }

  /** Processes of traced binaries whose exit is awaited: pid → the exec's time. The polling thread only. */
  private final Map<Integer, Long> runsAwaited =
      new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Long> e) {
          return size() > MAX_RUNS_AWAITED;
        }
      };

  /** Processes of traced binaries followed for {@link #processesWithoutEvents()} at most (the oldest go). */
  static final int MAX_RUNS_AWAITED = 65536;

  private final LongAdder withoutEvents = new LongAdder();

  /**
   * An exec notice, on the polling thread: a process of a binary traced at its exec (its probes
   * attached before the exec's time stamp) is followed until its exit, for {@link
   * #processesWithoutEvents()}; then discovery looks at it. A notice is read up to a poll after its
   * exec, and discovery may have attached the binary meanwhile: a process that execs twice ({@code
   * unshare -m}, {@code ip netns exec}) is found by its first notice running the binary, whose probes
   * are attached then, after the process's calls, before the second notice is read.
   */
  private void execNotice(io.gospan.receiver.probe.ExecNotice n) {
    Optional<TracedBinary> traced = n.exe() == null ? Optional.empty() : tracer.binary(n.exe());
    if (traced.isPresent() && traced.get().attachedBefore(n.tsNanos())) {
      runsAwaited.put(n.pid(), n.tsNanos());
    } else {
      if (traced.isPresent()) {
        LOG.debug("pid {} exec'd {} before its probes were attached: its events are not awaited", n.pid(),
            Printable.escape(traced.get().path()));
      }
      runsAwaited.remove(n.pid()); // exec'd another program, or before the probes: this run is not judged
    }
    ExecHold h = hold;
    if (h != null) {
      h.noticed(n.pid(), n.mountNamespace()); // a container's file systems, marked from its first exec on
    }
    tracer.execed(n);
  }

  /**
   * Processes that exec'd a binary traced at the time, and exited without sending one event (no probe
   * of theirs ran, or none reached the ring buffer): a program that made no gRPC call, or probes that
   * did not run for a new process of a traced binary, which this makes visible. Counted when the exit
   * is handed over, after the ring buffer was drained.
   */
  public long processesWithoutEvents() {
    return withoutEvents.sum();
  }

  /** The first event of a pid, on the polling thread (started after the tracer exists). */
  private void undiscovered(int pid, io.gospan.receiver.probe.ExeKey exe) {
    tracer.undiscovered(pid, exe);
  }

  /**
   * Loads the probes, starts polling, and starts discovery: a scan now and every {@code
   * scanInterval}, exec notices and ServeHTTP notices between scans, on the discovery thread.
   *
   * @param events every decoded event, on the polling thread; an {@link io.gospan.receiver.event.ProbeEventSink}
   *     is handed each poll's events in runs ({@link io.gospan.receiver.probe.GrpcProbes.Options#sink})
   * @throws io.gospan.receiver.bpf.BpfException when the probes cannot be loaded
   */
  public static Sidecar start(Options options, Consumer<ProbeEvent> events, Tracer.Listener listener) {
    return start(options, events, listener, EarlyInspections.NONE);
  }

  /**
   * As {@link #start(Options, Consumer, Tracer.Listener)}; the first scan takes the binaries {@code
   * early} read meanwhile ({@link EarlyInspections#start}, with the same options) instead of reading
   * them again. {@code early} is closed by the first scan, or by {@link #close()}; the caller closes
   * it when this throws.
   *
   * @throws io.gospan.receiver.bpf.BpfException when the probes cannot be loaded
   */
  public static Sidecar start(Options options, Consumer<ProbeEvent> events, Tracer.Listener listener, EarlyInspections early) {
    Sidecar s = new Sidecar(options, events, listener, early);
    try {
      s.probes.watchExecs(s::execNotice);
      s.execsWatched = true;
      s.tracer.execNoticesOn(s.probes::execNoticesLost);
    } catch (io.gospan.receiver.probe.ProbeException e) {
      LOG.warn("no exec notices ({}): new processes are found by the /proc scan alone, every {} ms",
          e.getMessage(), options.scanInterval().toMillis());
    }
    s.probes.onServeHttpGrpc(s.tracer::serveHttpInUse);
    s.poller.start();
    s.tracer.start(options.scanInterval());
    if (options.holdNewBinaries()) {
      if (!s.execsWatched) {
        LOG.warn("discovery.hold_new_binaries: no exec notices, so a held binary's process could not be found: execs are not held");
      } else {
        try {
          s.hold = ExecHold.start(s.tracer.holdJudge(options.holdLimit()), options.holdLimit(), Path.of("/proc/self/mountinfo"));
        } catch (IOException | RuntimeException | LinkageError e) {
          LOG.warn("discovery.hold_new_binaries: execs cannot be held ({}): the first run of a binary gospan has not seen is"
              + " not traced", e.getMessage());
        }
      }
    }
    return s;
  }

  /** Waits until the first scan (processes already running are then attached). */
  public boolean awaitFirstScan(Duration timeout) throws InterruptedException {
    return tracer.awaitFirstScan(timeout);
  }

  public Tracer tracer() {
    return tracer;
  }

  public GrpcProbes probes() {
    return probes;
  }

  /** The listener, but exits are queued for the polling thread ({@link #deliverExits}). */
  private record ExitsAfterEvents(Tracer.Listener delegate, ConcurrentLinkedQueue<Exit> exits) implements Tracer.Listener {
    @Override
    public void attached(ProcessEntry process, TracedBinary binary) {
      delegate.attached(process, binary);
    }

    @Override
    public void exited(int pid, TracedBinary binary) {
      exits.add(new Exit(pid, binary));
    }

    @Override
    public void undiscovered(int pid, TracedBinary binary) {
      delegate.undiscovered(pid, binary);
    }

    @Override
    public void noPrivileges(String message) {
      delegate.noPrivileges(message);
    }
  }

  /**
   * Hands the queued exits to the listener once the ring buffer is drained: every exit taken was
   * queued after its process died, so the drain that follows the take reads every event it wrote.
   * Polling thread (or {@link #close()} after it stopped).
   */
  private void deliverExits() {
    if (exits.isEmpty()) {
      return;
    }
    List<Exit> taken = new ArrayList<>();
    for (Exit e; (e = exits.poll()) != null; ) {
      taken.add(e);
    }
    probes.poll(0);
    for (Exit e : taken) {
      Long exec = runsAwaited.remove(e.pid());
      if (exec != null && probes.lastRecordNanos(e.pid()) < exec) {
        withoutEvents.increment();
        LOG.debug("pid {} ({}) exited without an event", e.pid(), e.binary().path());
      }
      try {
        listener.exited(e.pid(), e.binary());
      } catch (RuntimeException ex) {
        LOG.warn("handling the exit of pid {} failed: {}", e.pid(), ex.toString());
      }
    }
  }

  /**
   * The next poll's wait (ms) after {@code records} arrived in {@code elapsedNanos}: the time {@link
   * #RECORDS_PER_POLL} take at that rate, within [{@link #POLL_MILLIS}, {@link #SLOW_POLL_MILLIS}].
   */
  static int pollMillis(int records, long elapsedNanos) {
    if (records <= 0) {
      return SLOW_POLL_MILLIS;
    }
    long millis = elapsedNanos / 1_000_000L * RECORDS_PER_POLL / records;
    return (int) Math.max(POLL_MILLIS, Math.min(SLOW_POLL_MILLIS, millis));
  }

  private void pollLoop() {
    long lastRecord = System.nanoTime();
    long lastPoll = lastRecord;
    int wait = POLL_MILLIS;
    while (running) {
      try {
        boolean idle = System.nanoTime() - lastRecord > IDLE_AFTER_NANOS;
        int n = probes.poll(idle ? IDLE_POLL_MILLIS : wait);
        long now = System.nanoTime();
        if (n > 0) {
          lastRecord = now;
          wait = pollMillis(n, now - lastPoll);
        }
        lastPoll = now;
        deliverExits();
      } catch (RuntimeException e) {
        LOG.error("polling the ring buffer failed; retrying", e);
        try {
          Thread.sleep(100);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** The exec hold, when execs are held ({@code discovery.hold_new_binaries}). */
  public Optional<ExecHold> hold() {
    return Optional.ofNullable(hold);
  }

  /** Whether exec notices reach discovery (else only the periodic scan finds new processes). */
  public boolean watchesExecs() {
    return execsWatched;
  }

  /** Stops polling (draining what the ring buffer holds) and discovery, detaches, frees. */
  @Override
  public void close() {
    ExecHold h = hold;
    if (h != null) {
      h.close(); // first: nothing waits for a discovery that stops
    }
    running = false;
    try {
      poller.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      probes.poll(0); // what was already written still reaches the consumer
      deliverExits();
    } catch (RuntimeException e) {
      LOG.debug("final ring buffer drain failed", e);
    }
    tracer.close();
    probes.close();
  }
}
