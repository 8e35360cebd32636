package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.HeaderPolicy;
import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import io.gospan.receiver.event.StreamParent;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.internal.OtelEncodingUtils;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceId;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.StatusData;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

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
 * <p>Thread-safe: every method takes one lock. The {@link SpanSink} is called under it and must not
 * block. {@link #expire()} must be called periodically (the pipeline does, every 100 ms).
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
   * A stream, by the connection's Go object (its address) and stream id. Only a stream's start
   * carries the connection's 4-tuple (the probes read the socket once per stream, grpc.bpf.c),
   * so it is not part of the key: Go may allocate a new connection at the address of a closed
   * one, and a start whose 4-tuple differs from the in-flight stream with its key ends that
   * stream (its connection is gone).
   */
  private record StreamKey(int pid, long connection, int streamId, Side side) {
    /** Mixed ({@link RecentEnds#hash}): connections are nearby addresses and stream ids small odd or even numbers. */
    @Override
    public int hashCode() {
      return RecentEnds.hash(connection, streamId, ((long) pid) << 1 | side.ordinal());
    }

    /** Written out: a record's generated equals is a method-handle chain the profile showed on every event. */
    @Override
    public boolean equals(Object o) {
      return o instanceof StreamKey k && k.connection == connection && k.streamId == streamId && k.pid == pid
          && k.side == side;
    }
  }

  /**
   * A call as both its ends see it: the client's own end of the connection and the HTTP/2 stream
   * id. For TCP the client's end is its socket address (IP, port); the server's address is left
   * out: a DNAT in between (a Kubernetes ClusterIP, kube-proxy) makes the client see the service's
   * address and the server its own, while both see the same client address unless something
   * source-NATs it. For a unix domain socket it is the client socket's inode, which the server
   * sees as its peer's inode (unique on the host; such a call is only ever linked locally). Time
   * proximity (the server's start within the client span) tells a reused client port apart.
   */
  private record FlowKey(SocketPair.Endpoint clientEnd, int streamId) {
    /**
     * Mixed ({@link RecentEnds#hash}): the record's default ({@code 31 × endpoint + stream id})
     * puts the streams of a client's few connections, whose ports (and so endpoint hashes) are
     * close and whose stream ids are consecutive odd numbers, into the same few hash buckets.
     */
    @Override
    public int hashCode() {
      return RecentEnds.hash(streamId, 0, clientEnd.hashCode());
    }

    /** Written out, as {@link StreamKey#equals}. */
    @Override
    public boolean equals(Object o) {
      return o instanceof FlowKey k && k.streamId == streamId && k.clientEnd.equals(clientEnd);
    }

    static FlowKey of(Side side, SocketPair s, int streamId) {
      if (s == null) {
        return null;
      }
      return new FlowKey(side == Side.CLIENT ? s.local() : s.remote(), streamId);
    }
  }

  /**
   * A span's identity and how its trace id gets decided. A node is <em>decided</em> ({@code
   * traceId} set, final), <em>linked</em> ({@code parent} set: it takes its parent's trace id
   * when that is decided), <em>open</em> (nothing links it yet: in {@code openNodes}, a root at
   * {@code decideBy}) or a <em>stub</em> (a server stream named by a StreamParent before its
   * start: in {@code stubs}, spans link to it, its stream adopts it when it starts).
   */
  private static final class Node {
    final StreamKey key;
    final String spanId;
    long startNs; // the stream's start (event time); Long.MIN_VALUE for a stub
    FlowKey flow; // servers indexed in openServers while open
    String traceId; // null until decided
    SpanContext parentContext = SpanContext.getInvalid(); // set when decided
    Node parent; // linked: waits for this node's trace id
    boolean inProcess; // linked by a StreamParent (else by the flow)
    long linkNs; // the StreamParent's time (client stream created), in-process links
    List<Node> children; // linked to this node
    Held held; // ended, waiting for the trace id
    long decideBy; // open nodes and stubs: processing time they are decided at
    boolean stub;
    boolean inOpenNodes;
    boolean remoteWait; // open, asked another gospan: in remoteNodes, not openNodes
    long seq; // remoteNodes' tie-break

    Node(StreamKey key, String spanId, long startNs) {
      this.key = key;
      this.spanId = spanId;
      this.startNs = startNs;
    }

    /**
     * A decided node made again from an ended span's ids (see {@link ClientRecord}), to link to
     * or answer about; never indexed anywhere (it has no key).
     */
    static Node decided(long traceIdHigh, long traceIdLow, long spanId) {
      Node n = new Node(null, SpanId.fromLong(spanId), Long.MIN_VALUE);
      n.traceId = TraceId.fromLongs(traceIdHigh, traceIdLow);
      return n;
    }

    /**
     * The high (0) or low (1) half of its decided trace id (16 bytes as 32 lower-case hex digits,
     * W3C trace context; the API's table-driven decoding: {@code Long.parseUnsignedLong} took
     * ~0.25 µs per span in a profile).
     */
    long traceIdHalf(int half) {
      return OtelEncodingUtils.longFromBase16String(traceId, half * 16);
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

  /**
   * A client stream findable by its flow: in flight ({@code node} and {@code stream} set, ids 0),
   * or ended, as {@link RecentEnds} keeps it: its node and stream while its trace id is
   * undecided, else only its trace and span ids as numbers ({@code node} and {@code stream} null).
   * At high rates thousands of ended spans are kept for {@code link_wait}, and every object kept
   * that long is copied and promoted by the collector (AssemblerMemoryTest: a call remembered at
   * both ends kept ~770 bytes of objects as nodes and streams in maps).
   */
  private record ClientRecord(
      Node node, Stream stream, long startNs, long endNs, long retainUntil, long traceIdHigh, long traceIdLow, long spanId) {
    ClientRecord(Node node, Stream stream, long startNs, long endNs, long retainUntil) {
      this(node, stream, startNs, endNs, retainUntil, 0, 0, 0);
    }

    /** Its node, or a decided node made from its ids. */
    Node linkTarget() {
      return node != null ? node : Node.decided(traceIdHigh, traceIdLow, spanId);
    }

    boolean covers(long serverStartNs) {
      return serverStartNs >= startNs && serverStartNs <= endNs;
    }

    /** Covers within {@code toleranceNs} either side (another gospan's clock). */
    boolean covers(long serverStartNs, long toleranceNs) {
      return serverStartNs >= startNs - toleranceNs && (endNs == Long.MAX_VALUE || serverStartNs <= endNs + toleranceNs);
    }
  }

  /**
   * An ended server stream, for StreamParents that arrive after its end: its node while
   * undecided, else only its ids (see {@link ClientRecord}); made from {@link #recentServers} when
   * one is looked up.
   */
  private record ServerRecord(Node node, long startNs, long endNs, long retainUntil, long traceIdHigh, long traceIdLow, long spanId) {
    /** Its node, or a decided node made from its ids. */
    Node linkTarget() {
      return node != null ? node : Node.decided(traceIdHigh, traceIdLow, spanId);
    }
  }

  /** A StreamParent whose client stream has not started (as far as events tell). */
  private record PendingParent(StreamParent parent, long expiresAt) {}

  private static final class Stream {
    final StreamKey key;
    final int pid;
    final Side side;
    final long startNs;
    final long deadline;
    long lastNs;
    final String path;
    final String fullMethod; // pkg.Service/Method, null when unknown
    String authority; // a client started at NewStream: its server's, when gospan sees that
    final SocketPair sockets;
    final String socketUnknown;
    final FlowKey flow;
    SpanContext remoteParent; // a client started at NewStream: its server's traceparent, when gospan sees that
    /** A client stream started at NewStream's return (streams set): it saw no request headers. */
    final boolean startedAtNewStream;
    /**
     * A client started at NewStream in a process that made no in-process link for it: nothing but
     * its server's request headers can give it a parent, so it is a root once those are seen or it ends.
     */
    boolean rootAtEnd;
    final Node node;
    // allocated at the first captured value (most spans have none)
    Map<String, List<String>> requestMetadata = Map.of();
    Map<String, List<String>> responseMetadata = Map.of();
    /** The process's resource, read at the stream's start: it may exit (and be forgotten) before export. */
    Resource resource;
    String httpStatus;
    boolean truncated;

    Stream(StreamKey key, HeaderEvent e, long deadline, SpanContext remoteParent, Node node) {
      this.key = key;
      this.pid = e.pid();
      this.side = e.side();
      this.startNs = e.monotonicNs();
      this.lastNs = e.monotonicNs();
      this.deadline = deadline;
      HeaderField pathField = e.field(":path");
      this.path = pathField != null ? pathField.value() : null;
      this.fullMethod = pathField != null && !pathField.truncated() ? fullMethod(pathField.value()) : null;
      this.authority = e.header(":authority");
      this.sockets = e.sockets();
      this.socketUnknown = e.sockets() == null ? e.socketUnknown() : null;
      this.flow = FlowKey.of(e.side(), e.sockets(), e.streamId());
      this.remoteParent = remoteParent;
      this.startedAtNewStream = e.probe() == ProbeKind.HTTP2_CLIENT_NEW_STREAM;
      this.node = node;
    }
  }

  /** An ended span waiting for its trace id. */
  private record Held(Stream stream, long endNs, GrpcStatus status, String message, String incompleteReason) {}

  private record OrphanEnd(HeaderEvent event, long releaseAt) {}

  private final Settings settings;
  private final RpcSemconv semconv;
  private final MonotonicClock clock;
  private final ProcessMetadata metadata;
  private final SpanSink sink;
  private final IdGenerator ids;
  private final long timeoutNs;
  private final long linkWaitNs;
  private final int maxPending;

  /**
   * How much earlier than a client stream's NewStream start its server's start may be and still be
   * its: NewStream queues the HEADERS frame before it returns, so the server may receive it first
   * (microseconds; more when the caller is descheduled in between). A flow (4-tuple and stream id)
   * is not reused within far longer.
   */
  static final long NEW_STREAM_SLACK_NS = 100_000_000L;

  private final LinkedHashMap<StreamKey, Stream> streams = new LinkedHashMap<>();
  private final Map<FlowKey, ClientRecord> inFlightClients = new HashMap<>();
  /** Ended client streams by flow: key (stream id, 0, the client's endpoint). */
  private final RecentEnds recentClients;
  /** Ended server streams by key: (connection, pid << 32 | stream id, none). */
  private final RecentEnds recentServers;
  /** Open server nodes by flow: a client start links the one it covers. */
  private final Map<FlowKey, Node> openServers = new HashMap<>();
  /** Open client nodes by key: a StreamParent links the one it names. */
  private final Map<StreamKey, Node> openClients = new HashMap<>();
  /** Open nodes in {@code decideBy} order (every deadline is some now + link_wait). */
  private final LinkedHashSet<Node> openNodes = new LinkedHashSet<>();
  /**
   * Open server nodes that asked another gospan, by {@code decideBy} (now + link_wait + the remote
   * extra wait, extended by {@link #remoteWaitUntil}).
   */
  private final java.util.TreeSet<Node> remoteNodes =
      new java.util.TreeSet<>(java.util.Comparator.<Node>comparingLong(n -> n.decideBy).thenComparingLong(n -> n.seq));
  private long remoteSeq;
  private RemoteLinks remote; // null: no other gospan is asked
  private long lastEventNs; // the latest header event's time read so far
  private long remoteWaitNs;
  /** Stubs in {@code decideBy} order. */
  private final LinkedHashMap<StreamKey, Node> stubs = new LinkedHashMap<>();
  private final LinkedHashMap<StreamKey, PendingParent> pendingParents = new LinkedHashMap<>();
  /** Ended spans waiting for their trace id. */
  private final LinkedHashSet<Node> held = new LinkedHashSet<>();
  private int heldServers;
  private final LinkedHashMap<StreamKey, OrphanEnd> orphanEnds = new LinkedHashMap<>();
  /** Processes seen serving (a server stream or a StreamParent), least recently seen first. */
  private final LinkedHashMap<Integer, Boolean> servingPids;
  private volatile int inFlightCount;

  // Results of a StreamParent (AssemblyMetrics.LINKS_IN_PROCESS).
  private static final String LINKED = "linked";
  private static final String NOT_FOUND = "not_found";
  private static final String STALE = "stale";
  private static final String TRACEPARENT = "traceparent";
  private static final String LATE = "late";
  private static final String NO_CLIENT = "no_client";
  private static final String OVERFLOW = "overflow";

  private static final Map<ProbeKind, Attributes> PROBE_ATTRIBUTES = new java.util.EnumMap<>(ProbeKind.class);
  private static final Map<String, Attributes> RESULT_ATTRIBUTES = new HashMap<>();

  static {
    for (ProbeKind k : ProbeKind.values()) {
      PROBE_ATTRIBUTES.put(k, Attributes.of(AssemblyMetrics.PROBE, k.name().toLowerCase(Locale.ROOT)));
    }
    for (String r : List.of(LINKED, NOT_FOUND, STALE, TRACEPARENT, LATE, NO_CLIENT, OVERFLOW)) {
      RESULT_ATTRIBUTES.put(r, Attributes.of(AssemblyMetrics.RESULT, r));
    }
  }

  /**
   * Events read by {@link ProbeKind} ordinal, and server spans linked: counted for every event
   * and span under the lock as plain numbers, observed by {@link AssemblyMetrics#EVENTS_READ} and
   * {@link AssemblyMetrics#SPANS_LINKED}'s callbacks (a synchronous counter's {@code add} looks
   * its series up by attributes on every call: ~0.1 µs, several per span).
   */
  private final long[] eventsRead = new long[ProbeKind.values().length];
  private long linked;
  private final LongCounter malformed;
  private final LongCounter duplicate;
  private final LongCounter unmatched;
  private final LongCounter traceparentMalformed;
  private final LongCounter overflow;
  private final LongCounter incomplete;
  private final LongCounter linkOverflow;
  private final LongCounter inProcessLinks;

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
    this.settings = settings;
    this.semconv = RpcSemconv.of(settings.semconv());
    this.clock = clock;
    this.metadata = metadata;
    this.sink = sink;
    this.ids = ids;
    this.timeoutNs = settings.timeout().toNanos();
    this.linkWaitNs = settings.linkWait().toNanos();
    this.maxPending = settings.maxPendingLinks();
    this.recentClients = new RecentEnds(Math.max(1, maxPending));
    this.recentServers = new RecentEnds(Math.max(1, maxPending));
    int servingBound = Math.max(1, maxPending);
    this.servingPids =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> eldest) {
            return size() > servingBound;
          }
        };
    meter.counterBuilder(AssemblyMetrics.EVENTS_READ.metricName()).setDescription(AssemblyMetrics.EVENTS_READ.description())
        .buildWithCallback(r -> {
          long[] read;
          synchronized (this) {
            read = eventsRead.clone();
          }
          for (ProbeKind k : ProbeKind.values()) {
            if (read[k.ordinal()] > 0) { // a series appears with its first event, as a synchronous counter's
              r.record(read[k.ordinal()], PROBE_ATTRIBUTES.get(k));
            }
          }
        });
    malformed = counter(meter, AssemblyMetrics.EVENTS_MALFORMED);
    duplicate = counter(meter, AssemblyMetrics.EVENTS_DUPLICATE);
    unmatched = counter(meter, AssemblyMetrics.EVENTS_UNMATCHED);
    traceparentMalformed = counter(meter, AssemblyMetrics.TRACEPARENT_MALFORMED);
    overflow = counter(meter, AssemblyMetrics.STREAMS_OVERFLOW);
    incomplete = counter(meter, AssemblyMetrics.SPANS_INCOMPLETE);
    meter.counterBuilder(AssemblyMetrics.SPANS_LINKED.metricName()).setDescription(AssemblyMetrics.SPANS_LINKED.description())
        .buildWithCallback(r -> {
          long n;
          synchronized (this) {
            n = linked;
          }
          if (n > 0) {
            r.record(n);
          }
        });
    linkOverflow = counter(meter, AssemblyMetrics.LINKS_OVERFLOW);
    inProcessLinks = counter(meter, AssemblyMetrics.LINKS_IN_PROCESS);
    meter
        .gaugeBuilder(AssemblyMetrics.STREAMS_IN_FLIGHT.metricName())
        .setDescription(AssemblyMetrics.STREAMS_IN_FLIGHT.description())
        .ofLongs()
        .buildWithCallback(r -> r.record(inFlightCount));
  }

  private static LongCounter counter(Meter meter, AssemblyMetrics m) {
    return meter.counterBuilder(m.metricName()).setDescription(m.description()).build();
  }

  private void countParent(String result) {
    inProcessLinks.add(1, RESULT_ATTRIBUTES.get(result));
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
    String problem = validate(p);
    if (problem != null) {
      malformed.add(1, Attributes.of(AssemblyMetrics.REASON, problem));
      return;
    }
    if (linkWaitNs == 0) {
      return;
    }
    long now = clock.monotonicNow();
    servingPids.put(p.pid(), Boolean.TRUE);
    StreamKey clientKey = new StreamKey(p.pid(), p.connectionId(), p.streamId(), Side.CLIENT);
    Stream client = streams.get(clientKey);
    Node node = client != null ? client.node : openClients.get(clientKey);
    if (node == null) {
      // Not started yet (the stream's first header frame may be written after NewStream returns),
      // or ended and decided already (then it expires as no_client).
      if (pendingParents.size() >= maxPending && !pendingParents.containsKey(clientKey)) {
        countParent(OVERFLOW);
        linkOverflow.add(1);
        return;
      }
      PendingParent previous = pendingParents.remove(clientKey); // re-insert: expiry order
      pendingParents.put(clientKey, new PendingParent(p, now + linkWaitNs));
      if (previous != null) {
        countParent(LATE);
      }
      return;
    }
    if (client != null && client.remoteParent != null) {
      countParent(TRACEPARENT);
    } else if (!node.open()) {
      countParent(LATE);
    } else {
      linkToParent(node, p, now);
    }
  }

  /** Feeds one header event. Never blocks on export. */
  public synchronized void accept(HeaderEvent e) {
    long now = clock.monotonicNow();
    String problem = validate(e);
    if (problem != null) {
      malformed.add(1, Attributes.of(AssemblyMetrics.REASON, problem));
      return;
    }
    eventsRead[e.probe().ordinal()]++;
    if (e.monotonicNs() > lastEventNs) {
      lastEventNs = e.monotonicNs();
    }
    if (e.probe() == ProbeKind.HTTP2_SERVER_PROCESS_HEADERS && !e.grpcContentType()) {
      return; // another HTTP/2 request of a server that also serves gRPC through ServeHTTP
    }
    StreamKey key = keyOf(e);
    if (isStart(e)) {
      start(key, e, now);
    } else {
      Stream s = streams.get(key);
      if (s == null) {
        if (isFinal(e) && linkWaitNs > 0) {
          holdOrphan(key, e, now);
        } else {
          unmatched.add(1);
        }
        return;
      }
      update(s, e, now);
    }
    inFlightCount = streams.size();
  }

  /**
   * Lets span assembly ask other gospans for the client spans of server spans it cannot link
   * itself (see "Parents"); {@code null} = ask none (the default). Set before events flow.
   */
  public synchronized void remoteLinks(RemoteLinks links) {
    this.remote = links;
    this.remoteWaitNs = links == null ? 0 : linkWaitNs + Math.max(0, links.extraWaitNanos());
  }

  /**
   * Another gospan's answer to {@link RemoteLinks#lookup}: the server span of {@code flow} that
   * started at {@code serverStartEpochNanos} (within 1 ms: the epoch conversion may have been
   * recalibrated in between) becomes the child of {@code parent}, in its trace, and so does every
   * span waiting on it (in-process propagation).
   *
   * @param parent the client span's ids, valid
   * @return whether a server span took it; {@code false} when none waits for it any more (linked
   *     here meanwhile, released as a root after its wait, never asked)
   * @throws IllegalArgumentException when {@code parent} is not valid
   */
  public synchronized boolean remoteParent(ClientFlow flow, long serverStartEpochNanos, SpanContext parent) {
    if (!parent.isValid()) {
      throw new IllegalArgumentException("invalid parent " + parent);
    }
    Node n = openServers.isEmpty() ? null : openServers.get(new FlowKey(new SocketPair.Ip(flow.client()), flow.streamId()));
    if (n == null || !n.open() || Math.abs(clock.toEpochNanos(n.startNs) - serverStartEpochNanos) > 1_000_000) {
      return false;
    }
    decide(n, parent.getTraceId(), SpanContext.createFromRemoteParent(
        parent.getTraceId(), parent.getSpanId(), TraceFlags.getSampled(), TraceState.getDefault()));
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
    Node n = openServers.isEmpty() ? null : openServers.get(new FlowKey(new SocketPair.Ip(flow.client()), flow.streamId()));
    if (n == null || !n.open() || !n.remoteWait || Math.abs(clock.toEpochNanos(n.startNs) - serverStartEpochNanos) > 1_000_000) {
      return false;
    }
    long until = Math.min(untilEpochNanos - clock.offsetNanos(), clock.monotonicNow() + 4 * remoteWaitNs);
    if (until <= n.decideBy) {
      return false;
    }
    remoteNodes.remove(n);
    n.decideBy = until;
    remoteNodes.add(n);
    return true;
  }

  /**
   * Another gospan's definite answer to {@link RemoteLinks#lookup}: it traced no client span of
   * {@code flow} covering {@code serverStartEpochNanos}. The server span that asked (still open)
   * becomes a root now instead of at the end of its wait.
   *
   * @return whether a waiting server span was released
   */
  public synchronized boolean remoteNotFound(ClientFlow flow, long serverStartEpochNanos) {
    Node n = openServers.isEmpty() ? null : openServers.get(new FlowKey(new SocketPair.Ip(flow.client()), flow.streamId()));
    if (n == null || !n.open() || !n.remoteWait || Math.abs(clock.toEpochNanos(n.startNs) - serverStartEpochNanos) > 1_000_000) {
      return false;
    }
    root(n);
    return true;
  }

  /**
   * What this gospan knows of its client span of {@code flow} covering {@code
   * serverStartEpochNanos} (another gospan asks: its server span started then): the span's ids
   * once its trace id is final, {@link ClientSpanAnswer.State#PENDING} while it waits for its own
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
    FlowKey key = new FlowKey(new SocketPair.Ip(flow.client()), flow.streamId());
    long t = serverStartEpochNanos - clock.offsetNanos();
    ClientRecord c = inFlightClients.get(key);
    if (c == null || !c.covers(t, toleranceNanos)) {
      c = recentClient(key);
      if (c == null || !c.covers(t, toleranceNanos)) {
        return unknown;
      }
    }
    Node n = c.linkTarget();
    if (n.undecided()) {
      Node root = n;
      for (int i = 0; root.parent != null && i < 1000; i++) {
        root = root.parent; // the open node, remote node or stub the chain waits on
      }
      return ClientSpanAnswer.pending(clock.toEpochNanos(root.decideBy));
    }
    return new ClientSpanAnswer(ClientSpanAnswer.State.FOUND,
        SpanContext.create(n.traceId, n.spanId, TraceFlags.getSampled(), TraceState.getDefault()), 0, 0);
  }

  /** Ends every stream of a connection that closed (their ends will not come). */
  public synchronized void connectionClosed(int pid, long connectionId) {
    endAll(s -> s.key.pid() == pid && s.key.connection() == connectionId, "connection_closed");
  }

  /** Ends every stream of a process that exited. */
  public synchronized void processExited(int pid) {
    endAll(s -> s.key.pid() == pid, "process_exited");
    servingPids.remove(pid);
  }

  /** Ends timed-out streams, decides the trace ids whose link wait is over, emits what they held. */
  public void expire() {
    expire(clock.monotonicNow());
  }

  synchronized void expire(long now) {
    expireClients(now); // first: a client span decided below stays findable a while for other gospans
    for (Iterator<Stream> it = streams.values().iterator(); it.hasNext(); ) {
      Stream s = it.next();
      if (s.deadline > now) {
        break;
      }
      it.remove();
      endIncomplete(s, "timeout", now);
    }
    while (!stubs.isEmpty()) {
      Node stub = stubs.values().iterator().next();
      if (stub.decideBy > now) {
        break;
      }
      stubs.remove(stub.key);
      stubMissing(stub);
    }
    while (!openNodes.isEmpty()) {
      Node n = openNodes.iterator().next();
      if (n.decideBy > now) {
        break;
      }
      root(n);
    }
    while (!remoteNodes.isEmpty()) {
      Node n = remoteNodes.first();
      if (n.decideBy > now) {
        break;
      }
      root(n);
    }
    for (Iterator<PendingParent> it = pendingParents.values().iterator(); it.hasNext(); ) {
      if (it.next().expiresAt() > now) {
        break;
      }
      it.remove();
      countParent(NO_CLIENT);
    }
    for (int slot; (slot = recentServers.oldest()) >= 0 && recentServers.retainUntil(slot) <= now; ) {
      recentServers.removeOldest();
    }
    for (Iterator<OrphanEnd> it = orphanEnds.values().iterator(); it.hasNext(); ) {
      if (it.next().releaseAt() > now) {
        break;
      }
      it.remove();
      unmatched.add(1);
    }
    inFlightCount = streams.size();
  }

  /**
   * Forgets ended client spans kept past their time; one still waiting for its trace id is kept
   * another remote wait when other gospans may ask about it (its chain waits for an answer).
   */
  private void expireClients(long now) {
    List<Map.Entry<FlowKey, ClientRecord>> keep = null;
    for (int slot; (slot = recentClients.oldest()) >= 0 && recentClients.retainUntil(slot) <= now; ) {
      if (remote != null && recentClients.node(slot) instanceof Node n && n.undecided()) {
        if (keep == null) {
          keep = new ArrayList<>();
        }
        FlowKey flow = new FlowKey((SocketPair.Endpoint) recentClients.keyRef(slot), (int) recentClients.keyA(slot));
        keep.add(Map.entry(flow, new ClientRecord(n, (Stream) recentClients.stream(slot), recentClients.startNs(slot),
            recentClients.endNs(slot), now + remoteWaitNs)));
      }
      recentClients.removeOldest();
    }
    if (keep != null) {
      for (Map.Entry<FlowKey, ClientRecord> e : keep) {
        rememberClient(e.getKey(), e.getValue(), e.getValue().endNs(), e.getValue().retainUntil());
      }
    }
  }

  /**
   * Ends everything now: in-flight streams as incomplete ({@code shutdown}); spans waiting for a
   * parent's trace id get it, or become roots when nothing linked them.
   */
  public synchronized void flush() {
    long now = clock.monotonicNow();
    endAll(s -> true, "shutdown");
    for (Node stub : List.copyOf(stubs.values())) {
      stubs.remove(stub.key);
      stubMissing(stub);
    }
    for (Node n : List.copyOf(openNodes)) {
      root(n);
    }
    for (Node n : List.copyOf(remoteNodes)) {
      root(n);
    }
    for (Node n : List.copyOf(held)) {
      if (held.contains(n)) {
        detach(n); // cannot happen (every linked chain starts at an open node or a stub): defensive
      }
    }
    for (int i = 0; i < pendingParents.size(); i++) {
      countParent(NO_CLIENT);
    }
    pendingParents.clear();
    unmatched.add(orphanEnds.size());
    orphanEnds.clear();
    recentClients.clear();
    recentServers.clear();
    inFlightCount = 0;
    expire(now);
  }

  public synchronized int inFlight() {
    return streams.size();
  }

  /** Ended server spans waiting for their trace id. */
  public synchronized int heldServerSpans() {
    return heldServers;
  }

  /** Ended client spans waiting for their trace id. */
  public synchronized int heldClientSpans() {
    return held.size() - heldServers;
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

  private static StreamKey keyOf(HeaderEvent e) {
    return new StreamKey(e.pid(), e.connectionId(), e.streamId(), e.side());
  }

  private static boolean isStart(HeaderEvent e) {
    return e.probe().startsSpan(e.side());
  }


  /** Whether an end-side event ends its stream. */
  private static boolean isFinal(HeaderEvent e) {
    return e.endStream();
  }

  private void start(StreamKey key, HeaderEvent e, long now) {
    Stream previous = streams.get(key);
    if (previous != null) {
      if (previous.sockets == null || e.sockets() == null || previous.sockets.equals(e.sockets())) {
        duplicate.add(1);
        return;
      }
      // a new connection at the address of a closed one: the old stream's end will not come
      streams.remove(key);
      endIncomplete(previous, "connection_closed", now);
    }
    if (streams.size() >= settings.maxInFlight()) {
      overflow.add(1);
      return;
    }
    String traceparent = e.header("traceparent");
    SpanContext remoteParent = TraceHeaders.parent(traceparent, e.header("tracestate"));
    if (traceparent != null && remoteParent == null) {
      traceparentMalformed.add(1);
    }
    Node node = e.side() == Side.SERVER && !stubs.isEmpty() ? stubs.remove(key) : null;
    if (node != null) {
      node.stub = false;
      node.startNs = e.monotonicNs();
    } else {
      node = new Node(key, ids.generateSpanId(), e.monotonicNs());
    }
    Stream s = new Stream(key, e, now + timeoutNs, remoteParent, node);
    s.truncated = e.fieldsTruncated();
    List<HeaderField> fields = e.fields();
    for (int i = 0, n = fields.size(); i < n; i++) { // no iterator per event
      HeaderField f = fields.get(i);
      s.truncated |= f.truncated();
      captureMetadata(s, true, f);
    }
    streams.put(key, s);
    // Read the process's resource now, while it surely runs, and keep it with the stream: a short-lived
    // process of a known binary (traced from its first call, never discovered) may exit, and be
    // forgotten, before its span is exported.
    s.resource = metadata.resource(e.pid());

    if (s.side == Side.SERVER) {
      startServer(s, now);
    } else {
      startClient(s, now);
    }
    OrphanEnd orphan = orphanEnds.remove(key);
    if (orphan != null && s.side == Side.SERVER && orphan.event().monotonicNs() < s.startNs) {
      // A server stream ends after it starts (writeStatus runs in the handler operateHeaders started), so
      // an earlier end is an earlier stream's under the same key: grpc-go calls writeStatus again for a
      // stream already done (it returns at its guard, past the probe), and a closed connection's address
      // is reused by the next one, whose first stream is 1 again.
      unmatched.add(1);
    } else if (orphan != null) {
      update(s, orphan.event(), now);
    }
  }

  private void startServer(Stream s, long now) {
    Node node = s.node;
    if (linkWaitNs > 0) {
      servingPids.put(s.pid, Boolean.TRUE);
    }
    if (node.children != null) {
      // Adopted a stub: client streams created before this stream started are not its children.
      for (Node child : List.copyOf(node.children)) {
        if (child.parent == node && child.linkNs < node.startNs) {
          countParent(STALE);
          detach(child);
        } else if (child.parent == node) {
          countParent(LINKED);
        }
      }
    }
    ClientRecord client = s.flow == null || linkWaitNs == 0 ? null : findClient(s.flow, s.startNs);
    if (client != null && client.stream() != null) { // else ended and emitted: nothing left to update
      requestHeadersSeen(client.stream(), s);
    }
    if (s.remoteParent != null) {
      decide(node, s.remoteParent.getTraceId(), s.remoteParent);
    } else if (s.flow == null || linkWaitNs == 0) {
      root(node);
    } else {
      if (client == null || !link(node, client.linkTarget(), false, 0)) {
        open(node, now);
        node.flow = s.flow;
        openServers.put(s.flow, node); // a reused flow: the older one stays open, unindexed
        askRemote(node, s, now);
      }
    }
  }

  /** Asks the gospan at the client's address, when that is not this gospan's own; the node then waits longer. */
  private void askRemote(Node node, Stream s, long now) {
    // A unix domain socket's ends are on this host: never asked about remotely.
    if (remote == null || !(s.flow.clientEnd() instanceof SocketPair.Ip ip)) {
      return;
    }
    InetSocketAddress client = ip.address();
    if (client.getAddress() == null || remote.isLocal(client.getAddress())
        || !remote.lookup(new ClientFlow(client, s.flow.streamId()), clock.toEpochNanos(s.startNs))) {
      return;
    }
    openNodes.remove(node);
    node.remoteWait = true;
    node.decideBy = now + remoteWaitNs;
    node.seq = remoteSeq++;
    remoteNodes.add(node);
  }

  private void startClient(Stream s, long now) {
    Node node = s.node;
    PendingParent pending = pendingParents.isEmpty() ? null : pendingParents.remove(s.key);
    if (s.remoteParent != null) {
      decide(node, s.remoteParent.getTraceId(), s.remoteParent);
      if (pending != null) {
        countParent(TRACEPARENT);
      }
    } else if (pending != null) {
      open(node, now);
      linkToParent(node, pending.parent(), now);
    } else if (linkWaitNs > 0 && servingPids.containsKey(s.pid)) {
      open(node, now); // its StreamParent may come after its start
    } else if (linkWaitNs > 0 && s.startedAtNewStream && s.flow != null) {
      open(node, now); // its server's request headers may carry the application's traceparent
      s.rootAtEnd = true;
    } else {
      root(node);
    }
    if (s.flow == null) {
      return;
    }
    // A client stream started at NewStream's return may have been received by its server before
    // (the HEADERS frame is queued inside NewStream): its flow covers server starts a little earlier.
    long coverFrom = s.startedAtNewStream ? s.startNs - NEW_STREAM_SLACK_NS : s.startNs;
    ClientRecord rec = new ClientRecord(node, s, coverFrom, Long.MAX_VALUE, Long.MAX_VALUE);
    inFlightClients.put(s.flow, rec);
    Node server = openServers.isEmpty() ? null : openServers.get(s.flow);
    if (server != null && server.open() && rec.covers(server.startNs)) {
      openServers.remove(s.flow);
      Stream serverStream = streams.get(server.key);
      if (serverStream != null) {
        requestHeadersSeen(s, serverStream);
      }
      link(server, node, false, 0);
    }
  }

  /**
   * The server end of a client stream started at NewStream (which saw no request headers) received
   * them: the client span takes their {@code :authority} and allowed metadata, and the application's
   * own {@code traceparent} as its parent when its trace id is not decided yet (it wins over an
   * in-process link, as it does on the client's own headers); a client that can get no other parent
   * is a root from now on.
   */
  private void requestHeadersSeen(Stream client, Stream server) {
    if (!client.startedAtNewStream) {
      return;
    }
    if (client.authority == null) {
      client.authority = server.authority;
    }
    if (client.requestMetadata.isEmpty() && !server.requestMetadata.isEmpty()) {
      client.requestMetadata = new TreeMap<>(server.requestMetadata);
    }
    Node n = client.node;
    if (server.remoteParent != null && client.remoteParent == null && n.undecided()) {
      client.remoteParent = server.remoteParent;
      if (n.parent != null) {
        if (n.parent.children != null) {
          n.parent.children.remove(n);
        }
        n.parent = null;
      }
      leaveOpen(n);
      decide(n, server.remoteParent.getTraceId(), server.remoteParent);
    } else if (client.rootAtEnd && n.open()) {
      root(n);
    }
  }

  /** Links an open client node to the server stream {@code p} names, or decides it when it cannot. */
  private void linkToParent(Node client, StreamParent p, long now) {
    StreamKey parentKey = new StreamKey(p.pid(), p.parentConnectionId(), p.parentStreamId(), Side.SERVER);
    long createdNs = p.monotonicNs();
    Node parent;
    Stream server = streams.get(parentKey);
    if (server != null) {
      parent = server.startNs <= createdNs ? server.node : null;
    } else {
      ServerRecord ended = recentServer(parentKey);
      if (ended != null) {
        parent = ended.startNs() <= createdNs && createdNs <= ended.endNs() ? ended.linkTarget() : null;
      } else {
        Node stub = stubs.get(parentKey);
        if (stub == null) {
          if (stubs.size() >= maxPending) {
            countParent(OVERFLOW);
            linkOverflow.add(1);
            root(client);
            return;
          }
          stub = new Node(parentKey, ids.generateSpanId(), Long.MIN_VALUE);
          stub.stub = true;
          stub.decideBy = now + linkWaitNs;
          stubs.put(parentKey, stub);
        }
        link(client, stub, true, createdNs); // counted when the stub is adopted or missing
        return;
      }
    }
    if (parent != null && link(client, parent, true, createdNs)) {
      countParent(LINKED);
    } else {
      countParent(STALE); // ended before the client stream was created, started after it, or a cycle
      root(client);
    }
  }

  /** A stub's server stream did not start within link_wait: the spans linked to it become roots. */
  private void stubMissing(Node stub) {
    if (stub.children == null) {
      return;
    }
    for (Node child : List.copyOf(stub.children)) {
      if (child.parent == stub) {
        countParent(NOT_FOUND);
        detach(child);
      }
    }
    stub.children = null;
  }

  private void update(Stream s, HeaderEvent e, long now) {
    s.lastNs = Math.max(s.lastNs, e.monotonicNs());
    s.truncated |= e.fieldsTruncated();
    List<HeaderField> fields = e.fields();
    for (int i = 0, n = fields.size(); i < n; i++) { // no iterator per event
      HeaderField f = fields.get(i);
      s.truncated |= f.truncated();
      if (f.name().equals(":status")) {
        s.httpStatus = f.value();
      }
      captureMetadata(s, false, f);
    }
    if (!isFinal(e)) {
      return;
    }
    streams.remove(s.key);
    String grpcStatus = e.header("grpc-status");
    GrpcStatus status = GrpcStatus.parse(grpcStatus);
    if (status == null) {
      if (grpcStatus != null) {
        malformed.add(1, Attributes.of(AssemblyMetrics.REASON, "grpc_status"));
      }
      status = grpcStatus != null ? GrpcStatus.UNKNOWN : GrpcStatus.fromHttpStatus(s.httpStatus);
    }
    String message = e.probe().rawMessage() ? e.header("grpc-message") : TraceHeaders.decodeGrpcMessage(e.header("grpc-message"));
    long endNs = Math.max(e.monotonicNs(), s.startNs);
    if (s.rootAtEnd && s.node.open()) {
      root(s.node); // no server start gave it a parent: none will come
    }
    remember(s, endNs, now);
    end(s, new Held(s, endNs, status, message, null));
  }

  private void holdOrphan(StreamKey key, HeaderEvent e, long now) {
    if (orphanEnds.size() >= Math.max(1, maxPending)) {
      unmatched.add(1);
      return;
    }
    OrphanEnd previous = orphanEnds.remove(key); // re-insert: the map stays in release order
    orphanEnds.put(key, new OrphanEnd(e, now + linkWaitNs));
    if (previous != null) {
      unmatched.add(1); // a duplicate end for a stream whose start has not come
    }
  }

  private interface StreamFilter {
    boolean test(Stream s);
  }

  private void endAll(StreamFilter filter, String reason) {
    long now = clock.monotonicNow();
    List<Stream> ending = new ArrayList<>();
    for (Stream s : streams.values()) {
      if (filter.test(s)) {
        ending.add(s);
      }
    }
    for (Stream s : ending) {
      streams.remove(s.key);
      endIncomplete(s, reason, now);
    }
    inFlightCount = streams.size();
  }

  // ------------------------------------------------------------------------------------ ending

  private void endIncomplete(Stream s, String reason, long now) {
    incomplete.add(1, Attributes.of(AssemblyMetrics.REASON, reason));
    remember(s, Long.MAX_VALUE, now); // its end is unknown: it may cover anything later
    if (s.node.open()) {
      root(s.node); // nothing linked it so far; an incomplete span does not wait for a link
    }
    end(s, new Held(s, s.lastNs, null, null, reason));
  }

  /** Emits an ended span now when its trace id is decided, else holds it (bounded). */
  private void end(Stream s, Held h) {
    Node node = s.node;
    if (!node.undecided()) {
      emit(h, node);
      return;
    }
    node.held = h;
    if (held.size() >= maxPending) {
      linkOverflow.add(1);
      detach(node); // emitted now, as a root
      return;
    }
    held.add(node);
    if (s.side == Side.SERVER) {
      heldServers++;
    }
  }

  /** Keeps an ended stream findable: a client by its flow (flow links), a server by its key (StreamParents). */
  private void remember(Stream s, long endNs, long now) {
    if (linkWaitNs == 0 || maxPending == 0) {
      if (s.flow != null && s.side == Side.CLIENT) {
        inFlightClients.remove(s.flow);
      }
      return;
    }
    if (s.side == Side.SERVER) {
      Node n = s.node;
      long keyB = serverKeyB(s.key);
      if (n.undecided()) {
        recentServers.put(s.key.connection(), keyB, null, s.startNs, endNs, now + linkWaitNs, n, null, 0, 0, 0);
      } else {
        recentServers.put(s.key.connection(), keyB, null, s.startNs, endNs, now + linkWaitNs, null, null,
            n.traceIdHalf(0), n.traceIdHalf(1), n.spanIdBits());
      }
      return;
    }
    if (s.flow == null) {
      return;
    }
    ClientRecord rec = inFlightClients.remove(s.flow);
    if (rec == null) {
      return;
    }
    // kept link_wait after its end, and the remote extra wait more when other gospans may ask: an
    // open client span is decided link_wait after its start at the latest, and must be findable then
    rememberClient(s.flow, rec, endNs, now + Math.max(linkWaitNs, remoteWaitNs));
  }

  /**
   * Remembers the client stream {@code rec} of {@code flow}, ended at {@code endNs}, until {@code
   * keepUntil}: its node and stream while its trace id is undecided, else its ids as numbers.
   */
  private void rememberClient(FlowKey flow, ClientRecord rec, long endNs, long keepUntil) {
    Node n = rec.node();
    if (n.undecided()) {
      recentClients.put(flow.streamId(), 0, flow.clientEnd(), rec.startNs(), endNs, keepUntil, n, rec.stream(), 0, 0, 0);
    } else {
      recentClients.put(flow.streamId(), 0, flow.clientEnd(), rec.startNs(), endNs, keepUntil, null, null,
          n.traceIdHalf(0), n.traceIdHalf(1), n.spanIdBits());
    }
  }

  /** The remembered ended client stream of {@code flow}, or null. */
  private ClientRecord recentClient(FlowKey flow) {
    int slot = recentClients.find(flow.streamId(), 0, flow.clientEnd());
    if (slot < 0) {
      return null;
    }
    return new ClientRecord((Node) recentClients.node(slot), (Stream) recentClients.stream(slot), recentClients.startNs(slot),
        recentClients.endNs(slot), recentClients.retainUntil(slot), recentClients.traceIdHigh(slot),
        recentClients.traceIdLow(slot), recentClients.spanId(slot));
  }

  /** The remembered ended server stream {@code key}, or null. */
  private ServerRecord recentServer(StreamKey key) {
    int slot = recentServers.find(key.connection(), serverKeyB(key), null);
    if (slot < 0) {
      return null;
    }
    return new ServerRecord((Node) recentServers.node(slot), recentServers.startNs(slot), recentServers.endNs(slot),
        recentServers.retainUntil(slot), recentServers.traceIdHigh(slot), recentServers.traceIdLow(slot),
        recentServers.spanId(slot));
  }

  private static long serverKeyB(StreamKey key) {
    return ((long) key.pid() << 32) | (key.streamId() & 0xFFFFFFFFL);
  }

  private ClientRecord findClient(FlowKey flow, long serverStartNs) {
    ClientRecord c = inFlightClients.get(flow);
    if (c != null && c.covers(serverStartNs)) {
      return c;
    }
    c = recentClient(flow);
    return c != null && c.covers(serverStartNs) ? c : null;
  }

  // ------------------------------------------------------------------------------------ trace ids

  private void open(Node n, long now) {
    n.decideBy = now + linkWaitNs;
    n.inOpenNodes = true;
    openNodes.add(n);
    if (n.key.side() == Side.CLIENT) {
      openClients.put(n.key, n);
    }
  }

  private void leaveOpen(Node n) {
    if (n.inOpenNodes) {
      n.inOpenNodes = false;
      if (n.remoteWait) {
        remoteNodes.remove(n);
      } else {
        openNodes.remove(n);
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
   */
  private boolean link(Node child, Node parent, boolean inProcess, long linkNs) {
    for (Node p = parent; p != null && p.undecided(); p = p.parent) {
      if (p == child) {
        return false;
      }
    }
    leaveOpen(child);
    child.inProcess = inProcess;
    child.linkNs = linkNs;
    if (!parent.undecided()) {
      decide(child, parent.traceId, contextOf(parent, inProcess));
      return true;
    }
    child.parent = parent;
    if (parent.children == null) {
      parent.children = new ArrayList<>(2);
    }
    parent.children.add(child);
    return true;
  }

  /** Cuts an undecided node from its parent (if any) and decides it as a root, with what waits on it. */
  private void detach(Node n) {
    if (n.parent != null) {
      if (n.parent.children != null) {
        n.parent.children.remove(n);
      }
      n.parent = null;
    }
    root(n);
  }

  private void root(Node n) {
    decide(n, ids.generateTraceId(), SpanContext.getInvalid());
  }

  /** Decides {@code n}'s trace id, then those of every node waiting on it; emits the ended ones. */
  private void decide(Node n, String traceId, SpanContext parentContext) {
    n.traceId = traceId;
    n.parentContext = parentContext;
    if (n.children == null && n.held == null) { // most spans: decided at their start, nothing waits
      leaveOpen(n);
      n.parent = null;
      return;
    }
    ArrayDeque<Node> work = new ArrayDeque<>();
    work.add(n);
    while (!work.isEmpty()) {
      Node x = work.poll();
      leaveOpen(x);
      x.parent = null;
      if (x.held != null) {
        Held h = x.held;
        x.held = null;
        if (held.remove(x) && h.stream().side == Side.SERVER) {
          heldServers--;
        }
        emit(h, x);
      }
      if (x.children != null) {
        for (Node c : x.children) {
          if (c.parent == x && c.undecided()) {
            c.traceId = x.traceId;
            c.parentContext = contextOf(x, c.inProcess);
            work.add(c);
          }
        }
        x.children = null;
      }
    }
  }

  /** The parent context a child of {@code parent} carries: remote across processes, local inside one. */
  private static SpanContext contextOf(Node parent, boolean inProcess) {
    return inProcess
        ? SpanContext.create(parent.traceId, parent.spanId, TraceFlags.getSampled(), TraceState.getDefault())
        : SpanContext.createFromRemoteParent(parent.traceId, parent.spanId, TraceFlags.getSampled(), TraceState.getDefault());
  }

  private void emit(Held h, Node node) {
    Stream s = h.stream();
    TraceState state = s.remoteParent != null ? s.remoteParent.getTraceState() : TraceState.getDefault();
    SpanContext ctx = SpanContext.create(node.traceId, node.spanId, TraceFlags.getSampled(), state);
    GrpcStatus status = h.status();
    StatusData statusData = StatusData.unset();
    if (status != null && status.isError(s.side)) {
      statusData = StatusData.create(StatusCode.ERROR, h.message() != null ? h.message() : status.name());
    }
    if (s.side == Side.SERVER && s.remoteParent == null && node.parentContext.isValid()) {
      linked++;
    }
    long start = clock.toEpochNanos(s.startNs);
    long end = clock.toEpochNanos(Math.max(h.endNs(), s.startNs));
    AssembledSpan span =
        new AssembledSpan(
            s.fullMethod != null ? s.fullMethod : RpcAttributes.GRPC,
            s.side == Side.CLIENT ? SpanKind.CLIENT : SpanKind.SERVER,
            ctx,
            node.parentContext,
            statusData,
            start,
            end,
            attributes(s, status, h.incompleteReason()),
            s.resource != null ? s.resource : metadata.resource(s.pid));
    sink.accept(new FinishedSpan(span, s.pid, s.side, s.fullMethod, status, end - start));
  }

  // ------------------------------------------------------------------------------------ attributes

  /**
   * What a span's attributes are made of when it has no metadata, no truncated header and ended
   * complete: most spans. Spans of one method, status and connection share one {@link Attributes}.
   */
  private record AttributesKey(Side side, String fullMethod, GrpcStatus status, String authority, SocketPair sockets) {
    /** Written out, as {@link StreamKey#equals}: looked up for every span. */
    @Override
    public int hashCode() {
      return ((Objects.hashCode(fullMethod) * 31 + Objects.hashCode(authority)) * 31 + Objects.hashCode(sockets)) * 31
          + (status == null ? -1 : status.ordinal()) * 2 + side.ordinal();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof AttributesKey k && k.side == side && k.status == status
          && Objects.equals(k.fullMethod, fullMethod) && Objects.equals(k.authority, authority)
          && Objects.equals(k.sockets, sockets);
    }
  }

  private static final int ATTRIBUTES_CACHE_SIZE = 4096;

  /** Built attributes by {@link AttributesKey}, least recently used dropped first (under the lock). */
  private final LinkedHashMap<AttributesKey, Attributes> attributesCache =
      new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<AttributesKey, Attributes> eldest) {
          return size() > ATTRIBUTES_CACHE_SIZE;
        }
      };

  private Attributes attributes(Stream s, GrpcStatus status, String incompleteReason) {
    if (incompleteReason != null || s.truncated || !s.requestMetadata.isEmpty() || !s.responseMetadata.isEmpty()) {
      return buildAttributes(s, status, incompleteReason);
    }
    AttributesKey key = new AttributesKey(s.side, s.fullMethod, status, s.authority, s.sockets);
    Attributes a = attributesCache.get(key);
    if (a == null) {
      a = buildAttributes(s, status, null);
      attributesCache.put(key, a);
    }
    return a;
  }

  private Attributes buildAttributes(Stream s, GrpcStatus status, String incompleteReason) {
    AttributesBuilder b = Attributes.builder();
    semconv.putSpanAttributes(b, s.side, s.fullMethod, status);

    SocketPair.Endpoint serverEnd = null;
    SocketPair.Endpoint peer = null;
    if (s.sockets != null) {
      serverEnd = s.side == Side.CLIENT ? s.sockets.remote() : s.sockets.local();
      peer = s.sockets.remote();
    }
    String[] authority = splitAuthority(s.authority);
    if (authority != null) {
      b.put(RpcAttributes.SERVER_ADDRESS, authority[0]);
      if (authority[1] != null) {
        b.put(RpcAttributes.SERVER_PORT, Long.parseLong(authority[1]));
      }
    } else if (serverEnd instanceof SocketPair.Ip ip) {
      b.put(RpcAttributes.SERVER_ADDRESS, hostAddress(ip.address()));
      b.put(RpcAttributes.SERVER_PORT, (long) ip.address().getPort());
    } else if (serverEnd instanceof SocketPair.Unix u && !u.path().isEmpty()) {
      b.put(RpcAttributes.SERVER_ADDRESS, u.path());
    }
    if (peer instanceof SocketPair.Ip ip) {
      InetSocketAddress p = ip.address();
      b.put(RpcAttributes.NETWORK_PEER_ADDRESS, hostAddress(p));
      b.put(RpcAttributes.NETWORK_PEER_PORT, (long) p.getPort());
      b.put(RpcAttributes.NETWORK_TRANSPORT, "tcp");
      b.put(RpcAttributes.NETWORK_TYPE, p.getAddress() instanceof Inet6Address ? "ipv6" : "ipv4");
      if (s.side == Side.SERVER) {
        b.put(RpcAttributes.CLIENT_ADDRESS, hostAddress(p));
        b.put(RpcAttributes.CLIENT_PORT, (long) p.getPort());
      }
    } else if (peer instanceof SocketPair.Unix u) {
      // semantic conventions: a unix domain socket's name is its address; an unnamed end has none
      b.put(RpcAttributes.NETWORK_TRANSPORT, "unix");
      if (!u.path().isEmpty()) {
        b.put(RpcAttributes.NETWORK_PEER_ADDRESS, u.path());
        if (s.side == Side.SERVER) {
          b.put(RpcAttributes.CLIENT_ADDRESS, u.path());
        }
      }
      String local = ((SocketPair.Unix) s.sockets.local()).path();
      if (!local.isEmpty()) {
        b.put(RpcAttributes.NETWORK_LOCAL_ADDRESS, local);
      }
    }
    if (s.socketUnknown != null) {
      b.put(RpcAttributes.GOSPAN_CONNECTION_UNIDENTIFIED, s.socketUnknown);
    }
    semconv.putMetadata(b, true, s.requestMetadata);
    semconv.putMetadata(b, false, s.responseMetadata);
    if (s.truncated) {
      b.put(RpcAttributes.GOSPAN_HEADERS_TRUNCATED, true);
    }
    if (incompleteReason != null) {
      b.put(RpcAttributes.GOSPAN_INCOMPLETE, true);
      b.put(RpcAttributes.GOSPAN_INCOMPLETE_REASON, incompleteReason);
    }
    return b.build();
  }

  private void captureMetadata(Stream s, boolean request, HeaderField f) {
    String name = f.name();
    if (HeaderPolicy.mayExport(name, settings.allowHeaders())) {
      Map<String, List<String>> into = request ? s.requestMetadata : s.responseMetadata;
      if (into.isEmpty()) {
        into = new TreeMap<>();
        if (request) {
          s.requestMetadata = into;
        } else {
          s.responseMetadata = into;
        }
      }
      into.computeIfAbsent(name, k -> new ArrayList<>(1)).add(f.value());
    }
  }

  private static String hostAddress(InetSocketAddress a) {
    return a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
  }

  /** {@code pkg.Service/Method} from {@code /pkg.Service/Method}; {@code null} when it is not that shape. */
  static String fullMethod(String path) {
    if (path == null) {
      return null;
    }
    // the decoder hands the same String for a :path it has seen (its field cache): a span's method is
    // then not cut out of it again (a substring per span)
    int slot = System.identityHashCode(path) & (METHOD_SLOTS - 1);
    KnownMethod known = METHODS[slot];
    if (known != null && known.path == path) {
      return known.method;
    }
    String method = parseFullMethod(path);
    METHODS[slot] = new KnownMethod(path, method);
    return method;
  }

  private static final int METHOD_SLOTS = 256;
  /** Methods by their path's identity, direct-mapped; a slot is replaced whole (final fields: safe to race). */
  private static final KnownMethod[] METHODS = new KnownMethod[METHOD_SLOTS];

  private static final class KnownMethod {
    final String path;
    final String method;

    KnownMethod(String path, String method) {
      this.path = path;
      this.method = method;
    }
  }

  private static String parseFullMethod(String path) {
    if (path.length() < 4 || path.charAt(0) != '/') {
      return null;
    }
    int slash = path.indexOf('/', 1);
    if (slash <= 1 || slash == path.length() - 1 || path.indexOf('/', slash + 1) >= 0) {
      return null;
    }
    return path.substring(1);
  }

  /** [host, port-or-null] from an {@code :authority}; {@code null} when absent or unparseable. */
  static String[] splitAuthority(String authority) {
    if (authority == null || authority.isEmpty()) {
      return null;
    }
    String a = authority;
    int at = a.lastIndexOf('@');
    if (at >= 0) {
      a = a.substring(at + 1);
    }
    if (a.startsWith("[")) {
      int close = a.indexOf(']');
      if (close < 0) {
        return null;
      }
      String host = a.substring(1, close);
      String rest = a.substring(close + 1);
      return new String[] {host, rest.startsWith(":") && isPort(rest.substring(1)) ? rest.substring(1) : null};
    }
    int colon = a.lastIndexOf(':');
    if (colon >= 0 && a.indexOf(':') == colon) {
      String port = a.substring(colon + 1);
      return new String[] {a.substring(0, colon), isPort(port) ? port : null};
    }
    return new String[] {a, null};
  }

  private static boolean isPort(String s) {
    if (s.isEmpty() || s.length() > 5) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (!Character.isDigit(s.charAt(i))) {
        return false;
      }
    }
    int p = Integer.parseInt(s);
    return p > 0 && p <= 65535;
  }
}
