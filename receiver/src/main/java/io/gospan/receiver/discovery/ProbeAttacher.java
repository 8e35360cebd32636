package io.gospan.receiver.discovery;

import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.probe.GrpcProbes;
import io.gospan.receiver.probe.ProbeException;
import io.gospan.receiver.probe.ProbeLink;
import io.gospan.receiver.probe.ProbeOffsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Attaches the probes of inspected binaries and detaches them: per binary (device + inode) a
 * slot of offsets in the BPF maps and one uprobe link per probe, serving every process of the
 * binary; the processes running it; the hpack WriteField probe of a ServeHTTP path attached only
 * once that path serves gRPC ({@link #serveHttpInUse}). What to attach is {@link
 * BinaryInspection}'s: this class decides nothing.
 *
 * <p>When the last process of a binary exits, its probes stay attached for {@code linger} (the
 * binary <em>lingers</em>): a command-line client that runs for 20 ms and exits before discovery
 * could attach anything is traced from its first call on its next run, as the probes and the
 * offsets are per binary, not per process. The linger counts from the binary's last run: the
 * exec tracepoint stamps every exec of a traced binary in the kernel ({@link GrpcProbes#lastExecNanos}),
 * read before a lingering binary is detached, so a binary run every few seconds by processes that
 * exit before discovery sees them (or before their exec notice is read) stays attached. A lingering
 * binary is detached once {@code linger} has passed without a run of it ({@link #expireLingering},
 * called on every scan), when more than {@code maxLingering} binaries linger (the one lingering
 * longest since its last run goes first), when every
 * BPF binary slot is taken and another binary needs one (likewise), and at once when its
 * executable had been deleted when gospan first saw it (the kernel named it "... (deleted)"). While
 * it lingers it holds its executable's inode: a file deleted meanwhile keeps its disk space until
 * then, and its inode number is not reused.
 *
 * <p>Every {@link GrpcProbes} call that attaches or registers goes through here. Changed by one
 * thread (the discovery thread; a test's thread); {@link #binary} and {@link #binaries} may be
 * called from any thread.
 */
public final class ProbeAttacher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ProbeAttacher.class);

  /**
   * The outcome of {@link #attach}.
   *
   * @param binary the traced binary, null when nothing could be attached
   * @param failure why nothing was attached (null when {@code binary} is not)
   * @param exeGone the executable vanished meanwhile (a process that exited): nothing is wrong
   *     with the binary, it need not be remembered as unsuitable
   */
  public record Outcome(TracedBinary binary, String failure, boolean exeGone, boolean permissionDenied) {
    public Outcome(TracedBinary binary, String failure, boolean exeGone) {
      this(binary, failure, exeGone, false);
    }
  }

  private final GrpcProbes probes;
  private final ProcFs procFs;
  /** The traced binaries: written by the owner thread, read by any. */
  private final Map<ExeKey, TracedBinary> binaries = new ConcurrentHashMap<>();
  /** Owner thread only. */
  private final Map<ExeKey, Map<Probe, ProbeLink>> links = new HashMap<>();
  /** Owner thread only: deferred probes' function entry file offsets. */
  private final Map<ExeKey, Map<Probe, Long>> deferred = new HashMap<>();
  private final LongAdder attachFailures = new LongAdder();
  /** Whether any probe was ever attached in this run (a refusal for privileges is then not the whole story). */
  private volatile boolean everAttached;
  private final long lingerNanos;
  private final int maxLingering;
  /** Owner thread only: the lingering binaries, in the order they began to (oldest first). */
  private final Map<ExeKey, TracedBinary> lingering = new LinkedHashMap<>();
  private final LongAdder lingerEnded = new LongAdder();

  /**
   * Without lingering: a binary's probes are detached with its last process.
   *
   * @param probes the loaded probes
   * @param procFs where a deferred probe finds a process of its binary to attach through
   */
  public ProbeAttacher(GrpcProbes probes, ProcFs procFs) {
    this(probes, procFs, Duration.ZERO, 0);
  }

  /**
   * @param probes the loaded probes
   * @param procFs where a deferred probe finds a process of its binary to attach through
   * @param linger how long a binary's probes stay attached after its last process exited ({@link
   *     Duration#ZERO}: detached with it)
   * @param maxLingering binaries lingering at once at most (0: none lingers); beyond, the one
   *     lingering longest is detached
   * @throws IllegalArgumentException when {@code linger} or {@code maxLingering} is negative
   */
  public ProbeAttacher(GrpcProbes probes, ProcFs procFs, Duration linger, int maxLingering) {
    if (linger.isNegative() || maxLingering < 0) {
      throw new IllegalArgumentException("linger " + linger + " and max lingering " + maxLingering + " must not be negative");
    }
    this.probes = probes;
    this.procFs = procFs;
    this.lingerNanos = linger.toNanos();
    this.maxLingering = maxLingering;
  }

  /**
   * Registers a binary's offsets and attaches its probes as {@code inspection} plans them (the
   * deferred ones wait for {@link #serveHttpInUse}). The binary is then traced until its last
   * process goes ({@link #processExited}) and its linger ends, or {@link #close()}. When every
   * BPF binary slot is taken, lingering binaries are detached (oldest first) to free one.
   *
   * @param key the executable's device + inode
   * @param exe a path that reaches it ({@link ProcessEntry#reachable()})
   * @param path its path for people (as the kernel names it)
   * @param inspection what {@link BinaryInspection#inspect} found; must produce spans
   */
  public Outcome attach(ExeKey key, Path exe, String path, BinaryInspection inspection) {
    if (binaries.containsKey(key)) {
      throw new IllegalStateException(path + " is attached already");
    }
    OffsetsResolution r = inspection.resolution().orElseThrow();
    while (true) {
      try {
        probes.putBinary(key, ProbeOffsets.toGoOffsets(r), inspection.layout(), inspection.probeSet());
        break;
      } catch (IllegalStateException e) { // every slot taken
        if (lingering.isEmpty()) {
          return new Outcome(null, e.getMessage(), false);
        }
        endLinger(lingeringLongest(), "its slot is needed for " + path);
      }
    }
    TracedBinary binary = new TracedBinary(key, path, inspection);
    inspection.refused().forEach(binary::refuse);
    Map<Probe, ProbeLink> attached = new EnumMap<>(Probe.class);
    Map<Probe, Long> waiting = new EnumMap<>(Probe.class);
    int tried = 0;
    int denied = 0;
    for (BinaryInspection.ProbePlan plan : inspection.plans().values()) {
      Probe probe = plan.probe();
      if (plan.action() == BinaryInspection.Action.DEFER) {
        waiting.put(probe, plan.function().fileOffset());
      } else if (plan.action() == BinaryInspection.Action.ATTACH) {
        tried++;
        try {
          attached.put(probe, probe.atReturns() || probe.pastGuard()
              ? probes.attachAt(ProbeOffsets.probe(probe), key, exe, plan.returns())
              : probes.attach(ProbeOffsets.probe(probe), key, exe, plan.function().fileOffset()));
        } catch (ProbeException e) {
          if (e.permissionDenied()) {
            denied++;
          }
          attachFailures.increment();
          binary.refuse(probe, "attach failed: " + e.getMessage());
          if (Files.exists(exe)) {
            LOG.warn("attaching {} to {} failed: {}", probe, Printable.escape(path), e.getMessage());
          } else {
            LOG.debug("{} vanished while attaching {}", Printable.escape(path), probe);
          }
        }
      }
    }
    if (attached.isEmpty()) {
      probes.removeBinary(key);
      boolean gone = !Files.exists(exe);
      return new Outcome(null, "no probe could be attached: " + binary.refused(), gone, !gone && tried > 0 && denied == tried);
    }
    everAttached = true;
    binary.setAttached(attached.keySet());
    binary.setUprobes(attached.values().stream().mapToInt(ProbeLink::uprobes).sum());
    binary.setDeferred(waiting.keySet());
    links.put(key, attached);
    deferred.put(key, waiting);
    binary.attachedAt(System.nanoTime()); // every link is in place: an exec from now on runs a traced binary
    binaries.put(key, binary);
    return new Outcome(binary, null, false);
  }

  /** {@code pid} runs {@code binary} (attached here): a lingering binary lingers no more. */
  public void processStarted(TracedBinary binary, int pid) {
    binary.addPid(pid);
    if (lingering.remove(binary.key()) != null) {
      binary.setLingeringSince(0);
      LOG.debug("pid {} runs {}, whose probes lingered", pid, binary.path());
    }
  }

  /**
   * {@code pid}, running {@code binary}, exited: with the last process, the binary lingers (its
   * probes stay attached), or its probes go when it may not linger (no linger configured, or its
   * executable was deleted before gospan saw it).
   */
  public void processExited(TracedBinary binary, int pid) {
    if (!binary.removePid(pid) || binaries.get(binary.key()) != binary) {
      return;
    }
    if (lingerNanos == 0 || maxLingering == 0 || binary.path().endsWith(" (deleted)")) {
      detach(binary, "its last process exited");
      return;
    }
    startLinger(binary);
  }

  /** Whether a binary may linger at all (a linger and room for lingering binaries are configured). */
  public boolean lingers() {
    return lingerNanos > 0 && maxLingering > 0;
  }

  /**
   * {@code binary}, attached here with no process of it known (learned from the exec notice of a
   * process that was gone when discovery looked), lingers from now, as after its last process.
   */
  public void lingerWithoutProcess(TracedBinary binary) {
    if (binaries.get(binary.key()) != binary || !binary.pids().isEmpty() || lingering.containsKey(binary.key())) {
      return;
    }
    if (!lingers()) {
      detach(binary, "no process of it runs and none may linger");
      return;
    }
    startLinger(binary);
  }

  /** The binary's last process is gone: it lingers, the one lingering longest going when too many do. */
  private void startLinger(TracedBinary binary) {
    long now = System.nanoTime();
    lingerFrom(binary, now);
    LOG.debug("no process of {} runs: probes stay attached for {} s", binary.path(), lingerNanos / 1_000_000_000.0);
    while (lingering.size() > maxLingering) {
      endLinger(lingeringLongest(), "more than " + maxLingering + " binaries linger");
    }
  }

  /** {@code binary} lingers from {@code nanoTime} on (last in the order). */
  private void lingerFrom(TracedBinary binary, long nanoTime) {
    lingering.remove(binary.key());
    binary.setLingeringSince(nanoTime == 0 ? 1 : nanoTime);
    lingering.put(binary.key(), binary);
  }

  /**
   * When a process last exec'd {@code binary} after it began to linger, as the exec tracepoint stamped it
   * in the kernel ({@link GrpcProbes#lastExecNanos}), or 0: a run discovery has not seen (gone before it
   * looked, or its notice not read yet) still counts as a use.
   */
  private long ranSince(TracedBinary binary) {
    long exec = probes == null ? 0 : probes.lastExecNanos(binary.key());
    return exec - binary.lingeringSince() > 0 ? exec : 0;
  }

  /**
   * The binary that has lingered longest since it was last run, to be detached when too many linger or
   * a slot is needed; lingering binaries run since they began to linger have their linger start again at
   * that run first.
   */
  private TracedBinary lingeringLongest() {
    for (TracedBinary b : List.copyOf(lingering.values())) {
      long ran = ranSince(b);
      if (ran != 0) {
        lingerFrom(b, ran);
      }
    }
    return lingering.values().iterator().next();
  }

  /**
   * Detaches the binaries that have lingered {@code linger} or longer (the owner thread, on every
   * scan: a binary is detached within {@code linger} plus one scan interval).
   *
   * @return how many were detached
   */
  public int expireLingering() {
    long now = System.nanoTime();
    int n = 0;
    for (TracedBinary b : List.copyOf(lingering.values())) {
      if (now - b.lingeringSince() < lingerNanos) {
        continue;
      }
      long ran = ranSince(b);
      if (ran != 0) {
        lingerFrom(b, ran); // run since (its notice not read, or gone before discovery looked): in use
        if (now - ran < lingerNanos) {
          continue;
        }
      }
      lingering.remove(b.key());
      b.setLingeringSince(0);
      lingerEnded.increment();
      detach(b, "no process of it for " + lingerNanos / 1_000_000_000.0 + " s (the linger)");
      n++;
    }
    return n;
  }

  /** Detaches a lingering binary before its linger ends. */
  private void endLinger(TracedBinary b, String why) {
    lingering.remove(b.key());
    b.setLingeringSince(0);
    lingerEnded.increment();
    detach(b, "it lingered without a process, and " + why);
  }

  /** Binaries whose probes stay attached without a process now. Any thread. */
  public List<TracedBinary> lingering() {
    return binaries.values().stream().filter(TracedBinary::lingering).toList();
  }

  /** Lingering binaries detached so far (their linger over, or evicted). Any thread. */
  public long lingerEnded() {
    return lingerEnded.sum();
  }

  /**
   * A process of binary {@code key} received a gRPC request through HTTP/2 server {@code server}
   * ({@code ServeHTTP}): attaches that server's hpack WriteField probe to the binary, once, so
   * the trailers (grpc-status) of its responses are read. Until then such calls' server spans
   * end without a status. Reached through {@code /proc/<pid>/exe} of {@code pid} or of another
   * process of the binary.
   */
  public void serveHttpInUse(ExeKey key, Probe.HttpServer server, int pid) {
    Probe writeField = Probe.writeField(server);
    TracedBinary binary = binaries.get(key);
    Map<Probe, Long> waiting = deferred.get(key);
    Long entry = waiting == null ? null : waiting.get(writeField);
    if (binary == null || entry == null) {
      return; // attached already, or not resolved
    }
    List<Integer> candidates = new ArrayList<>(binary.pids());
    candidates.add(0, pid);
    for (int candidate : candidates) {
      Optional<ProcessEntry> p = procFs.entry(candidate);
      if (p.isEmpty() || !p.get().key().equals(key)) {
        continue;
      }
      try {
        ProbeLink link = probes.attach(ProbeOffsets.probe(writeField), key, p.get().exe(), entry);
        waiting.remove(writeField);
        links.get(key).put(writeField, link);
        binary.setDeferred(waiting.keySet());
        binary.setAttached(links.get(key).keySet());
        binary.setUprobes(links.get(key).values().stream().mapToInt(ProbeLink::uprobes).sum());
        LOG.info("{} serves gRPC through {}'s HTTP/2 server (ServeHTTP): {} attached",
            Printable.escape(binary.path()), server == Probe.HttpServer.XNET ? "x/net" : "net/http", writeField);
      } catch (ProbeException e) {
        if (!Files.exists(p.get().exe())) {
          LOG.debug("pid {} exited while attaching {}", candidate, writeField);
          continue; // another process of the binary, or the next gRPC request, will do
        }
        attachFailures.increment();
        waiting.remove(writeField);
        binary.setDeferred(waiting.keySet());
        binary.refuse(writeField, "attach failed: " + e.getMessage());
        LOG.warn("attaching {} to {} failed: {}", writeField, Printable.escape(binary.path()), e.getMessage());
      }
      return;
    }
  }

  /** The traced binary with this key, if any. Any thread. */
  public Optional<TracedBinary> binary(ExeKey key) {
    return Optional.ofNullable(binaries.get(key));
  }

  /** Binaries traced now. Any thread. */
  public List<TracedBinary> binaries() {
    return List.copyOf(binaries.values());
  }

  /** Whether any probe was attached in this run. Any thread. */
  public boolean everAttached() {
    return everAttached;
  }

  /** Probe attachments the kernel refused. */
  public long attachFailures() {
    return attachFailures.sum();
  }

  /** Detaches {@code binary} and forgets it (it leaves {@link #binaries()} once detached). */
  private void detach(TracedBinary binary, String reason) {
    Map<Probe, ProbeLink> l = links.remove(binary.key());
    deferred.remove(binary.key());
    if (l != null) {
      l.values().forEach(ProbeLink::close);
    }
    binary.setAttached(Set.of());
    binary.setUprobes(0);
    probes.removeBinary(binary.key());
    // detached before it leaves the view: what binaries() lists is what is attached
    binaries.remove(binary.key());
    LOG.info("{}: probes detached ({})", Printable.escape(binary.path()), reason);
  }

  /** Detaches everything. */
  @Override
  public void close() {
    lingering.clear();
    for (TracedBinary b : List.copyOf(binaries.values())) {
      b.setLingeringSince(0);
      detach(b, "closing");
    }
  }
}
