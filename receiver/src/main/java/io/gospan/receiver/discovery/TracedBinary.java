package io.gospan.receiver.discovery;

import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.bpf.BpfLink;
import io.gospan.receiver.probe.ExeKey;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One inspected binary that gospan traces: what inspection found, the probes attached (one link
 * each, serving every process of the binary) and refused, and the processes running it.
 */
public final class TracedBinary {
  private final ExeKey key;
  private final String path;
  private final String goVersion;
  private final String grpcVersion;
  private final String xnetVersion;
  private final OffsetsResolution resolution;
  final Map<Probe, BpfLink> links = new EnumMap<>(Probe.class);
  final Map<Probe, String> refused = new LinkedHashMap<>();
  /** Resolved probes attached only once their path is seen in use (hpack WriteField): function entry file offsets. */
  final Map<Probe, Long> deferred = new EnumMap<>(Probe.class);
  final Set<Integer> pids = new TreeSet<>();

  TracedBinary(ExeKey key, String path, String goVersion, String grpcVersion, String xnetVersion, OffsetsResolution resolution) {
    this.key = key;
    this.path = path;
    this.goVersion = goVersion;
    this.grpcVersion = grpcVersion;
    this.xnetVersion = xnetVersion;
    this.resolution = resolution;
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

  public String xnetVersion() {
    return xnetVersion;
  }

  public OffsetsResolution resolution() {
    return resolution;
  }

  /** Probes attached. */
  public synchronized Set<Probe> attached() {
    return Collections.unmodifiableSet(new TreeSet<>(links.keySet()));
  }

  /** Probes ready to attach once their path is in use (see {@link Tracer#serveHttpInUse}). */
  public synchronized Set<Probe> deferred() {
    return Collections.unmodifiableSet(new TreeSet<>(deferred.keySet()));
  }

  /** Whether {@code probe} waits for its path to be in use. */
  public synchronized boolean isDeferred(Probe probe) {
    return deferred.containsKey(probe);
  }

  /** Probes not attached, with the reason. */
  public synchronized Map<Probe, String> refused() {
    return Collections.unmodifiableMap(new LinkedHashMap<>(refused));
  }

  /** Processes running this binary now. */
  public synchronized Set<Integer> pids() {
    return Collections.unmodifiableSet(new TreeSet<>(pids));
  }

  /** "dwarf", "catalog", or "dwarf+catalog": where the offsets came from. */
  public String offsetsSource() {
    return resolution.values().values().stream()
        .map(v -> v.source().name().toLowerCase(java.util.Locale.ROOT))
        .filter(s -> !s.equals("symtab") && !s.equals("itablinks"))
        .map(s -> s.startsWith("dwarf") ? "dwarf" : s)
        .distinct()
        .sorted()
        .reduce((a, b) -> a + "+" + b)
        .orElse("none");
  }

  @Override
  public String toString() {
    return path + " (" + goVersion + ", grpc-go " + grpcVersion + ")";
  }
}
