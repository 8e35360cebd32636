package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.StreamParent;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.trace.IdGenerator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * In-process parents: links a client span to the server span of its own process whose call it was
 * made from, as a {@link StreamParent} names it (docs/propagation.md), whatever order their events
 * come in. The server stream must have started before the client stream was created and not ended
 * before ({@code StreamParent.monotonicNs()}); otherwise the parent is rejected ({@code stale}).
 *
 * <p>A StreamParent whose client stream has not started waits for that start for {@code link_wait}
 * (then counted {@code no_client}); one whose server stream has not started makes a <em>stub</em>
 * node that stream adopts when it starts within {@code link_wait} (else the client span becomes a
 * root, counted {@code not_found}). Processes seen serving (a server stream or a StreamParent) are
 * remembered, least recently seen forgotten first: only their client spans wait for a
 * StreamParent. Each of the three is bounded by {@code streams.max_pending_links}; a StreamParent
 * beyond the bound is dropped ({@code overflow}, and {@link AssemblyMetrics#LINKS_OVERFLOW}).
 * Every StreamParent is counted once by {@link Result} on {@link AssemblyMetrics#LINKS_IN_PROCESS}.
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class ParentLinks {
  /** What became of a StreamParent ({@link AssemblyMetrics#LINKS_IN_PROCESS}'s {@code result}). */
  enum Result {
    LINKED,
    NOT_FOUND,
    STALE,
    TRACEPARENT,
    LATE,
    NO_CLIENT,
    OVERFLOW;

    final Attributes attributes = Attributes.of(AssemblyMetrics.RESULT, name().toLowerCase(Locale.ROOT));
  }

  /** A StreamParent whose client stream has not started (as far as events tell). */
  private record PendingParent(StreamParent parent, long expiresAt) {}

  private final StreamTable streams;
  private final EndedServers endedServers;
  private final TraceDecisions decisions;
  private final IdGenerator ids;
  private final AssemblyCounters counters;
  private final long linkWaitNs;
  private final int maxPending;
  /** Stubs in {@code decideBy} order. */
  private final LinkedHashMap<StreamKey, SpanIdentity> stubs = new LinkedHashMap<>();
  private final LinkedHashMap<StreamKey, PendingParent> pendingParents = new LinkedHashMap<>();
  /** Processes seen serving (a server stream or a StreamParent), least recently seen first. */
  private final LinkedHashMap<Integer, Boolean> servingPids;
  /**
   * The pid put last into {@link #servingPids} (its most recently seen), 0 when unknown: seeing it
   * again changes nothing there, so a server's every start does not box its pid and move it.
   */
  private int lastServingPid;

  ParentLinks(StreamTable streams, EndedServers endedServers, TraceDecisions decisions, IdGenerator ids,
      AssemblyCounters counters, long linkWaitNs, int maxPending) {
    this.streams = streams;
    this.endedServers = endedServers;
    this.decisions = decisions;
    this.ids = ids;
    this.counters = counters;
    this.linkWaitNs = linkWaitNs;
    this.maxPending = maxPending;
    int servingBound = Math.max(1, maxPending);
    this.servingPids =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> eldest) {
            return size() > servingBound;
          }
        };
  }

  void count(Result result) {
    counters.inProcessLink(result.attributes);
  }

  /** A valid StreamParent, linking enabled: links its client span, or waits for its client stream's start. */
  void accept(StreamParent p, long now) {
    serving(p.pid());
    StreamKey clientKey = new StreamKey(p.pid(), p.connectionId(), p.streamId(), Side.CLIENT);
    TracedStream client = streams.get(clientKey);
    SpanIdentity node = client != null ? client.node : decisions.openClient(clientKey);
    if (node == null) {
      // Not started yet (the stream's first header frame may be written after NewStream returns),
      // or ended and decided already (then it expires as no_client).
      if (pendingParents.size() >= maxPending && !pendingParents.containsKey(clientKey)) {
        count(Result.OVERFLOW);
        counters.linkOverflow();
        return;
      }
      PendingParent previous = pendingParents.remove(clientKey); // re-insert: expiry order
      pendingParents.put(clientKey, new PendingParent(p, now + linkWaitNs));
      if (previous != null) {
        count(Result.LATE);
      }
      return;
    }
    if (client != null && client.remoteParent != null) {
      count(Result.TRACEPARENT);
    } else if (!node.open()) {
      count(Result.LATE);
    } else {
      link(node, p, now);
    }
  }

  /** Process {@code pid} serves (a server stream started): its client spans may get a StreamParent. */
  void serving(int pid) {
    if (pid != lastServingPid) {
      servingPids.put(pid, Boolean.TRUE);
      lastServingPid = pid;
    }
  }

  /** Whether process {@code pid} was seen serving (and not forgotten). */
  boolean isServing(int pid) {
    return servingPids.containsKey(pid);
  }

  void processExited(int pid) {
    servingPids.remove(pid);
    if (pid == lastServingPid) {
      lastServingPid = 0;
    }
  }

  /** Removes and returns the StreamParent that waits for client stream {@code key} to start, or {@code null}. */
  StreamParent takePending(StreamKey key) {
    PendingParent pending = pendingParents.isEmpty() ? null : pendingParents.remove(key);
    return pending == null ? null : pending.parent();
  }

  /** The stub of server stream {@code key}, adopted by its stream started at {@code startNs}; {@code null} when none. */
  SpanIdentity adoptStub(StreamKey key, long startNs) {
    SpanIdentity node = stubs.isEmpty() ? null : stubs.remove(key);
    if (node != null) {
      node.stub = false;
      node.startNs = startNs;
    }
    return node;
  }

  /** A server stream adopted a stub: client streams created before it started are not its children. */
  void stubAdopted(SpanIdentity node) {
    if (node.children == null) {
      return;
    }
    for (SpanIdentity child : List.copyOf(node.children)) {
      if (child.parent == node && child.linkNs < node.startNs) {
        count(Result.STALE);
        decisions.detach(child);
      } else if (child.parent == node) {
        count(Result.LINKED);
      }
    }
  }

  /** Links an open client node to the server stream {@code p} names, or decides it when it cannot. */
  void link(SpanIdentity client, StreamParent p, long now) {
    StreamKey parentKey = new StreamKey(p.pid(), p.parentConnectionId(), p.parentStreamId(), Side.SERVER);
    long createdNs = p.monotonicNs();
    SpanIdentity parent;
    TracedStream server = streams.get(parentKey);
    if (server != null) {
      parent = server.startNs <= createdNs ? server.node : null;
    } else {
      EndedServers.ServerRecord ended = endedServers.find(parentKey);
      if (ended != null) {
        parent = ended.covers(createdNs) ? ended.linkTarget() : null;
      } else {
        SpanIdentity stub = stubs.get(parentKey);
        if (stub == null) {
          if (stubs.size() >= maxPending) {
            count(Result.OVERFLOW);
            counters.linkOverflow();
            decisions.root(client);
            return;
          }
          stub = new SpanIdentity(parentKey, ids.generateSpanId(), Long.MIN_VALUE);
          stub.stub = true;
          stub.decideBy = now + linkWaitNs;
          stubs.put(parentKey, stub);
        }
        decisions.link(client, stub, true, createdNs); // counted when the stub is adopted or missing
        return;
      }
    }
    if (parent != null && decisions.link(client, parent, true, createdNs)) {
      count(Result.LINKED);
    } else {
      count(Result.STALE); // ended before the client stream was created, started after it, or a cycle
      decisions.root(client);
    }
  }

  /** A stub's server stream did not start within link_wait: the spans linked to it become roots. */
  private void stubMissing(SpanIdentity stub) {
    if (stub.children == null) {
      return;
    }
    for (SpanIdentity child : List.copyOf(stub.children)) {
      if (child.parent == stub) {
        count(Result.NOT_FOUND);
        decisions.detach(child);
      }
    }
    stub.children = null;
  }

  /** Gives up on the stubs whose server stream did not start by {@code now}. */
  void expireStubs(long now) {
    while (!stubs.isEmpty()) {
      SpanIdentity stub = stubs.values().iterator().next();
      if (stub.decideBy > now) {
        break;
      }
      stubs.remove(stub.key);
      stubMissing(stub);
    }
  }

  /** Gives up on the StreamParents whose client stream did not start by {@code now} ({@code no_client}). */
  void expirePending(long now) {
    for (Iterator<PendingParent> it = pendingParents.values().iterator(); it.hasNext(); ) {
      if (it.next().expiresAt() > now) {
        break;
      }
      it.remove();
      count(Result.NO_CLIENT);
    }
  }

  /** Gives up on every stub (its children become roots). */
  void flushStubs() {
    for (SpanIdentity stub : List.copyOf(stubs.values())) {
      stubs.remove(stub.key);
      stubMissing(stub);
    }
  }

  /** Gives up on every waiting StreamParent ({@code no_client}). */
  void flushPending() {
    for (int i = 0; i < pendingParents.size(); i++) {
      count(Result.NO_CLIENT);
    }
    pendingParents.clear();
  }
}
