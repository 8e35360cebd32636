package io.gospan.receiver.span;

import io.gospan.receiver.event.SocketPair;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Client streams by their {@link FlowKey}, where a server span looks for the client span of its
 * call (here, or for another gospan asking): in flight, and for {@code streams.link_wait} after
 * they end (longer while other gospans may ask: the remote wait). An ended client is kept as
 * {@link RecentEnds} keeps it: its node and stream while its trace id is undecided, else only its
 * trace and span ids as numbers. At high rates thousands of ended spans are kept for {@code
 * link_wait}, and every object kept that long is copied and promoted by the collector
 * (AssemblerMemoryTest: a call remembered at both ends kept ~770 bytes of objects as nodes and
 * streams in maps). At most {@code streams.max_pending_links} ended clients, the oldest forgotten
 * first.
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class FlowIndex {
  /**
   * A client stream found by its flow: in flight ({@code node} and {@code stream} set, ids 0), or
   * ended: its node and stream while undecided, else its ids and sampling decision ({@code node}
   * and {@code stream} null).
   *
   * @param startNs from when it covers server starts, ns (event time)
   * @param endNs until when it covers server starts, ns; {@code Long.MAX_VALUE} in flight or when its end is unknown
   */
  record ClientRecord(
      SpanIdentity node, TracedStream stream, long startNs, long endNs, long retainUntil, long traceIdHigh,
      long traceIdLow, long spanId, boolean sampled) {
    ClientRecord(SpanIdentity node, TracedStream stream, long startNs, long endNs, long retainUntil) {
      this(node, stream, startNs, endNs, retainUntil, 0, 0, 0, false);
    }

    /** Its node, or a decided node made from its ids. */
    SpanIdentity linkTarget() {
      return node != null ? node : SpanIdentity.decided(traceIdHigh, traceIdLow, spanId, sampled);
    }

    /** Whether {@code serverStartNs} falls within it, give or take {@code toleranceNs} (another gospan's clock; 0 here). */
    boolean covers(long serverStartNs, long toleranceNs) {
      return serverStartNs >= startNs - toleranceNs && (endNs == Long.MAX_VALUE || serverStartNs <= endNs + toleranceNs);
    }
  }

  private final Map<FlowKey, ClientRecord> inFlight = new HashMap<>();
  /** Ended client streams by flow: key (stream id, 0, the client's endpoint). */
  private final RecentEnds ended;
  private final long linkWaitNs;
  private final boolean remembers;
  private long remoteWaitNs; // 0: no other gospan asks

  /**
   * @param linkWaitNs how long an ended client is kept, ns; zero: not kept
   * @param maxEnded at most this many ended clients kept; zero: none
   */
  FlowIndex(long linkWaitNs, int maxEnded) {
    this.linkWaitNs = linkWaitNs;
    this.remembers = linkWaitNs > 0 && maxEnded > 0;
    this.ended = new RecentEnds(Math.max(1, maxEnded));
  }

  /**
   * Other gospans may ask about client spans (ns they wait for an answer, link_wait included), or
   * none does ({@code 0}): an ended client is then kept that long at least, and one still undecided
   * when its time is up is kept another remote wait (its chain waits for an answer).
   */
  void remoteWait(long remoteWaitNs) {
    this.remoteWaitNs = remoteWaitNs;
  }

  /** Indexes a started client stream, covering server starts from {@code coverFromNs} on. */
  void started(TracedStream s, long coverFromNs) {
    inFlight.put(s.flow, new ClientRecord(s.node, s, coverFromNs, Long.MAX_VALUE, Long.MAX_VALUE));
  }

  /** The in-flight client of {@code flow}, or {@code null}. */
  ClientRecord inFlight(FlowKey flow) {
    return inFlight.get(flow);
  }

  /**
   * Keeps an ended client stream findable until {@code now} plus link_wait (or the remote wait,
   * when longer: an open client span is decided link_wait after its start at the latest, and must
   * be findable then), or forgets it when nothing is kept.
   *
   * @param endNs until when it covers server starts (event time), {@code Long.MAX_VALUE} when its end is unknown
   */
  void ended(TracedStream s, long endNs, long now) {
    ClientRecord rec = inFlight.remove(s.flow);
    if (rec == null || !remembers) {
      return;
    }
    remember(s.flow, rec, endNs, now + Math.max(linkWaitNs, remoteWaitNs));
  }

  /**
   * Remembers the client stream {@code rec} of {@code flow}, ended at {@code endNs}, until {@code
   * keepUntil}: its node and stream while its trace id is undecided, else its ids as numbers.
   */
  private void remember(FlowKey flow, ClientRecord rec, long endNs, long keepUntil) {
    SpanIdentity n = rec.node();
    if (n.undecided()) {
      ended.put(flow.streamId(), 0, flow.clientEnd(), rec.startNs(), endNs, keepUntil, n, rec.stream(), 0, 0, 0, false);
    } else {
      ended.put(flow.streamId(), 0, flow.clientEnd(), rec.startNs(), endNs, keepUntil, null, null,
          n.traceIdHalf(0), n.traceIdHalf(1), n.spanIdBits(), n.sampled);
    }
  }

  /** The client of {@code flow} whose span covers {@code serverStartNs} (in flight first, then ended), or {@code null}. */
  ClientRecord covering(FlowKey flow, long serverStartNs) {
    return covering(flow, serverStartNs, 0);
  }

  /** As {@link #covering(FlowKey, long)}, within {@code toleranceNs} either side (another gospan's clock). */
  ClientRecord covering(FlowKey flow, long serverStartNs, long toleranceNs) {
    ClientRecord c = inFlight.get(flow);
    if (c != null && c.covers(serverStartNs, toleranceNs)) {
      return c;
    }
    c = endedClient(flow);
    return c != null && c.covers(serverStartNs, toleranceNs) ? c : null;
  }

  /** The remembered ended client stream of {@code flow}, or null. */
  private ClientRecord endedClient(FlowKey flow) {
    int slot = ended.find(flow.streamId(), 0, flow.clientEnd());
    if (slot < 0) {
      return null;
    }
    return new ClientRecord((SpanIdentity) ended.node(slot), (TracedStream) ended.stream(slot), ended.startNs(slot),
        ended.endNs(slot), ended.retainUntil(slot), ended.traceIdHigh(slot), ended.traceIdLow(slot), ended.spanId(slot),
        ended.sampled(slot));
  }

  /**
   * Forgets ended client spans kept past their time; one still waiting for its trace id is kept
   * another remote wait when other gospans may ask about it (its chain waits for an answer).
   */
  void expire(long now) {
    List<Map.Entry<FlowKey, ClientRecord>> keep = null;
    for (int slot; (slot = ended.oldest()) >= 0 && ended.retainUntil(slot) <= now; ) {
      if (remoteWaitNs > 0 && ended.node(slot) instanceof SpanIdentity n && n.undecided()) {
        if (keep == null) {
          keep = new ArrayList<>();
        }
        FlowKey flow = new FlowKey((SocketPair.Endpoint) ended.keyRef(slot), (int) ended.keyA(slot));
        keep.add(Map.entry(flow, new ClientRecord(n, (TracedStream) ended.stream(slot), ended.startNs(slot),
            ended.endNs(slot), now + remoteWaitNs)));
      }
      ended.removeOldest();
    }
    if (keep != null) {
      for (Map.Entry<FlowKey, ClientRecord> e : keep) {
        remember(e.getKey(), e.getValue(), e.getValue().endNs(), e.getValue().retainUntil());
      }
    }
  }

  /** Forgets the ended clients (in-flight ones leave as they end). */
  void clearEnded() {
    ended.clear();
  }

}
