package io.gospan.receiver.discovery;

import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.probe.ExeKey;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One inspected binary that gospan traces: what inspection found, the probes attached (one link
 * each, serving every process of the binary), deferred and refused, and the processes running it.
 *
 * <p>Changed by the discovery thread only ({@link ProbeAttacher}); each accessor returns an
 * immutable snapshot and may be called from any thread.
 */
public final class TracedBinary {
  private final ExeKey key;
  private final String path;
  private final String goVersion;
  private final String grpcVersion;
  private final String offsetsSource;
  private volatile Set<Probe> attached = Set.of();
  private volatile int uprobes;
  private volatile Set<Probe> deferred = Set.of();
  private volatile Map<Probe, String> refused = Map.of();
  private volatile Set<Integer> pids = Set.of();
  /** Whether its probes were described in the log already (once per binary, not per process). */
  private boolean announced;
  /** {@link System#nanoTime()} when its last process exited while its probes stayed attached; 0: not lingering. */
  private volatile long lingeringSince;
  /** {@link System#nanoTime()} when its probes were attached; 0 until then. */
  private volatile long attachedNanos;

  TracedBinary(ExeKey key, String path, BinaryInspection inspection) {
    this.key = key;
    this.path = path;
    this.goVersion = inspection.goVersion();
    this.grpcVersion = inspection.grpcVersionOrUnknown();
    this.offsetsSource = inspection.offsetsSource();
  }

  public ExeKey key() {
    return key;
  }

  /** The executable's path as first seen (as the kernel names it: may end in " (deleted)"). */
  public String path() {
    return path;
  }

  /** The executable's path without the kernel's " (deleted)" suffix. */
  public java.nio.file.Path executable() {
    return java.nio.file.Path.of(ProcessSelector.stripDeleted(path));
  }

  public String goVersion() {
    return goVersion;
  }

  /** grpc-go module version from buildinfo, "unknown" without module information. */
  public String grpcVersion() {
    return grpcVersion;
  }

  /**
   * Whether its probes were attached before {@code execNanos} ({@code bpf_ktime_get_ns()} of an exec,
   * {@code CLOCK_MONOTONIC} as {@link System#nanoTime()} on Linux): a process exec'd then runs a
   * binary that was traced at its exec. A process exec'd earlier may have made its calls before any
   * probe was there.
   */
  public boolean attachedBefore(long execNanos) {
    long at = attachedNanos;
    return at != 0 && at < execNanos;
  }

  void attachedAt(long nanos) {
    this.attachedNanos = nanos;
  }

  /** Probes attached. */
  public Set<Probe> attached() {
    return attached;
  }

  /**
   * Uprobes the attached probes use: one per probe, and one per {@code RET} instruction for a
   * probe attached at its function's returns ({@link Probe#atReturns()}).
   */
  public int uprobes() {
    return uprobes;
  }

  /** Probes ready to attach once their path is in use (see {@link Tracer#serveHttpInUse}). */
  public Set<Probe> deferred() {
    return deferred;
  }

  /** Whether {@code probe} waits for its path to be in use. */
  public boolean isDeferred(Probe probe) {
    return deferred.contains(probe);
  }

  /** Probes not attached, with the reason. */
  public Map<Probe, String> refused() {
    return refused;
  }

  /** Processes running this binary now. */
  public Set<Integer> pids() {
    return pids;
  }

  /**
   * Whether no process runs the binary now while its probes stay attached ({@code
   * discovery.linger}): a new process of it is traced from its first call.
   */
  public boolean lingering() {
    return lingeringSince != 0;
  }

  /** Where the offsets came from: {@link BinaryInspection#offsetsSource()}. */
  public String offsetsSource() {
    return offsetsSource;
  }

  // Writers: the discovery thread only (one writer, so a copy-on-write is never lost).

  void setAttached(Set<Probe> probes) {
    attached = Collections.unmodifiableSet(probes.isEmpty() ? EnumSet.noneOf(Probe.class) : EnumSet.copyOf(probes));
  }

  void setUprobes(int n) {
    uprobes = n;
  }

  void setDeferred(Set<Probe> probes) {
    deferred = Collections.unmodifiableSet(probes.isEmpty() ? EnumSet.noneOf(Probe.class) : EnumSet.copyOf(probes));
  }

  /** True the first time only: whether the caller is to describe the binary's probes in the log. Discovery thread. */
  boolean announce() {
    boolean first = !announced;
    announced = true;
    return first;
  }

  void refuse(Probe probe, String reason) {
    Map<Probe, String> m = new LinkedHashMap<>(refused);
    m.put(probe, reason);
    refused = Collections.unmodifiableMap(m);
  }

  /** {@link System#nanoTime()} when it began lingering (never 0), or 0 when it does not linger. */
  long lingeringSince() {
    return lingeringSince;
  }

  void setLingeringSince(long nanoTime) {
    lingeringSince = nanoTime;
  }

  /** Adds a process; returns whether it is new. */
  boolean addPid(int pid) {
    if (pids.contains(pid)) {
      return false;
    }
    Set<Integer> s = new TreeSet<>(pids);
    s.add(pid);
    pids = Collections.unmodifiableSet(s);
    return true;
  }

  /** Removes a process; returns whether none is left. */
  boolean removePid(int pid) {
    Set<Integer> s = new TreeSet<>(pids);
    s.remove(pid);
    pids = Collections.unmodifiableSet(s);
    return s.isEmpty();
  }

  @Override
  public String toString() {
    return path + " (" + goVersion + ", grpc-go " + grpcVersion + ")";
  }
}
