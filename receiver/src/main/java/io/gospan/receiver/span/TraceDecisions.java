package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingDecision;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Decides every span's trace id: the graph of {@link SpanIdentity} nodes, in which a linked node
 * takes its parent's trace id once that is final, an open node becomes a root when its wait is
 * over, and an ended span is emitted the moment its own trace id is final (held in {@link
 * HeldSpans} until then).
 *
 * <p>Open nodes wait in {@code decideBy} order: {@code link_wait} after their start, or, for a
 * server span that asked another gospan, that plus the remote extra wait (extended by interim
 * answers). Open client nodes are findable by stream key (for the StreamParent that names them),
 * open server nodes by flow (for the client start that covers them, or another gospan's answer).
 * Linking never closes a cycle; deciding a node decides the nodes waiting on it, breadth first.
 *
 * <p>Sampling is decided with the trace id, once, by the OpenTelemetry SDK's {@link Sampler}
 * ({@code sampling.*}) given the final trace id and the parent's context: the application's {@code
 * traceparent} (remote, its sampled flag), another process's span (remote, that span's decision
 * as its sampled flag), or a span of the same process (local, its decision). So every span of a
 * trace gets one decision: {@code traceidratio} is a function of the trace id, and a {@code
 * parentbased_*} sampler follows the parent, whose decision the child sees, also when the parent
 * was traced by another gospan (the link service's answer carries it). Undecided spans carry none:
 * nothing is emitted before its trace id, and so its sampling, is final.
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class TraceDecisions {
  /** Receives each ended span whose trace id became final. */
  interface Emitter {
    void emit(EndedSpan end, SpanIdentity node);
  }

  private final IdGenerator ids;
  private final long linkWaitNs;
  private final HeldSpans held;
  private final Emitter emitter;
  private Sampler sampler = Sampler.alwaysOn();
  private boolean alwaysOn = true;
  /** Open server nodes by flow: a client start links the one it covers. */
  private final Map<FlowKey, SpanIdentity> openServers = new HashMap<>();
  /** Open client nodes by key: a StreamParent links the one it names. */
  private final Map<StreamKey, SpanIdentity> openClients = new HashMap<>();
  /**
   * Open nodes in {@code decideBy} order (every deadline is some now + link_wait): a list through
   * the nodes ({@link SpanIdentity#openOlder}, {@link SpanIdentity#openNewer}), its oldest and
   * newest here; no entry object and no identity hash per node, as a {@code LinkedHashSet} took.
   */
  private SpanIdentity oldestOpen;
  private SpanIdentity newestOpen;
  /** Open server nodes that asked another gospan, by {@code decideBy} (extended by {@link #extendRemoteWait}). */
  private final TreeSet<SpanIdentity> remoteNodes =
      new TreeSet<>(Comparator.<SpanIdentity>comparingLong(n -> n.decideBy).thenComparingLong(n -> n.seq));
  private long remoteSeq;

  /**
   * @param ids trace ids of roots
   * @param linkWaitNs how long an open node waits for a link, ns
   * @param held where ended undecided spans wait
   * @param emitter receives ended spans as their trace ids become final
   */
  TraceDecisions(IdGenerator ids, long linkWaitNs, HeldSpans held, Emitter emitter) {
    this.ids = ids;
    this.linkWaitNs = linkWaitNs;
    this.held = held;
    this.emitter = emitter;
  }

  /** Decides sampling with {@code s} from now on (default: every trace). */
  void sampler(Sampler s) {
    this.sampler = s;
    this.alwaysOn = s == Sampler.alwaysOn();
  }

  /** Leaves {@code n} open until {@code now} + link_wait; a client node becomes findable by key. */
  void open(SpanIdentity n, long now) {
    n.decideBy = now + linkWaitNs;
    n.inOpenNodes = true;
    addOpen(n);
    if (n.key.side() == Side.CLIENT) {
      openClients.put(n.key, n);
    }
  }

  /** Appends {@code n} to the open nodes' list (as a set's add: nothing when it is there). */
  private void addOpen(SpanIdentity n) {
    if (n.inOpenList) {
      return;
    }
    n.inOpenList = true;
    n.openOlder = newestOpen;
    n.openNewer = null;
    if (newestOpen != null) {
      newestOpen.openNewer = n;
    } else {
      oldestOpen = n;
    }
    newestOpen = n;
  }

  /** Takes {@code n} out of the open nodes' list, if there. */
  private void removeOpen(SpanIdentity n) {
    if (!n.inOpenList) {
      return;
    }
    n.inOpenList = false;
    if (n.openOlder != null) {
      n.openOlder.openNewer = n.openNewer;
    } else {
      oldestOpen = n.openNewer;
    }
    if (n.openNewer != null) {
      n.openNewer.openOlder = n.openOlder;
    } else {
      newestOpen = n.openOlder;
    }
    n.openOlder = null;
    n.openNewer = null;
  }

  /** Leaves the server node {@code n} open, findable by {@code flow} (a reused flow: the older one stays open, unindexed). */
  void openServer(SpanIdentity n, FlowKey flow, long now) {
    open(n, now);
    n.flow = flow;
    openServers.put(flow, n);
  }

  /** Moves the open server node {@code n} to the remote waits, decided at {@code until} unless answered. */
  void waitRemote(SpanIdentity n, long until) {
    removeOpen(n);
    n.remoteWait = true;
    n.decideBy = until;
    n.seq = remoteSeq++;
    remoteNodes.add(n);
  }

  /** Extends the remote wait of {@code n} to {@code until}; false when it ends at or after that already. */
  boolean extendRemoteWait(SpanIdentity n, long until) {
    if (until <= n.decideBy) {
      return false;
    }
    remoteNodes.remove(n);
    n.decideBy = until;
    remoteNodes.add(n);
    return true;
  }

  /** The open client node of stream {@code key}, or {@code null}. */
  SpanIdentity openClient(StreamKey key) {
    return openClients.get(key);
  }

  /** The open server node indexed by {@code flow}, or {@code null}. */
  SpanIdentity openServer(FlowKey flow) {
    return openServers.isEmpty() ? null : openServers.get(flow);
  }

  /** Unindexes the open server node of {@code flow} (it is about to be linked). */
  void removeOpenServer(FlowKey flow) {
    openServers.remove(flow);
  }

  private void leaveOpen(SpanIdentity n) {
    if (n.inOpenNodes) {
      n.inOpenNodes = false;
      if (n.remoteWait) {
        remoteNodes.remove(n);
      } else {
        removeOpen(n);
      }
      if (n.key.side() == Side.CLIENT) {
        openClients.remove(n.key, n);
      } else if (n.flow != null) {
        openServers.remove(n.flow, n);
      }
    }
  }

  /**
   * Makes {@code child} (open) wait for {@code parent}'s trace id, or take it now when it is
   * decided. Returns false, changing nothing, when that would close a cycle.
   *
   * @param inProcess linked by a StreamParent (the parent context is local), else by the flow (remote)
   * @param linkNs the StreamParent's time (client stream created), for in-process links
   */
  boolean link(SpanIdentity child, SpanIdentity parent, boolean inProcess, long linkNs) {
    for (SpanIdentity p = parent; p != null && p.undecided(); p = p.parent) {
      if (p == child) {
        return false;
      }
    }
    leaveOpen(child);
    child.inProcess = inProcess;
    child.linkNs = linkNs;
    if (!parent.undecided()) {
      decide(child, parent.traceId, parent.asParent(!inProcess), parent);
      return true;
    }
    child.parent = parent;
    if (parent.children == null) {
      parent.children = new ArrayList<>(2);
    }
    parent.children.add(child);
    return true;
  }

  private static void unlink(SpanIdentity n) {
    if (n.parent != null) {
      if (n.parent.children != null) {
        n.parent.children.remove(n);
      }
      n.parent = null;
    }
  }

  /** Cuts an undecided node from its parent (if any) and decides it as a root, with what waits on it. */
  void detach(SpanIdentity n) {
    unlink(n);
    root(n);
  }

  /** Cuts an undecided node from its parent (if any) and makes it the child of {@code parent} (another process's span). */
  void replaceParent(SpanIdentity n, SpanContext parent) {
    unlink(n);
    leaveOpen(n);
    decide(n, parent);
  }

  /** Decides {@code n} as a root: a new trace id, no parent. */
  void root(SpanIdentity n) {
    decide(n, ids.generateTraceId(), SpanContext.getInvalid(), null);
  }

  /** Decides {@code n} as the child of {@code parent} (another process's span, or the application's traceparent). */
  void decide(SpanIdentity n, SpanContext parent) {
    decide(n, parent.getTraceId(), parent, null);
  }

  /** Decides {@code n}'s trace id, then those of every node waiting on it; emits the ended ones. */
  private void decide(SpanIdentity n, String traceId, SpanContext parentContext, SpanIdentity from) {
    settle(n, traceId, parentContext, from);
    if (n.children == null && n.heldEnd == null) { // most spans: decided at their start, nothing waits
      leaveOpen(n);
      n.parent = null;
      return;
    }
    ArrayDeque<SpanIdentity> work = new ArrayDeque<>();
    work.add(n);
    while (!work.isEmpty()) {
      SpanIdentity x = work.poll();
      leaveOpen(x);
      x.parent = null;
      EndedSpan end = held.release(x);
      if (end != null) {
        emitter.emit(end, x);
      }
      if (x.children != null) {
        for (SpanIdentity c : x.children) {
          if (c.parent == x && c.undecided()) {
            settle(c, x.traceId, x.asParent(!c.inProcess), x);
            work.add(c);
          }
        }
        x.children = null;
      }
    }
  }

  /**
   * Sets {@code n}'s final trace id and parent, and its sampling decision: the sampler's, given
   * the parent's context (remote across processes, local inside one; its sampled flag the parent's
   * decision). Name and attributes are not given: the offered samplers do not read them.
   */
  private void settle(SpanIdentity n, String traceId, SpanContext parentContext, SpanIdentity from) {
    n.traceId(traceId, from);
    n.parentContext = parentContext;
    if (alwaysOn) {
      n.sampled = true;
      return;
    }
    Context parent = parentContext.isValid() ? Context.root().with(Span.wrap(parentContext)) : Context.root();
    SpanKind kind = n.key == null ? SpanKind.INTERNAL : n.key.side() == Side.CLIENT ? SpanKind.CLIENT : SpanKind.SERVER;
    n.sampled = sampler.shouldSample(parent, traceId, "", kind, Attributes.empty(), List.of())
        .getDecision() == SamplingDecision.RECORD_AND_SAMPLE;
  }

  /**
   * An ended span: emitted now when its trace id is final, else held until it is. Returns false
   * when it could not be held (bound reached): it was emitted now as a root.
   */
  boolean ended(SpanIdentity node, EndedSpan end) {
    if (!node.undecided()) {
      emitter.emit(end, node);
      return true;
    }
    if (!held.hold(node, end)) {
      detach(node); // emitted now, as a root
      return false;
    }
    return true;
  }

  /** Makes roots of the open nodes whose wait ends at or before {@code now}. */
  void expire(long now) {
    while (oldestOpen != null) {
      SpanIdentity n = oldestOpen;
      if (n.decideBy > now) {
        break;
      }
      root(n);
    }
    while (!remoteNodes.isEmpty()) {
      SpanIdentity n = remoteNodes.first();
      if (n.decideBy > now) {
        break;
      }
      root(n);
    }
  }

  /** Makes roots of every open node, and of any held span left (none should be: every linked chain starts at an open node or a stub). */
  void decideAll() {
    List<SpanIdentity> open = new ArrayList<>();
    for (SpanIdentity n = oldestOpen; n != null; n = n.openNewer) {
      open.add(n);
    }
    for (SpanIdentity n : open) {
      root(n);
    }
    for (SpanIdentity n : List.copyOf(remoteNodes)) {
      root(n);
    }
    for (SpanIdentity n : held.nodes()) {
      if (held.contains(n)) {
        detach(n); // cannot happen (every linked chain starts at an open node or a stub): defensive
      }
    }
  }
}
