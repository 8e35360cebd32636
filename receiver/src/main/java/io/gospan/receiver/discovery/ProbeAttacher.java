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
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
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
 * binary; a count of the processes running it, the links and the slot going with the last; the
 * hpack WriteField probe of a ServeHTTP path attached only once that path serves gRPC ({@link
 * #serveHttpInUse}). What to attach is {@link BinaryInspection}'s: this class decides nothing.
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
  public record Outcome(TracedBinary binary, String failure, boolean exeGone) {}

  private final GrpcProbes probes;
  private final ProcFs procFs;
  /** The traced binaries: written by the owner thread, read by any. */
  private final Map<ExeKey, TracedBinary> binaries = new ConcurrentHashMap<>();
  /** Owner thread only. */
  private final Map<ExeKey, Map<Probe, ProbeLink>> links = new HashMap<>();
  /** Owner thread only: deferred probes' function entry file offsets. */
  private final Map<ExeKey, Map<Probe, Long>> deferred = new HashMap<>();
  private final LongAdder attachFailures = new LongAdder();

  /**
   * @param probes the loaded probes
   * @param procFs where a deferred probe finds a process of its binary to attach through
   */
  public ProbeAttacher(GrpcProbes probes, ProcFs procFs) {
    this.probes = probes;
    this.procFs = procFs;
  }

  /**
   * Registers a binary's offsets and attaches its probes as {@code inspection} plans them (the
   * deferred ones wait for {@link #serveHttpInUse}). The binary is then traced until its last
   * process goes ({@link #processExited}) or {@link #close()}.
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
    try {
      probes.putBinary(key, ProbeOffsets.toGoOffsets(r), inspection.readOnlyData());
    } catch (IllegalStateException e) {
      return new Outcome(null, e.getMessage(), false);
    }
    TracedBinary binary = new TracedBinary(key, path, inspection);
    inspection.refused().forEach(binary::refuse);
    Map<Probe, ProbeLink> attached = new EnumMap<>(Probe.class);
    Map<Probe, Long> waiting = new EnumMap<>(Probe.class);
    for (BinaryInspection.ProbePlan plan : inspection.plans().values()) {
      Probe probe = plan.probe();
      if (plan.action() == BinaryInspection.Action.DEFER) {
        waiting.put(probe, plan.function().fileOffset());
      } else if (plan.action() == BinaryInspection.Action.ATTACH) {
        try {
          attached.put(probe, probes.attach(ProbeOffsets.probe(probe), key, exe, plan.function().fileOffset()));
        } catch (ProbeException e) {
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
      return new Outcome(null, "no probe could be attached: " + binary.refused(), !Files.exists(exe));
    }
    binary.setAttached(attached.keySet());
    binary.setDeferred(waiting.keySet());
    links.put(key, attached);
    deferred.put(key, waiting);
    binaries.put(key, binary);
    return new Outcome(binary, null, false);
  }

  /** {@code pid} runs {@code binary} (attached here). */
  public void processStarted(TracedBinary binary, int pid) {
    binary.addPid(pid);
  }

  /** {@code pid}, running {@code binary}, exited: with the last process, the probes go. */
  public void processExited(TracedBinary binary, int pid) {
    if (binary.removePid(pid) && binaries.get(binary.key()) == binary) {
      // detached before it leaves the view: what binaries() lists is what is attached
      detach(binary);
      binaries.remove(binary.key());
    }
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

  /** Probe attachments the kernel refused. */
  public long attachFailures() {
    return attachFailures.sum();
  }

  private void detach(TracedBinary binary) {
    Map<Probe, ProbeLink> l = links.remove(binary.key());
    deferred.remove(binary.key());
    if (l != null) {
      l.values().forEach(ProbeLink::close);
    }
    binary.setAttached(Set.of());
    probes.removeBinary(binary.key());
    LOG.info("last process of {} exited: probes detached", Printable.escape(binary.path()));
  }

  /** Detaches everything. */
  @Override
  public void close() {
    for (TracedBinary b : List.copyOf(binaries.values())) {
      detach(b);
      binaries.remove(b.key());
    }
  }
}
