package io.gospan.receiver.discovery;

import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.NotGoBinaryException;
import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.resolve.Preference;
import io.gospan.receiver.probe.ExeKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Discovery's inspection stage: whether a process's binary is traceable, its {@link
 * BinaryInspection} read once per binary (kept by file identity in a {@link BinaryCache}), and an
 * unsuitable binary remembered with its reason and said once. Discovery thread only; what it
 * records ({@link DiscoveryFindings#skipped}, the counts) is read by any.
 */
final class BinaryInspections {
  private static final Logger LOG = LoggerFactory.getLogger(Tracer.class); // discovery's log lines, as ever

  private final Preference preference;
  private final boolean responseHeaders;
  private final ProcessSelector selector;
  private final Map<ExeKey, String> skipped;
  private final LongAdder inspections;
  private final BinaryCache<BinaryInspection> cache;
  private final EarlyInspections early;

  /**
   * Inspects as {@code options} say, recording in {@code findings}; a binary {@code early} read
   * already is taken from it.
   */
  BinaryInspections(Tracer.Options options, DiscoveryFindings findings, EarlyInspections early) {
    this.early = early;
    this.preference = options.preference();
    this.responseHeaders = options.responseHeaders();
    this.selector = options.selector();
    this.skipped = findings.skipped;
    this.inspections = findings.inspections;
    this.cache = findings.inspectionCache;
  }

  /** Whether the binary was found unsuitable (it is not inspected again). */
  boolean skipped(ExeKey key) {
    return skipped.containsKey(key);
  }

  /**
   * The binary's inspection, from the cache or read now; null when it is not traceable
   * (remembered unless the process just exited).
   *
   * @param selected the selector chose the process (an unsuitable binary is then said at INFO);
   *     false for one that waits for its {@code open_port}
   */
  BinaryInspection inspection(ProcessEntry p, Path exe, boolean selected) {
    BinaryCache.FileIdentity id = null;
    try {
      id = BinaryCache.FileIdentity.of(exe);
    } catch (IOException | RuntimeException e) {
      // exited meanwhile, or not stat'able: inspected without the cache (and fails the same way)
    }
    if (id != null && !id.key().equals(p.key())) {
      id = null; // the pid names another process now: no cache for this race
    }
    BinaryInspection cached = id == null ? null : cache.get(id).orElse(null);
    BinaryInspection inspection = cached != null ? cached : inspect(p, exe, id, selected);
    if (inspection == null) {
      return null;
    }
    if (cached == null && id != null) {
      cache.put(id, inspection);
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

  /**
   * Reads the binary (or takes its early read, {@code id} known); null when it is not traceable
   * (remembered unless the process just exited).
   */
  private BinaryInspection inspect(ProcessEntry p, Path exe, BinaryCache.FileIdentity id, boolean selected) {
    inspections.increment();
    BinaryInspection inspection;
    try {
      inspection = read(exe, id);
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

  private BinaryInspection read(Path exe, BinaryCache.FileIdentity id) throws IOException {
    Optional<EarlyInspections.Outcome> o = id == null ? Optional.empty() : early.take(id);
    if (o.isEmpty() || o.get().failure() != null && !(o.get().failure() instanceof GoBinaryException)) {
      return BinaryInspection.inspect(exe, preference, responseHeaders); // not read early, or not readable then: read here
    }
    if (o.get().failure() != null) {
      throw o.get().failure(); // the binary's own fault: the same as read here
    }
    return o.get().inspection();
  }

  /** Remembers the binary of {@code p} as unsuitable for {@code reason}, said once; returns null. */
  <T> T skip(ProcessEntry p, String reason, boolean selected) {
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
}
