package io.gospan.receiver.discovery;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.NotGoBinaryException;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.Module;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.bpf.BpfException;
import io.gospan.receiver.bpf.BpfLink;
import io.gospan.receiver.probe.ExeKey;
import io.gospan.receiver.probe.GrpcProbes;
import io.gospan.receiver.probe.ProbeOffsets;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the processes gospan traces. Each {@link #scan()} lists {@code /proc}: a new process
 * that passes the {@link ProcessSelector} is matched to its binary by device + inode; a binary
 * is inspected once, its offsets put in the BPF map and its probes attached once (every process
 * of the binary is then traced, from its first call, even before a scan sees it); when the last
 * process of a binary exits, its links and offsets are removed.
 *
 * <p>Binaries that are not Go, lack grpc-go, or offer no probe are remembered (bounded) so they
 * are not inspected again. Not thread-safe: one thread scans; the accessors are synchronized.
 */
public final class Tracer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Tracer.class);

  /** Called on the scanning thread. */
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
  }

  private final ProcFs procFs;
  private final ProcessSelector selector;
  private final GrpcProbes probes;
  private final Listener listener;
  private final int maxSkipped;
  private final int self = (int) ProcessHandle.current().pid();
  private final io.gospan.offsets.resolve.Preference preference;

  /** pid → binary, for traced processes. */
  private final Map<Integer, TracedBinary> traced = new HashMap<>();
  /** Pids seen and not traced (not selected, not Go, ...), so they are not re-read. */
  private final Set<Integer> ignored = new HashSet<>();
  /** Start time of each known pid: a different one means the pid was reused by a new process. */
  private final Map<Integer, Long> startTimes = new HashMap<>();
  private final Map<ExeKey, TracedBinary> binaries = new HashMap<>();
  /** Binaries found unsuitable, with the reason: LRU-bounded. */
  private final Map<ExeKey, String> skipped;

  private final LongAdder inspections = new LongAdder();
  private final LongAdder attachFailures = new LongAdder();

  public Tracer(ProcFs procFs, ProcessSelector selector, GrpcProbes probes, Listener listener, int maxSkipped) {
    this(procFs, selector, probes, listener, maxSkipped, io.gospan.offsets.resolve.Preference.DWARF);
  }

  /** As above, with the source that wins when the offsets catalog and DWARF disagree. */
  public Tracer(
      ProcFs procFs, ProcessSelector selector, GrpcProbes probes, Listener listener, int maxSkipped,
      io.gospan.offsets.resolve.Preference preference) {
    this.preference = preference;
    this.procFs = procFs;
    this.selector = selector;
    this.probes = probes;
    this.listener = listener;
    this.maxSkipped = maxSkipped;
    this.skipped =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<ExeKey, String> e) {
            return size() > Tracer.this.maxSkipped;
          }
        };
  }

  private final Object scanLock = new Object();
  private volatile boolean execNotices;
  private final java.util.concurrent.atomic.AtomicBoolean execNoticeLost = new java.util.concurrent.atomic.AtomicBoolean();

  /** Exec notices reach {@link #execed}: scans need not re-check ignored processes' start times. */
  public void execNoticesOn() {
    execNotices = true;
  }

  /** An exec notice could not be queued: the next scan re-checks every ignored process. */
  public void execNoticeLost() {
    execNoticeLost.set(true);
  }

  /** One pass over {@code /proc}: attach new processes, forget exited ones. Scans are serialized. */
  public void scan() {
    synchronized (scanLock) {
      scanOnce();
    }
  }

  /**
   * Looks again at a process that just exec'd a new image: a scan that saw it between fork
   * and exec judged its parent's executable (exec keeps the pid and the start time), and a
   * traced process may have become another program.
   */
  public void execed(int pid) {
    synchronized (scanLock) {
      if (pid == self) {
        return;
      }
      TracedBinary was;
      synchronized (this) {
        was = traced.get(pid);
      }
      if (was != null) {
        // notices arrive after the fact: a scan may already have seen the new image
        Optional<ProcessEntry> now = procFs.entry(pid);
        if (now.isPresent() && now.get().key().equals(was.key())) {
          return;
        }
        exited(pid);
      }
      synchronized (this) {
        ignored.remove(pid);
        startTimes.remove(pid);
      }
      consider(pid);
    }
  }

  private void scanOnce() {
    Set<Integer> now = procFs.pids();
    List<Integer> gone = new ArrayList<>();
    List<Integer> reusedIgnored = new ArrayList<>();
    synchronized (this) {
      for (Integer pid : traced.keySet()) {
        if (!now.contains(pid) || procFs.startTime(pid) != startTimes.getOrDefault(pid, -1L)) {
          gone.add(pid); // exited, or exited and the pid now names another process
        }
      }
      ignored.retainAll(now);
      // A reused pid of an ignored process: without exec notices, only its start time tells.
      // With them, the new process's exec already made us look at it again (a fork without
      // exec runs its parent's binary), so the ~270 stat reads per scan are saved.
      boolean recheck = !execNotices || execNoticeLost.getAndSet(false);
      for (Integer pid : recheck ? ignored : List.<Integer>of()) {
        if (procFs.startTime(pid) != startTimes.getOrDefault(pid, -1L)) {
          reusedIgnored.add(pid);
        }
      }
      ignored.removeAll(reusedIgnored);
      startTimes.keySet().retainAll(now);
    }
    for (int pid : gone) {
      exited(pid);
    }
    for (int pid : now) {
      boolean known;
      synchronized (this) {
        known = pid == self || traced.containsKey(pid) || ignored.contains(pid);
      }
      if (!known) {
        consider(pid);
      }
    }
  }

  private void consider(int pid) {
    long started = procFs.startTime(pid);
    synchronized (this) {
      startTimes.put(pid, started);
    }
    Optional<ProcessEntry> e = procFs.entry(pid);
    if (e.isEmpty() || !selector.matches(e.get(), procFs)) {
      synchronized (this) {
        ignored.add(pid);
      }
      return;
    }
    ProcessEntry p = e.get();
    TracedBinary binary;
    synchronized (this) {
      binary = binaries.get(p.key());
      if (binary == null && skipped.containsKey(p.key())) {
        ignored.add(pid);
        return;
      }
    }
    if (binary == null) {
      binary = inspectAndAttach(p);
      if (binary == null) {
        synchronized (this) {
          ignored.add(pid);
        }
        return;
      }
    }
    synchronized (this) {
      binary.pids.add(pid);
      traced.put(pid, binary);
    }
    LOG.info(
        "tracing pid {} ({}): {}, grpc-go {}, offsets from {}, probes attached {}{}",
        pid, p.exePath(), binary.goVersion(), binary.grpcVersion(), binary.offsetsSource(), binary.attached(),
        binary.refused().isEmpty() ? "" : ", refused " + binary.refused());
    listener.attached(p, binary);
  }

  /** Inspects a binary once and attaches its probes; null when it is not traceable (remembered). */
  private TracedBinary inspectAndAttach(ProcessEntry p) {
    inspections.increment();
    OffsetsResolution resolution;
    Optional<long[]> readOnlyData;
    String goVersion;
    String grpcVersion = "unknown";
    String xnetVersion = "unknown";
    try (GoBinary b = GoBinary.open(reachable(p))) {
      BuildInfo info = b.buildInfo();
      goVersion = info.goVersion();
      if (info.hasModuleInfo()) {
        Optional<Module> grpc = info.dependency("google.golang.org/grpc");
        if (grpc.isEmpty() && !info.main().map(m -> m.path().equals("google.golang.org/grpc")).orElse(false)) {
          return skip(p, "does not link grpc-go");
        }
        grpcVersion = grpc.map(Module::effectiveVersion).orElse("(main module)");
        xnetVersion = info.dependency("golang.org/x/net").map(Module::effectiveVersion).orElse("unknown");
      }
      resolution = OffsetsResolver.resolve(b, io.gospan.offsets.catalog.OffsetsCatalog.embedded(), preference);
      readOnlyData = b.elf().readOnlyData();
    } catch (NotGoBinaryException e) {
      return skip(p, "not a Go binary");
    } catch (GoBinaryException e) {
      return skip(p, "cannot be inspected: " + e.getMessage());
    } catch (IOException e) {
      if (!Files.exists(reachable(p))) {
        LOG.debug("pid {} exited during inspection", p.pid());
        return null; // not remembered: nothing is wrong with the binary
      }
      return skip(p, "cannot be read: " + e.getMessage());
    }
    if (resolution.functions().isEmpty()) {
      return skip(p, "has none of grpc-go's transport functions");
    }
    TracedBinary binary = new TracedBinary(p.key(), p.exePath(), goVersion, grpcVersion, xnetVersion, resolution);
    try {
      probes.putBinary(p.key(), ProbeOffsets.toGoOffsets(resolution), readOnlyData);
    } catch (IllegalStateException e) {
      return skip(p, e.getMessage());
    }
    for (Probe probe : Probe.values()) {
      String refusal = resolution.refusal(probe);
      if (refusal != null) {
        if (!probe.serveHttp() || resolution.functions().containsKey(probe)) {
          binary.refused.put(probe, refusal); // a server copy the binary does not link is no refusal
        }
        continue;
      }
      if (probe.writeField()) {
        // A hit per header field of every encoder, grpc-go's own included: attached only once
        // this binary serves gRPC through that HTTP/2 server (serveHttpInUse).
        binary.deferred.put(probe, resolution.functions().get(probe).fileOffset());
        continue;
      }
      try {
        BpfLink link =
            probes.attach(
                ProbeOffsets.probe(probe), p.key(), reachable(p), resolution.functions().get(probe).fileOffset());
        binary.links.put(probe, link);
      } catch (BpfException e) {
        attachFailures.increment();
        binary.refused.put(probe, "attach failed: " + e.getMessage());
        if (Files.exists(reachable(p))) {
          LOG.warn("attaching {} to {} failed: {}", probe, p.exePath(), e.getMessage());
        } else {
          LOG.debug("pid {} exited while attaching {}", p.pid(), probe);
        }
      }
    }
    if (binary.links.isEmpty()) {
      probes.removeBinary(p.key());
      if (!Files.exists(reachable(p))) {
        return null;
      }
      return skip(p, "no probe could be attached: " + binary.refused);
    }
    synchronized (this) {
      binaries.put(p.key(), binary);
    }
    return binary;
  }

  /**
   * A process of binary {@code key} received a gRPC request through HTTP/2 server {@code server}
   * ({@code ServeHTTP}): attaches that server's hpack WriteField probe to the binary, once, so
   * the trailers (grpc-status) of its responses are read. Until then such calls' server spans
   * end without a status. Reached through {@code /proc/<pid>/exe}.
   */
  public void serveHttpInUse(ExeKey key, Probe.HttpServer server, int pid) {
    Probe writeField = Probe.writeField(server);
    synchronized (scanLock) {
      TracedBinary binary;
      synchronized (this) {
        binary = binaries.get(key);
      }
      if (binary == null) {
        return;
      }
      Long entry;
      List<Integer> pids;
      synchronized (binary) {
        entry = binary.deferred.get(writeField);
        pids = new ArrayList<>(binary.pids);
      }
      if (entry == null) {
        return; // attached already, or not resolved
      }
      pids.add(0, pid);
      for (int candidate : pids) {
        Optional<ProcessEntry> p = procFs.entry(candidate);
        if (p.isEmpty() || !p.get().key().equals(key)) {
          continue;
        }
        try {
          BpfLink link = probes.attach(ProbeOffsets.probe(writeField), key, p.get().exe(), entry);
          synchronized (binary) {
            binary.deferred.remove(writeField);
            binary.links.put(writeField, link);
          }
          LOG.info("{} serves gRPC through {}'s HTTP/2 server (ServeHTTP): {} attached",
              binary.path(), server == Probe.HttpServer.XNET ? "x/net" : "net/http", writeField);
        } catch (BpfException e) {
          if (!Files.exists(p.get().exe())) {
            LOG.debug("pid {} exited while attaching {}", candidate, writeField);
            continue; // another process of the binary, or the next gRPC request, will do
          }
          attachFailures.increment();
          synchronized (binary) {
            binary.deferred.remove(writeField);
            binary.refused.put(writeField, "attach failed: " + e.getMessage());
          }
          LOG.warn("attaching {} to {} failed: {}", writeField, binary.path(), e.getMessage());
        }
        return;
      }
    }
  }

  /**
   * A path to the process's executable: {@code /proc/<pid>/exe} while the process lives (works
   * across mount namespaces), else the executable's own path when it is the same file (device and
   * inode) in ours, so a short-lived process that exits during inspection still gets its binary
   * inspected and attached (its next run is then traced from its first call).
   */
  private static java.nio.file.Path reachable(ProcessEntry p) {
    if (Files.exists(p.exe())) {
      return p.exe();
    }
    java.nio.file.Path own = p.executable();
    try {
      if (!p.exePath().endsWith(" (deleted)") && ExeKey.of(own).equals(p.key())) {
        return own;
      }
    } catch (IOException | RuntimeException e) {
      // not reachable from this mount namespace
    }
    return p.exe();
  }

  private TracedBinary skip(ProcessEntry p, String reason) {
    LOG.debug("not tracing {} (pid {}): {}", p.exePath(), p.pid(), reason);
    synchronized (this) {
      skipped.put(p.key(), reason);
    }
    return null;
  }

  private void exited(int pid) {
    TracedBinary binary;
    boolean last;
    synchronized (this) {
      binary = traced.remove(pid);
      startTimes.remove(pid);
      if (binary == null) {
        return;
      }
      binary.pids.remove(pid);
      last = binary.pids.isEmpty();
    }
    LOG.info("pid {} ({}) exited", pid, binary.path());
    listener.exited(pid, binary);
    if (last) {
      // detached before it leaves the view: what binaries() lists is what is attached
      detach(binary);
      synchronized (this) {
        binaries.remove(binary.key());
      }
    }
  }

  private void detach(TracedBinary binary) {
    synchronized (binary) {
      binary.links.values().forEach(BpfLink::close);
      binary.links.clear();
    }
    probes.removeBinary(binary.key());
    LOG.info("last process of {} exited: probes detached", binary.path());
  }

  /** Traced processes now: pid → binary. */
  public synchronized Map<Integer, TracedBinary> traced() {
    return Map.copyOf(traced);
  }

  /** The traced binary with this key, if any. */
  public synchronized Optional<TracedBinary> binary(ExeKey key) {
    return Optional.ofNullable(binaries.get(key));
  }

  /** Whether the scan has discovered and traces this pid. */
  public synchronized boolean isTraced(int pid) {
    return traced.containsKey(pid);
  }

  /** Binaries traced now. */
  public synchronized List<TracedBinary> binaries() {
    return List.copyOf(binaries.values());
  }

  /** Binaries inspected so far (each once while it stays known). */
  public long inspections() {
    return inspections.sum();
  }

  /** Probe attachments the kernel refused. */
  public long attachFailures() {
    return attachFailures.sum();
  }

  /** Detaches everything. */
  @Override
  public void close() {
    List<TracedBinary> all;
    synchronized (this) {
      all = List.copyOf(binaries.values());
      binaries.clear();
      traced.clear();
    }
    all.forEach(this::detach);
  }
}
