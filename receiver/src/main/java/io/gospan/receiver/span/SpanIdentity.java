package io.gospan.receiver.span;

import io.opentelemetry.api.internal.ImmutableSpanContext;
import io.opentelemetry.api.internal.OtelEncodingUtils;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceId;
import io.opentelemetry.api.trace.TraceState;
import java.util.List;

/**
 * One span's ids and where its trace id comes from: a node of {@link TraceDecisions}' graph. It is
 * <em>decided</em> ({@code traceId} set, final), <em>linked</em> ({@code parent} set: it takes its
 * parent's trace id when that is decided), <em>open</em> (nothing links it yet: a root at {@code
 * decideBy} unless something links it first) or a <em>stub</em> (a server stream named by a
 * StreamParent before its start: spans link to it, its stream adopts it when it starts; {@link
 * ParentLinks}).
 *
 * <p>Plain fields, no checks: only the parts of {@link SpanAssembler}, under its lock, touch it.
 */
final class SpanIdentity {
  final StreamKey key; // null for one made from an ended span's ids
  final String spanId;
  long startNs; // the stream's start (event time); Long.MIN_VALUE for a stub
  FlowKey flow; // servers indexed by TraceDecisions' open servers while open
  String traceId; // null until decided; set by traceId(id, from) only, with its halves
  long traceIdHigh; // traceId's two halves as numbers, set with it (traceId(...))
  long traceIdLow;
  SpanContext parentContext = SpanContext.getInvalid(); // set when decided
  boolean sampled = true; // whether its trace is exported: set when decided (TraceDecisions' sampler)
  SpanIdentity parent; // linked: waits for this node's trace id
  boolean inProcess; // linked by a StreamParent (else by the flow)
  long linkNs; // the StreamParent's time (client stream created), in-process links
  List<SpanIdentity> children; // linked to this node
  EndedSpan heldEnd; // ended, waiting for the trace id (HeldSpans)
  long decideBy; // open nodes and stubs: processing time they are decided at
  boolean stub;
  boolean inOpenNodes;
  boolean inOpenList; // in TraceDecisions' list of open nodes, between these two
  SpanIdentity openOlder;
  SpanIdentity openNewer;
  boolean remoteWait; // open, asked another gospan: waits in TraceDecisions' remote waits
  long seq; // the remote waits' tie-break

  SpanIdentity(StreamKey key, String spanId, long startNs) {
    this.key = key;
    this.spanId = spanId;
    this.startNs = startNs;
  }

  /**
   * A decided node made again from an ended span's ids (see {@link FlowIndex.ClientRecord}), to link
   * to or answer about; never indexed anywhere (it has no key).
   */
  static SpanIdentity decided(long traceIdHigh, long traceIdLow, long spanId, boolean sampled) {
    SpanIdentity n = new SpanIdentity(null, SpanId.fromLong(spanId), Long.MIN_VALUE);
    n.traceId = TraceId.fromLongs(traceIdHigh, traceIdLow);
    n.traceIdHigh = traceIdHigh;
    n.traceIdLow = traceIdLow;
    n.sampled = sampled;
    return n;
  }

  /**
   * Sets its final trace id (16 bytes as 32 lower-case hex digits, W3C trace context) and its halves
   * as numbers: taken from {@code from} when that node holds the same id (a child of a decided node),
   * else decoded (the API's table-driven decoding: {@code Long.parseUnsignedLong} took ~0.25 µs per
   * span in a profile; decoding the id for each of a trace's spans, where it is remembered and where
   * it is admitted to export, took ~0.27 µs a span of the ring buffer thread's CPU at 20,000 spans/s).
   */
  void traceId(String id, SpanIdentity from) {
    traceId = id;
    if (from != null && from.traceId == id) {
      traceIdHigh = from.traceIdHigh;
      traceIdLow = from.traceIdLow;
    } else if (id.length() == 32) { // always: ids are valid when made (see context)
      traceIdHigh = OtelEncodingUtils.longFromBase16String(id, 0);
      traceIdLow = OtelEncodingUtils.longFromBase16String(id, 16);
    } else {
      traceIdHigh = 0;
      traceIdLow = 0;
    }
  }

  /** The high (0) or low (1) half of its decided trace id. */
  long traceIdHalf(int half) {
    return half == 0 ? traceIdHigh : traceIdLow;
  }

  /** Its context as the parent of a span: its trace and span ids, its sampling decision as the sampled flag. */
  SpanContext asParent(boolean remote) {
    return context(sampled ? TraceFlags.getSampled() : TraceFlags.getDefault(), TraceState.getDefault(), remote);
  }

  /**
   * Its context (decided nodes only), without checking its ids again: they are valid when made (the
   * span id from the {@code IdGenerator}, or an ended span's; the trace id from the {@code
   * IdGenerator}, a decided parent node, or a valid parent context: {@link TraceHeaders#parent},
   * {@code SpanAssembler.remoteParent}). {@code SpanContext.create} parses both hex strings again on
   * every call (~0.1 µs a span in the ring buffer thread's profile).
   */
  SpanContext context(TraceFlags flags, TraceState state, boolean remote) {
    return ImmutableSpanContext.create(traceId, spanId, flags, state, remote, true);
  }

  /** Its span id (8 bytes as 16 hex digits). */
  long spanIdBits() {
    return OtelEncodingUtils.longFromBase16String(spanId, 0);
  }

  boolean undecided() {
    return traceId == null;
  }

  boolean open() {
    return traceId == null && parent == null && !stub;
  }
}
