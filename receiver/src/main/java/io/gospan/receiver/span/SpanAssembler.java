package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.HeaderPolicy;
import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import io.gospan.receiver.event.StreamParent;
import io.grpc.Status;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Turns {@link HeaderEvent}s into finished spans, and {@link StreamParent}s into their parents.
 *
 * <h2>Streams</h2>
 *
 * Every stream is keyed by (pid, connection, stream id, side): stream ids restart at 1 on every
 * connection. The connection is {@link HeaderEvent#connectionId()}, or the fd when that is unknown.
 * In the headers probe set a client span starts at the client's {@code loopyWriter.writeHeader}
 * (request headers) and ends at {@code http2Client.operateHeaders} with END_STREAM (trailers or
 * trailers-only); a server span starts at {@code http2Server.operateHeaders} and ends at the
 * server's {@code writeHeader} with endStream. Headers in between (response headers) add
 * attributes. In the streams probe set a client span starts at {@code NewStream}'s return (only
 * {@code :path} of its request headers) and ends at {@code closeStream}; a server span starts at
 * {@code operateHeaders} and ends at {@code writeStatus}; both ends carry grpc-go's status (a raw
 * message, {@link ProbeKind#rawMessage()}). Events of both sets may come from different binaries
 * of one assembler. A stream whose end is not seen
 * within {@code streams.timeout} of its start ends at the last event seen for it, marked {@code
 * gospan.incomplete=true} with a reason. At most {@code streams.max_in_flight} streams are tracked;
 * starts beyond that are counted ({@code gospan.streams.overflow}) and not traced.
 *
 * <h2>Parents</h2>
 *
 * <p>A span's parent, first that applies:
 *
 * <ol>
 *   <li>a valid W3C {@code traceparent} in its own request headers (one the application sent: it
 *       wins over everything below);
 *   <li>a server span: the client span gospan also saw for its call (the same client end as both
 *       ends see it: over TCP its socket address, IP and port; over a unix domain socket its inode,
 *       the server's peer inode; and the same HTTP/2 stream id, server start within the client
 *       span), across processes; the server's address is not compared, so a call through a DNAT (a
 *       Kubernetes ClusterIP) links too. When no such client span is found here and the client's
 *       TCP address is not this gospan's own, the gospan at that address is asked ({@link
 *       RemoteLinks}, given by {@link #remoteLinks}): its answer ({@link #remoteParent}) makes the
 *       server span the child of the client span it traced, in that span's trace. A client span
 *       started at NewStream covers server starts up to {@link #NEW_STREAM_SLACK_NS} before its own
 *       start, and takes its server's {@code :authority}, allowed request metadata and {@code
 *       traceparent} (rule 1 for it, when its trace id is not decided yet);
 *   <li>a client span: the server span of its own process whose call it was made from, as a {@link
 *       StreamParent} names it (in-process propagation, docs/propagation.md). The server stream
 *       must have started before the client stream was created and not ended before ({@code
 *       StreamParent.monotonicNs()}); otherwise the parent is rejected ({@code stale}) and the
 *       client span is a root;
 *   <li>none: a root span with a trace id of its own.
 * </ol>
 *
 * A child takes its parent's span id and its parent's <em>final</em> trace id, so a whole chain
 * (front client → relay server → the relay's client calls → their servers) is one trace. A span's
 * trace id is final when its parent is decided: at once with a {@code traceparent} or a parent
 * whose trace id is final; when no parent can come (a client span of a process gospan has not seen
 * serving: no server stream and no StreamParent of it so far; a handler's calls come after its
 * server stream's start in the ring buffer's order, so this spares plain clients the wait and
 * loses no parent); or, for a span that may still get
 * its parent, when {@code streams.link_wait} has passed since its start without one (it becomes a
 * root). A span that ends before its trace id is final is held, and emitted the moment it is final:
 * nothing is held longer than {@code link_wait} past the moment its parent's trace id is final or
 * its parent is known missing. Events may arrive in any order:
 *
 * <ul>
 *   <li>each client stream with a known socket is indexed by flow (client end + stream id)
 *       while in flight, and for {@code link_wait} after it ends; a server span that starts finds its
 *       client there, else waits (open) for a client start covering it;
 *   <li>each ended server stream is remembered by key for {@code link_wait}, for StreamParents that
 *       come after its end;
 *   <li>a StreamParent whose client stream has not started waits for that start for {@code
 *       link_wait} (then counted {@code no_client}); one whose server stream has not started makes
 *       a placeholder that stream adopts when it starts within {@code link_wait} (else the client
 *       span becomes a root, counted {@code not_found});
 *   <li>end events that arrive before their stream's start are held for {@code link_wait}.
 * </ul>
 *
 * A server span that asked another gospan waits {@code link_wait} plus {@link
 * RemoteLinks#extraWaitNanos()} for the answer; a client span another gospan asks about ({@link
 * #clientSpan}) is found while in flight and for {@code link_wait} after it ends, as for a server
 * span here.
 *
 * <p>A span that ends incomplete (timeout, connection closed, process exit, shutdown) with nothing
 * linking it yet does not wait: it is a root at once. {@code link_wait} zero disables linking
 * (StreamParents are ignored).
 *
 * <h2>Sampling</h2>
 *
 * Each span is kept or dropped with its trace ({@link #sampler}, the OpenTelemetry SDK's samplers):
 * the decision is made when its trace id is final, by the sampler given that trace id and the
 * parent's context with the parent's decision as its sampled flag: the application's {@code
 * traceparent} (its own flag), a span of the same process, a client span of another process here,
 * or another gospan's client span (its answer carries the decision). So a trace is kept or dropped
 * whole, across processes and gospans, and no span is handed on before its decision is final. A
 * span not sampled still links (it is the parent of others, and is answered about to other
 * gospans); it reaches the {@link SpanSink} without its {@code SpanData}, for RED metrics only.
 *
 * <h2>Memory</h2>
 *
 * At most {@code streams.max_in_flight} streams in flight, and at most {@code
 * streams.max_pending_links} of each of: ended client streams indexed by flow, ended server streams
 * indexed by key (the oldest forgotten first), spans held for their trace id, early end events,
 * StreamParents waiting for their client stream, placeholders for server streams not started yet,
 * and processes seen serving (least recently seen forgotten first). So memory is bounded by {@code
 * max_in_flight + 7 × max_pending_links} entries (the indexes of undecided spans only point into
 * those). A span that would be held beyond the bound is emitted at once as a root, and a
 * StreamParent that would wait beyond it is dropped: both counted ({@code gospan.links.overflow}).
 *
 * <h2>Metadata</h2>
 *
 * A header field becomes a {@code rpc.request.metadata.<name>} / {@code
 * rpc.response.metadata.<name>} attribute (names per {@link RpcSemconv}) only when {@link
 * Settings#allowHeaders} lists it and {@link HeaderPolicy} does not call it a credential: an event
 * that carries a credential anyway (it should not: the probes never capture one) exports nothing of
 * it.
 *
 * <h2>Self-telemetry</h2>
 *
 * Counted on the {@link Meter} given to the constructor: the instruments of {@link
 * AssemblyMetrics}.
 *
 * <h2>Parts</h2>
 *
 * This class is the locked façade: it validates events, routes each to the parts below and wires
 * the parts together (a stream's start, update and end; the remote-link API). It is near 770
 * lines because this comment (the rules every part follows) and the public methods' documentation
 * are half of it; its code is that wiring, no method over 60 lines. Each part has one job, is
 * package-private and is confined to this object's lock:
 *
 * <ul>
 *   <li>{@link StreamTable}: the streams in flight ({@link TracedStream}, by {@link StreamKey}), their timeouts;
 *   <li>{@link EarlyEnds}: end events that came before their stream's start;
 *   <li>{@link FlowIndex}: client streams by {@link FlowKey}, in flight and recently ended, where a server
 *       span finds its client span;
 *   <li>{@link EndedServers}: recently ended server streams by key, for StreamParents read late;
 *   <li>{@link ParentLinks}: StreamParents (in-process parents), stubs, processes seen serving;
 *   <li>{@link TraceDecisions}: the graph of {@link SpanIdentity} nodes that decides every trace id,
 *       open and remote waits;
 *   <li>{@link HeldSpans}: ended spans waiting for their trace id;
 *   <li>{@link SpanEmitter} with {@link SpanAttributes}: an ended span with a final trace id to the {@link SpanSink};
 *   <li>{@link AssemblyCounters}: the self-telemetry above.
 * </ul>
 *
 * <p>Thread-safe: every method takes one lock. The {@link SpanSink} is called under it and must not
 * block. {@link #expire()} must be called periodically ({@link ExpiryTimer} does, every 100 ms at high event rates).
 */
public final class SpanAssembler {

  /**
   * Assembly settings (the configuration's {@code streams.*}, {@code semconv.rpc}, {@code
   * headers.allow}).
   *
   * @param timeout a stream whose end is not seen this long after its start ends incomplete
   * @param maxInFlight streams tracked at once
   * @param linkWait how long a span waits for its parent (a server span for its client span, a
   *     client span in a serving process for its StreamParent, counted from the span's start; a
   *     StreamParent for its client or server stream); zero disables linking
   * @param maxPendingLinks bound of each kind of state kept for linking (see "Memory")
   * @param semconv which RPC conventions spans carry
   * @param allowHeaders header names exported as metadata (credentials never are)
   */
  public record Settings(
      Duration timeout,
      int maxInFlight,
      Duration linkWait,
      int maxPendingLinks,
      RpcSemconv.Mode semconv,
      Set<String> allowHeaders) {
    public Settings {
      Objects.requireNonNull(timeout);
      Objects.requireNonNull(linkWait);
      Objects.requireNonNull(semconv);
      allowHeaders = Set.copyOf(allowHeaders);
    }
  }

  /**
   * How much earlier than a client stream's NewStream start its server's start may be and still be
   * its: NewStream queues the HEADERS frame before it returns, so the server may receive it first
   * (microseconds; more when the caller is descheduled in between). A flow (4-tuple and stream id)
   * is not reused within far longer.
   */
  static final long NEW_STREAM_SLACK_NS = 100_000_000L;

  private final MonotonicClock clock;
  private final ProcessMetadata metadata;
  private final IdGenerator ids;
  private final long timeoutNs;
  private final long linkWaitNs;

  // the parts, each confined to this object's lock
  private final AssemblyCounters counters;
  private final SpanAttributes attributes;
  private final StreamTable streams;
  private final EarlyEnds earlyEnds;
  private final FlowIndex flows;
  private final EndedServers endedServers;
  private final HeldSpans held;
  private final TraceDecisions decisions;
  private final ParentLinks parentLinks;

  private RemoteLinks remote; // null: no other gospan is asked
  private long remoteWaitNs;
  private long lastEventNs; // the latest header event's time read so far

  /**
   * @param meter where the {@link AssemblyMetrics} instruments are created (the in-flight gauge is
   *     observed through a callback on it)
   * @param sink receives every finished span, under the assembler's lock
   * @param ids span and trace ids of new spans
   */
  public SpanAssembler(
      Settings settings,
      MonotonicClock clock,
      ProcessMetadata metadata,
      Meter meter,
      SpanSink sink,
      IdGenerator ids) {
    this.clock = clock;
    this.metadata = metadata;
    this.ids = ids;
    this.timeoutNs = settings.timeout().toNanos();
    this.linkWaitNs = settings.linkWait().toNanos();
    int maxPending = settings.maxPendingLinks();
    this.counters = new AssemblyCounters(meter, this);
    this.attributes = new SpanAttributes(RpcSemconv.of(settings.semconv()), settings.allowHeaders());
    this.streams = new StreamTable(settings.maxInFlight());
    this.earlyEnds = new EarlyEnds(maxPending, linkWaitNs);
    this.flows = new FlowIndex(linkWaitNs, maxPending);
    this.endedServers = new EndedServers(linkWaitNs, maxPending);
    this.held = new HeldSpans(maxPending);
    this.decisions = new TraceDecisions(ids, linkWaitNs, held, new SpanEmitter(clock, metadata, attributes, sink, counters));
    this.parentLinks = new ParentLinks(streams, endedServers, decisions, ids, counters, linkWaitNs, maxPending);
  }

  // ------------------------------------------------------------------------------------ input

  /** Feeds one event of either kind. Never blocks on export. */
  public void accept(ProbeEvent e) {
    if (e instanceof HeaderEvent h) {
      accept(h);
    } else {
      accept((StreamParent) e);
    }
  }

  /**
   * Feeds the parent of a client stream (in-process propagation): the client span becomes the
   * named server span's child and takes its trace id (see "Parents"). Counted by result on {@link
   * AssemblyMetrics#LINKS_IN_PROCESS}; malformed ones on {@link AssemblyMetrics#EVENTS_MALFORMED}.
   * Ignored when {@code streams.link_wait} is zero (linking disabled).
   */
  public synchronized void accept(StreamParent p) {
    acceptParent(p, clock.monotonicNow());
  }

  private void acceptParent(StreamParent p, long now) {
    String problem = validate(p);
    if (problem != null) {
      counters.malformed(problem);
      return;
    }
    if (linkWaitNs == 0) {
      return;
    }
    parentLinks.accept(p, now);
  }

  /** Feeds one header event. Never blocks on export. */
  public synchronized void accept(HeaderEvent e) {
    acceptHeader(e, clock.monotonicNow());
  }

  /**
   * Feeds {@code events[from]} to {@code events[to - 1]} (either kind, in that order) under one
   * entry of the lock and one read of the clock: what {@link #accept(ProbeEvent)} does for each,
   * with each event's "now" (the time its timeouts, link waits and remembered ends count from) the
   * later of that read and the event's own {@code monotonicNs}, so no event is taken to have
   * happened after "now", whichever of the two comes first (the clock is {@code bpf_ktime_get_ns}'s,
   * {@link MonotonicClock}). The ring buffer's reader calls this with the records of one poll: up to
   * a few hundred events read in well under a millisecond, so "now" is at most that much behind a
   * read per event, and expiry runs every 100 ms at most. An event whose handling throws does not
   * keep the others from being fed (each is its own, as {@link #accept(ProbeEvent)} calls would
   * be): the first exception is thrown after the last event, the later ones suppressed in it.
   * Never blocks on export.
   */
  public void acceptAll(ProbeEvent[] events, int from, int to) {
    RuntimeException failure = null;
    synchronized (this) {
      long read = clock.monotonicNow();
      for (int i = from; i < to; i++) {
        ProbeEvent e = events[i];
        try {
          if (e instanceof HeaderEvent h) {
            acceptHeader(h, Math.max(read, h.monotonicNs()));
          } else {
            StreamParent p = (StreamParent) e;
            acceptParent(p, p == null ? read : Math.max(read, p.monotonicNs()));
          }
        } catch (RuntimeException x) {
          failure = io.gospan.receiver.event.ProbeEventSink.Failures.add(failure, x);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void acceptHeader(HeaderEvent e, long now) {
    String problem = validate(e);
    if (problem != null) {
      counters.malformed(problem);
      return;
    }
    counters.eventRead(e.probe());
    if (e.monotonicNs() > lastEventNs) {
      lastEventNs = e.monotonicNs();
    }
    if (e.probe() == ProbeKind.HTTP2_SERVER_PROCESS_HEADERS && !e.grpcContentType()) {
      return; // another HTTP/2 request of a server that also serves gRPC through ServeHTTP
    }
    if (isStart(e)) {
      start(StreamKey.of(e), e, now);
    } else {
      TracedStream s = streams.get(e.pid(), e.connectionId(), e.streamId(), e.side()); // no key object per event
      if (s == null) {
        if (isFinal(e) && linkWaitNs > 0) {
          if (earlyEnds.hold(StreamKey.of(e), e, now)) {
            counters.unmatched(1);
          }
        } else {
          counters.unmatched(1);
        }
        return;
      }
      update(s, e, now);
    }
    counters.inFlight(streams.size());
  }

  /**
   * Lets span assembly ask other gospans for the client spans of server spans it cannot link
   * itself (see "Parents"); {@code null} = ask none (the default). Set before events flow.
   */
  public synchronized void remoteLinks(RemoteLinks links) {
    this.remote = links;
    this.remoteWaitNs = links == null ? 0 : linkWaitNs + Math.max(0, links.extraWaitNanos());
    flows.remoteWait(remoteWaitNs);
  }

  /**
   * Decides which traces are exported with {@code sampler} (the OpenTelemetry SDK's, from {@code
   * sampling.*}); default {@link Sampler#alwaysOn()}. Each span's decision is made once its trace id
   * is final, given its parent's decision (see "Sampling"). Set before events flow.
   */
  public synchronized void sampler(Sampler sampler) {
    decisions.sampler(Objects.requireNonNull(sampler, "sampler"));
  }

  /**
   * Another gospan's answer to {@link RemoteLinks#lookup}: the server span of {@code flow} that
   * started at {@code serverStartEpochNanos} (within 1 ms: the epoch conversion may have been
   * recalibrated in between) becomes the child of {@code parent}, in its trace, and so does every
   * span waiting on it (in-process propagation).
   *
   * @param parent the client span's ids, valid, and its sampling decision as its sampled flag (the
   *     {@code parentbased_*} samplers follow it)
   * @return whether a server span took it; {@code false} when none waits for it any more (linked
   *     here meanwhile, released as a root after its wait, never asked)
   * @throws IllegalArgumentException when {@code parent} is not valid
   */
  public synchronized boolean remoteParent(ClientFlow flow, long serverStartEpochNanos, SpanContext parent) {
    if (!parent.isValid()) {
      throw new IllegalArgumentException("invalid parent " + parent);
    }
    SpanIdentity n = openServer(flow, serverStartEpochNanos, false);
    if (n == null) {
      return false;
    }
    decisions.decide(n, SpanContext.createFromRemoteParent(
        parent.getTraceId(), parent.getSpanId(), parent.getTraceFlags(), TraceState.getDefault()));
    return true;
  }

  /**
   * Another gospan's interim answer to {@link RemoteLinks#lookup}: it traced the client span of
   * {@code flow}, whose trace id will be final by {@code untilEpochNanos} at the latest (it waits
   * for its own parent). The server span that asked (still waiting) waits until then at least, so
   * that a chain whose first link waits does not lose its later links; at most four times its
   * usual remote wait from now.
   *
   * @return whether a waiting server span's wait was extended
   */
  public synchronized boolean remoteWaitUntil(ClientFlow flow, long serverStartEpochNanos, long untilEpochNanos) {
    SpanIdentity n = openServer(flow, serverStartEpochNanos, true);
    if (n == null) {
      return false;
    }
    long until = Math.min(untilEpochNanos - clock.offsetNanos(), clock.monotonicNow() + 4 * remoteWaitNs);
    return decisions.extendRemoteWait(n, until);
  }

  /**
   * Another gospan's definite answer to {@link RemoteLinks#lookup}: it traced no client span of
   * {@code flow} covering {@code serverStartEpochNanos}. The server span that asked (still open)
   * becomes a root now instead of at the end of its wait.
   *
   * @return whether a waiting server span was released
   */
  public synchronized boolean remoteNotFound(ClientFlow flow, long serverStartEpochNanos) {
    SpanIdentity n = openServer(flow, serverStartEpochNanos, true);
    if (n == null) {
      return false;
    }
    decisions.root(n);
    return true;
  }

  /** The open server node of {@code flow} started at {@code startEpochNanos} (within 1 ms), waiting on another gospan when {@code asked}; else {@code null}. */
  private SpanIdentity openServer(ClientFlow flow, long startEpochNanos, boolean asked) {
    SpanIdentity n = decisions.openServer(FlowKey.of(flow));
    if (n == null || !n.open() || (asked && !n.remoteWait)
        || Math.abs(clock.toEpochNanos(n.startNs) - startEpochNanos) > 1_000_000) {
      return null;
    }
    return n;
  }

  /**
   * What this gospan knows of its client span of {@code flow} covering {@code
   * serverStartEpochNanos} (another gospan asks: its server span started then): the span's ids
   * and sampling decision (its sampled flag) once its trace id is final, {@link ClientSpanAnswer.State#PENDING} while it waits for its own
   * parent, {@link ClientSpanAnswer.State#UNKNOWN} when no client span of that flow covers that
   * time (not traced, not seen yet, or forgotten {@code link_wait} after it ended).
   *
   * @param toleranceNanos how far outside the client span the other gospan's time may fall (its
   *     clock's skew against this one's), ns
   */
  public synchronized ClientSpanAnswer clientSpan(ClientFlow flow, long serverStartEpochNanos, long toleranceNanos) {
    ClientSpanAnswer unknown = ClientSpanAnswer.unknown(lastEventNs == 0 ? 0 : clock.toEpochNanos(lastEventNs));
    if (linkWaitNs == 0) {
      return unknown;
    }
    FlowIndex.ClientRecord c = flows.covering(FlowKey.of(flow), serverStartEpochNanos - clock.offsetNanos(), toleranceNanos);
    if (c == null) {
      return unknown;
    }
    SpanIdentity n = c.linkTarget();
    if (n.undecided()) {
      SpanIdentity root = n;
      for (int i = 0; root.parent != null && i < 1000; i++) {
        root = root.parent; // the open node, remote node or stub the chain waits on
      }
      return ClientSpanAnswer.pending(clock.toEpochNanos(root.decideBy));
    }
    return new ClientSpanAnswer(ClientSpanAnswer.State.FOUND, n.asParent(false), 0, 0);
  }

  /** Ends every stream of a connection that closed (their ends will not come). */
  public synchronized void connectionClosed(int pid, long connectionId) {
    endAll(s -> s.key.pid() == pid && s.key.connection() == connectionId, "connection_closed");
  }

  /** Ends every stream of a process that exited. */
  public synchronized void processExited(int pid) {
    endAll(s -> s.key.pid() == pid, "process_exited");
    parentLinks.processExited(pid);
  }

  /** Ends timed-out streams, decides the trace ids whose link wait is over, emits what they held. */
  public void expire() {
    expire(clock.monotonicNow());
  }

  synchronized void expire(long now) {
    flows.expire(now); // first: a client span decided below stays findable a while for other gospans
    for (TracedStream s; (s = streams.removeTimedOut(now)) != null; ) {
      endIncomplete(s, "timeout", now);
    }
    parentLinks.expireStubs(now);
    decisions.expire(now);
    parentLinks.expirePending(now);
    endedServers.expire(now);
    int dropped = earlyEnds.expire(now);
    if (dropped > 0) {
      counters.unmatched(dropped);
    }
    counters.inFlight(streams.size());
  }

  /**
   * Ends everything now: in-flight streams as incomplete ({@code shutdown}); spans waiting for a
   * parent's trace id get it, or become roots when nothing linked them.
   */
  public synchronized void flush() {
    long now = clock.monotonicNow();
    endAll(s -> true, "shutdown");
    parentLinks.flushStubs();
    decisions.decideAll();
    parentLinks.flushPending();
    counters.unmatched(earlyEnds.clear());
    flows.clearEnded();
    endedServers.clear();
    counters.inFlight(0);
    expire(now);
  }

  public synchronized int inFlight() {
    return streams.size();
  }

  /** Ended server spans waiting for their trace id. */
  public synchronized int heldServerSpans() {
    return held.servers();
  }

  /** Ended client spans waiting for their trace id. */
  public synchronized int heldClientSpans() {
    return held.clients();
  }

  // ------------------------------------------------------------------------------------ events

  private static String validate(HeaderEvent e) {
    if (e == null) {
      return "null";
    }
    if (e.probe() == null || e.side() == null) {
      return "no_probe_or_side";
    }
    if (e.pid() <= 0) {
      return "bad_pid";
    }
    if (e.streamId() <= 0) {
      return "bad_stream_id";
    }
    boolean sideOk =
        switch (e.probe()) {
          case LOOPY_WRITER_WRITE_HEADER -> true;
          case HTTP2_CLIENT_OPERATE_HEADERS -> e.side() == Side.CLIENT;
          case HTTP2_SERVER_OPERATE_HEADERS, HTTP2_SERVER_PROCESS_HEADERS, HTTP2_SERVER_WRITE_RES_HEADERS,
              HTTP2_SERVER_WRITE_STATUS -> e.side() == Side.SERVER;
          case HTTP2_CLIENT_NEW_STREAM, HTTP2_CLIENT_CLOSE_STREAM -> e.side() == Side.CLIENT;
        };
    return sideOk ? null : "probe_side_mismatch";
  }

  private static String validate(StreamParent p) {
    if (p == null) {
      return "null";
    }
    if (p.pid() <= 0) {
      return "bad_pid";
    }
    if (p.streamId() <= 0 || p.parentStreamId() <= 0) {
      return "bad_stream_id";
    }
    if (p.via() == null) {
      return "no_via";
    }
    return null;
  }

  private static boolean isStart(HeaderEvent e) {
    return e.probe().startsSpan(e.side());
  }


  /** Whether an end-side event ends its stream. */
  private static boolean isFinal(HeaderEvent e) {
    return e.endStream();
  }

  private void start(StreamKey key, HeaderEvent e, long now) {
    TracedStream previous = streams.get(key);
    if (previous != null) {
      if (previous.sockets == null || e.sockets() == null || previous.sockets.equals(e.sockets())) {
        counters.duplicate();
        return;
      }
      // a new connection at the address of a closed one: the old stream's end will not come
      streams.remove(key);
      endIncomplete(previous, "connection_closed", now);
    }
    if (streams.full()) {
      counters.streamsOverflow();
      return;
    }
    String traceparent = e.header("traceparent");
    SpanContext remoteParent = TraceHeaders.parent(traceparent, e.header("tracestate"));
    if (traceparent != null && remoteParent == null) {
      counters.traceparentMalformed();
    }
    SpanIdentity node = e.side() == Side.SERVER ? parentLinks.adoptStub(key, e.monotonicNs()) : null;
    if (node == null) {
      node = new SpanIdentity(key, ids.generateSpanId(), e.monotonicNs());
    }
    TracedStream s = new TracedStream(key, e, now + timeoutNs, remoteParent, node);
    s.truncated = e.fieldsTruncated();
    List<HeaderField> fields = e.fields();
    for (int i = 0, n = fields.size(); i < n; i++) { // no iterator per event
      HeaderField f = fields.get(i);
      s.truncated |= f.truncated();
      attributes.capture(s, true, f);
    }
    streams.add(s);
    // Read the process's resource now, while it surely runs, and keep it with the stream: a short-lived
    // process of a known binary (traced from its first call, never discovered) may exit, and be
    // forgotten, before its span is exported.
    s.resource = metadata.resource(e.pid());

    if (s.side == Side.SERVER) {
      startServer(s, now);
    } else {
      startClient(s, now);
    }
    HeaderEvent early = earlyEnds.take(key);
    if (early != null && s.side == Side.SERVER && early.monotonicNs() < s.startNs) {
      // A server stream ends after it starts (writeStatus runs in the handler operateHeaders started), so
      // an earlier end is an earlier stream's under the same key: grpc-go calls writeStatus again for a
      // stream already done (it returns at its guard, past the probe), and a closed connection's address
      // is reused by the next one, whose first stream is 1 again.
      counters.unmatched(1);
    } else if (early != null) {
      update(s, early, now);
    }
  }

  private void startServer(TracedStream s, long now) {
    SpanIdentity node = s.node;
    if (linkWaitNs > 0) {
      parentLinks.serving(s.pid);
    }
    parentLinks.stubAdopted(node);
    FlowIndex.ClientRecord client = s.flow == null || linkWaitNs == 0 ? null : flows.covering(s.flow, s.startNs);
    if (client != null && client.stream() != null) { // else ended and emitted: nothing left to update
      requestHeadersSeen(client.stream(), s);
    }
    if (s.remoteParent != null) {
      decisions.decide(node, s.remoteParent);
    } else if (s.flow == null || linkWaitNs == 0) {
      decisions.root(node);
    } else {
      if (client == null || !decisions.link(node, client.linkTarget(), false, 0)) {
        decisions.openServer(node, s.flow, now);
        askRemote(node, s, now);
      }
    }
  }

  /** Asks the gospan at the client's address, when that is not this gospan's own; the node then waits longer. */
  private void askRemote(SpanIdentity node, TracedStream s, long now) {
    // A unix domain socket's ends are on this host: never asked about remotely.
    if (remote == null || !(s.flow.clientEnd() instanceof SocketPair.Ip ip)) {
      return;
    }
    InetSocketAddress client = ip.address();
    if (client.getAddress() == null || remote.isLocal(client.getAddress())
        || !remote.lookup(new ClientFlow(client, s.flow.streamId()), clock.toEpochNanos(s.startNs))) {
      return;
    }
    decisions.waitRemote(node, now + remoteWaitNs);
  }

  private void startClient(TracedStream s, long now) {
    SpanIdentity node = s.node;
    StreamParent pending = parentLinks.takePending(s.key);
    if (s.remoteParent != null) {
      decisions.decide(node, s.remoteParent);
      if (pending != null) {
        parentLinks.count(ParentLinks.Result.TRACEPARENT);
      }
    } else if (pending != null) {
      decisions.open(node, now);
      parentLinks.link(node, pending, now);
    } else if (linkWaitNs > 0 && parentLinks.isServing(s.pid)) {
      decisions.open(node, now); // its StreamParent may come after its start
    } else if (linkWaitNs > 0 && s.startedAtNewStream && s.flow != null) {
      decisions.open(node, now); // its server's request headers may carry the application's traceparent
      s.rootAtEnd = true;
    } else {
      decisions.root(node);
    }
    if (s.flow == null) {
      return;
    }
    // A client stream started at NewStream's return may have been received by its server before
    // (the HEADERS frame is queued inside NewStream): its flow covers server starts a little earlier.
    long coverFrom = s.startedAtNewStream ? s.startNs - NEW_STREAM_SLACK_NS : s.startNs;
    flows.started(s, coverFrom);
    SpanIdentity server = decisions.openServer(s.flow);
    if (server != null && server.open() && server.startNs >= coverFrom) {
      decisions.removeOpenServer(s.flow);
      TracedStream serverStream = streams.get(server.key);
      if (serverStream != null) {
        requestHeadersSeen(s, serverStream);
      }
      decisions.link(server, node, false, 0);
    }
  }

  /**
   * The server end of a client stream started at NewStream (which saw no request headers) received
   * them: the client span takes their {@code :authority} and allowed metadata, and the application's
   * own {@code traceparent} as its parent when its trace id is not decided yet (it wins over an
   * in-process link, as it does on the client's own headers); a client that can get no other parent
   * is a root from now on.
   */
  private void requestHeadersSeen(TracedStream client, TracedStream server) {
    if (!client.startedAtNewStream) {
      return;
    }
    if (client.authority == null) {
      client.authority = server.authority;
    }
    if (client.requestMetadata.isEmpty() && !server.requestMetadata.isEmpty()) {
      client.requestMetadata = new TreeMap<>(server.requestMetadata);
    }
    SpanIdentity n = client.node;
    if (server.remoteParent != null && client.remoteParent == null && n.undecided()) {
      client.remoteParent = server.remoteParent;
      decisions.replaceParent(n, server.remoteParent);
    } else if (client.rootAtEnd && n.open()) {
      decisions.root(n);
    }
  }

  private void update(TracedStream s, HeaderEvent e, long now) {
    s.lastNs = Math.max(s.lastNs, e.monotonicNs());
    s.truncated |= e.fieldsTruncated();
    List<HeaderField> fields = e.fields();
    for (int i = 0, n = fields.size(); i < n; i++) { // no iterator per event
      HeaderField f = fields.get(i);
      s.truncated |= f.truncated();
      if (f.name().equals(":status")) {
        s.httpStatus = f.value();
      }
      attributes.capture(s, false, f);
    }
    if (!isFinal(e)) {
      return;
    }
    streams.remove(s.key);
    String grpcStatus = e.header("grpc-status");
    Status.Code status = GrpcStatus.parse(grpcStatus);
    if (status == null) {
      if (grpcStatus != null) {
        counters.malformed("grpc_status");
      }
      status = grpcStatus != null ? Status.Code.UNKNOWN : GrpcStatus.fromHttpStatus(s.httpStatus);
    }
    String message = e.probe().rawMessage() ? e.header("grpc-message") : TraceHeaders.decodeGrpcMessage(e.header("grpc-message"));
    long endNs = Math.max(e.monotonicNs(), s.startNs);
    if (s.rootAtEnd && s.node.open()) {
      decisions.root(s.node); // no server start gave it a parent: none will come
    }
    remember(s, endNs, now);
    end(s.node, new EndedSpan(s, endNs, status, message, null));
  }

  private void endAll(Predicate<TracedStream> filter, String reason) {
    long now = clock.monotonicNow();
    for (TracedStream s : streams.matching(filter)) {
      streams.remove(s.key);
      endIncomplete(s, reason, now);
    }
    counters.inFlight(streams.size());
  }

  // ------------------------------------------------------------------------------------ ending

  private void endIncomplete(TracedStream s, String reason, long now) {
    counters.incomplete(reason);
    remember(s, Long.MAX_VALUE, now); // its end is unknown: it may cover anything later
    if (s.node.open()) {
      decisions.root(s.node); // nothing linked it so far; an incomplete span does not wait for a link
    }
    end(s.node, new EndedSpan(s, s.lastNs, null, null, reason));
  }

  /** Emits an ended span now when its trace id is decided, else holds it (bounded). */
  private void end(SpanIdentity node, EndedSpan end) {
    if (!decisions.ended(node, end)) {
      counters.linkOverflow();
    }
  }

  /** Keeps an ended stream findable: a client by its flow (flow links), a server by its key (StreamParents). */
  private void remember(TracedStream s, long endNs, long now) {
    if (s.side == Side.SERVER) {
      endedServers.ended(s, endNs, now);
    } else if (s.flow != null) {
      flows.ended(s, endNs, now);
    }
  }
}
