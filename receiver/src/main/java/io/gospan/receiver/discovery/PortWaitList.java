package io.gospan.receiver.discovery;

import io.gospan.offsets.buildinfo.Printable;
import io.gospan.receiver.probe.ExeKey;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The processes selected but for their {@code open_port} ({@link ProcessSelector.Verdict#AWAIT_PORT}),
 * each judged again at every periodic scan in its first {@link #AWAIT_PORT_EAGER_NANOS}, then
 * every {@link ScanCadence#LISTING_INTERVAL_NANOS}, until it listens, exits or exec's another
 * program; at most {@link #MAX_AWAITING_PORT}, the longest-waiting given up beyond. Discovery
 * thread only.
 */
final class PortWaitList {
  private static final Logger LOG = LoggerFactory.getLogger(Tracer.class); // discovery's log lines, as ever

  /**
   * How long after a process is first found waiting for its {@code open_port} every periodic scan
   * judges it again (ns); later, every {@link ScanCadence#LISTING_INTERVAL_NANOS}. Servers mostly listen
   * within a second or two of their exec (after reading their configuration, connecting to what
   * they need); one that waits longer is traced up to 5 s after it listens. Each check costs a few
   * {@code /proc} reads: its network namespace's socket tables once per scan, its fds only when
   * something in that namespace listens on the port.
   */
  static final long AWAIT_PORT_EAGER_NANOS = 10_000_000_000L;
  /** At most this many processes wait for their port; beyond, the longest-waiting is given up. */
  static final int MAX_AWAITING_PORT = 4096;

  /** A process selected but for its {@code open_port}: judged again at {@code nextNanos}. */
  private record Waiting(ExeKey key, long sinceNanos, long nextNanos) {}

  /** A process due to be judged again: {@code pid} waited running {@code key}. */
  record Due(int pid, ExeKey key) {}

  /** pid → a process waiting for its {@code open_port}, oldest first. */
  private final Map<Integer, Waiting> waiting = new LinkedHashMap<>();
  /** The warning that {@link #MAX_AWAITING_PORT} was reached was logged. */
  private boolean fullSaid;

  /** Whether {@code pid} waits running {@code key} (not another program it exec'd since). */
  boolean waits(int pid, ExeKey key) {
    Waiting w = waiting.get(pid);
    return w != null && w.key().equals(key);
  }

  /** Remembers a process that waits for its {@code open_port}, keeping when it began to wait. */
  void await(ProcessEntry p, long now) {
    Waiting was = waiting.get(p.pid());
    long since = was != null && was.key().equals(p.key()) ? was.sinceNanos() : now;
    if (was == null) {
      LOG.debug("pid {} ({}) is selected once it listens on its open_port", p.pid(), Printable.escape(p.exePath()));
      if (waiting.size() >= MAX_AWAITING_PORT) {
        Integer eldest = waiting.keySet().iterator().next();
        waiting.remove(eldest);
        if (!fullSaid) {
          fullSaid = true;
          LOG.warn("more than {} processes wait for their open_port; the longest-waiting are no longer checked",
              MAX_AWAITING_PORT);
        }
      }
    }
    long next = now - since < AWAIT_PORT_EAGER_NANOS ? now : now + ScanCadence.LISTING_INTERVAL_NANOS;
    waiting.put(p.pid(), new Waiting(p.key(), since, next));
  }

  /** {@code pid} waits no more (it was judged, exited, or exec'd). */
  void remove(int pid) {
    waiting.remove(pid);
  }

  /** The processes whose time to be judged again has come at {@code now}, oldest first. */
  List<Due> due(long now) {
    if (waiting.isEmpty()) {
      return List.of();
    }
    return waiting.entrySet().stream()
        .filter(e -> e.getValue().nextNanos() <= now)
        .map(e -> new Due(e.getKey(), e.getValue().key()))
        .toList();
  }

  /** Whether a process waits in its first {@link #AWAIT_PORT_EAGER_NANOS} at {@code now}: scans then keep the interval. */
  boolean anyEager(long now) {
    for (Waiting w : waiting.values()) {
      if (now - w.sinceNanos() < AWAIT_PORT_EAGER_NANOS) {
        return true;
      }
    }
    return false;
  }

  /** The pids waiting now. */
  Set<Integer> pids() {
    return Set.copyOf(waiting.keySet());
  }
}
