package io.gospan.receiver.span;

/**
 * Ended server streams by {@link StreamKey}, for the StreamParents that name them after their end
 * (a handler's client stream may be created late, its event read late): each kept {@code
 * streams.link_wait} after its end, its node while its trace id is undecided, else only its ids
 * as numbers and its sampling decision ({@link RecentEnds}; see {@link FlowIndex} for why). At
 * most {@code streams.max_pending_links}, the oldest forgotten first.
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class EndedServers {
  /** An ended server stream: its node while undecided, else only its ids and sampling decision. */
  record ServerRecord(
      SpanIdentity node, long startNs, long endNs, long traceIdHigh, long traceIdLow, long spanId, boolean sampled) {
    /** Its node, or a decided node made from its ids. */
    SpanIdentity linkTarget() {
      return node != null ? node : SpanIdentity.decided(traceIdHigh, traceIdLow, spanId, sampled);
    }

    /** Whether the server stream was in flight at {@code ns} (event time). */
    boolean covers(long ns) {
      return startNs <= ns && ns <= endNs;
    }
  }

  /** Key (connection, pid and stream id, none). */
  private final RecentEnds ended;
  private final long linkWaitNs;
  private final boolean remembers;

  /**
   * @param linkWaitNs how long an ended server is kept, ns; zero: not kept
   * @param max at most this many kept; zero: none
   */
  EndedServers(long linkWaitNs, int max) {
    this.linkWaitNs = linkWaitNs;
    this.remembers = linkWaitNs > 0 && max > 0;
    this.ended = new RecentEnds(Math.max(1, max));
  }

  /**
   * Keeps the server stream {@code s}, ended at {@code endNs} ({@code Long.MAX_VALUE} when its end is
   * unknown), until {@code now} plus link_wait.
   */
  void ended(TracedStream s, long endNs, long now) {
    if (!remembers) {
      return;
    }
    SpanIdentity n = s.node;
    long keyB = s.key.pidAndStreamId();
    if (n.undecided()) {
      ended.put(s.key.connection(), keyB, null, s.startNs, endNs, now + linkWaitNs, n, null, 0, 0, 0, false);
    } else {
      ended.put(s.key.connection(), keyB, null, s.startNs, endNs, now + linkWaitNs, null, null,
          n.traceIdHalf(0), n.traceIdHalf(1), n.spanIdBits(), n.sampled);
    }
  }

  /** The remembered ended server stream {@code key}, or null. */
  ServerRecord find(StreamKey key) {
    int slot = ended.find(key.connection(), key.pidAndStreamId(), null);
    if (slot < 0) {
      return null;
    }
    return new ServerRecord((SpanIdentity) ended.node(slot), ended.startNs(slot), ended.endNs(slot),
        ended.traceIdHigh(slot), ended.traceIdLow(slot), ended.spanId(slot), ended.sampled(slot));
  }

  /** Forgets those kept until {@code now} or earlier. */
  void expire(long now) {
    for (int slot; (slot = ended.oldest()) >= 0 && ended.retainUntil(slot) <= now; ) {
      ended.removeOldest();
    }
  }

  void clear() {
    ended.clear();
  }
}
