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
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.StatusData;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns {@link HeaderEvent}s into finished spans.
 *
 * <h2>Streams</h2>
 *
 * Every stream is keyed by (pid, connection, stream id, side): stream ids restart at 1 on every
 * connection. The connection is {@link HeaderEvent#connectionId()}, or the fd when that is unknown.
 * A client span starts at the client's {@code loopyWriter.writeHeader} (request headers) and ends
 * at {@code http2Client.operateHeaders} with END_STREAM (trailers or trailers-only); a server span
 * starts at {@code http2Server.operateHeaders} and ends at the server's {@code writeHeader} with
 * endStream. Headers in between (response headers) add attributes. A stream whose end is not seen
 * within {@code streams.timeout} of its start ends at the last event seen for it, marked {@code
 * gospan.incomplete=true} with a reason. At most {@code streams.max_in_flight} streams are tracked;
 * starts beyond that are counted ({@code gospan.streams.overflow}) and not traced.
 *
 * <h2>Parents</h2>
 *
 * A valid W3C {@code traceparent} in the request headers makes the span its child. Otherwise, a
 * server span whose connection gospan also saw from the client side (client 4-tuple = server
 * 4-tuple reversed, same stream id, server start within the client span) becomes the client span's
 * child. To link whatever order the two processes' events arrive in:
 *
 * <ul>
 *   <li>each client stream with a known 4-tuple is indexed by flow (4-tuple + stream id) while in
 *       flight, and for {@code streams.link_wait} after it ends (at most {@code
 *       streams.max_pending_links} ended ones, oldest forgotten first);
 *   <li>a server span that ends and finds its client there is emitted at once as its child;
 *   <li>one that finds nothing is held for up to {@code streams.link_wait} (at most {@code
 *       streams.max_pending_links} held; beyond that it is emitted unlinked and counted): a client
 *       start arriving in that time releases it as the client's child, otherwise it is emitted as a
 *       root span when the wait runs out.
 * </ul>
 *
 * So memory is bounded by {@code max_in_flight + 2 × max_pending_links} entries, and a server span
 * with no traced client is delayed by at most {@code link_wait}. End events that arrive before
 * their stream's start (reordered delivery) are likewise held for {@code link_wait}.
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
   * @param linkWait how long a server span waits for its client span; zero disables linking
   * @param maxPendingLinks ended client streams remembered, and server spans held, for linking
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
  private record StreamKey(int pid, long connection, int streamId, Side side) {}

  /** A client→server flow: the client's own end, the server's end, the stream id. */
  private record FlowKey(InetSocketAddress clientEnd, InetSocketAddress serverEnd, int streamId) {
    static FlowKey of(Side side, SocketPair s, int streamId) {
      if (s == null) {
        return null;
      }
      return side == Side.CLIENT
          ? new FlowKey(s.local(), s.remote(), streamId)
          : new FlowKey(s.remote(), s.local(), streamId);
    }
  }

  private record ClientRecord(String traceId, String spanId, long startNs, long endNs, long retainUntil) {
    boolean covers(long serverStartNs) {
      return serverStartNs >= startNs && serverStartNs <= endNs;
    }
  }

  private static final class Stream {
    final StreamKey key;
    final int pid;
    final Side side;
    final long startNs;
    final long deadline;
    long lastNs;
    final String path;
    final String fullMethod; // pkg.Service/Method, null when unknown
    final String authority;
    final SocketPair sockets;
    final FlowKey flow;
    final SpanContext remoteParent;
    final String spanId;
    final String traceId; // client spans and traceparent children; null = decided at the end
    final Map<String, List<String>> requestMetadata = new TreeMap<>();
    final Map<String, List<String>> responseMetadata = new TreeMap<>();
    String httpStatus;
    boolean truncated;

    Stream(StreamKey key, HeaderEvent e, long deadline, SpanContext remoteParent, String spanId, String traceId) {
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
      this.flow = FlowKey.of(e.side(), e.sockets(), e.streamId());
      this.remoteParent = remoteParent;
      this.spanId = spanId;
      this.traceId = traceId;
    }
  }

  /** A finished server span waiting for its client's start. */
  private record HeldServer(Stream stream, long endNs, GrpcStatus status, String message, long releaseAt) {}

  private record OrphanEnd(HeaderEvent event, long releaseAt) {}

  private final Settings settings;
  private final RpcSemconv semconv;
  private final MonotonicClock clock;
  private final ProcessMetadata metadata;
  private final SpanSink sink;
  private final IdGenerator ids;
  private final long timeoutNs;
  private final long linkWaitNs;

  private final LinkedHashMap<StreamKey, Stream> streams = new LinkedHashMap<>();
  private final Map<FlowKey, ClientRecord> inFlightClients = new HashMap<>();
  private final LinkedHashMap<FlowKey, ClientRecord> recentClients = new LinkedHashMap<>();
  private final LinkedHashMap<FlowKey, HeldServer> heldServers = new LinkedHashMap<>();
  private final LinkedHashMap<StreamKey, OrphanEnd> orphanEnds = new LinkedHashMap<>();
  private volatile int inFlightCount;

  private static final Map<ProbeKind, Attributes> PROBE_ATTRIBUTES = new java.util.EnumMap<>(ProbeKind.class);

  static {
    for (ProbeKind k : ProbeKind.values()) {
      PROBE_ATTRIBUTES.put(k, Attributes.of(AssemblyMetrics.PROBE, k.name().toLowerCase(Locale.ROOT)));
    }
  }

  private final LongCounter eventsRead;
  private final LongCounter malformed;
  private final LongCounter duplicate;
  private final LongCounter unmatched;
  private final LongCounter traceparentMalformed;
  private final LongCounter overflow;
  private final LongCounter incomplete;
  private final LongCounter linked;
  private final LongCounter linkOverflow;

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
    eventsRead = counter(meter, AssemblyMetrics.EVENTS_READ);
    malformed = counter(meter, AssemblyMetrics.EVENTS_MALFORMED);
    duplicate = counter(meter, AssemblyMetrics.EVENTS_DUPLICATE);
    unmatched = counter(meter, AssemblyMetrics.EVENTS_UNMATCHED);
    traceparentMalformed = counter(meter, AssemblyMetrics.TRACEPARENT_MALFORMED);
    overflow = counter(meter, AssemblyMetrics.STREAMS_OVERFLOW);
    incomplete = counter(meter, AssemblyMetrics.SPANS_INCOMPLETE);
    linked = counter(meter, AssemblyMetrics.SPANS_LINKED);
    linkOverflow = counter(meter, AssemblyMetrics.LINKS_OVERFLOW);
    meter
        .gaugeBuilder(AssemblyMetrics.STREAMS_IN_FLIGHT.metricName())
        .setDescription(AssemblyMetrics.STREAMS_IN_FLIGHT.description())
        .ofLongs()
        .buildWithCallback(r -> r.record(inFlightCount));
  }

  private static LongCounter counter(Meter meter, AssemblyMetrics m) {
    return meter.counterBuilder(m.metricName()).setDescription(m.description()).build();
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
   * Feeds the parent of a client stream (in-process propagation). Not used yet: the client span
   * stays a root.
   */
  public synchronized void accept(StreamParent p) {}

  /** Feeds one header event. Never blocks on export. */
  public synchronized void accept(HeaderEvent e) {
    long now = clock.monotonicNow();
    String problem = validate(e);
    if (problem != null) {
      malformed.add(1, Attributes.of(AssemblyMetrics.REASON, problem));
      return;
    }
    eventsRead.add(1, PROBE_ATTRIBUTES.get(e.probe()));
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

  /** Ends every stream of a connection that closed (their ends will not come). */
  public synchronized void connectionClosed(int pid, long connectionId) {
    endAll(s -> s.key.pid() == pid && s.key.connection() == connectionId, "connection_closed");
  }

  /** Ends every stream of a process that exited. */
  public synchronized void processExited(int pid) {
    endAll(s -> s.key.pid() == pid, "process_exited");
  }

  /** Ends timed-out streams, releases server spans whose link wait is over. */
  public void expire() {
    expire(clock.monotonicNow());
  }

  synchronized void expire(long now) {
    for (Iterator<Stream> it = streams.values().iterator(); it.hasNext(); ) {
      Stream s = it.next();
      if (s.deadline > now) {
        break;
      }
      it.remove();
      endIncomplete(s, "timeout", now);
    }
    for (Iterator<HeldServer> it = heldServers.values().iterator(); it.hasNext(); ) {
      HeldServer h = it.next();
      if (h.releaseAt() > now) {
        break;
      }
      it.remove();
      emitServer(h.stream(), h.endNs(), h.status(), h.message(), null);
    }
    for (Iterator<ClientRecord> it = recentClients.values().iterator(); it.hasNext(); ) {
      if (it.next().retainUntil() > now) {
        break;
      }
      it.remove();
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

  /** Ends everything now: in-flight streams as incomplete ({@code shutdown}), held server spans unlinked. */
  public synchronized void flush() {
    long now = clock.monotonicNow();
    endAll(s -> true, "shutdown");
    for (HeldServer h : List.copyOf(heldServers.values())) {
      emitServer(h.stream(), h.endNs(), h.status(), h.message(), null);
    }
    heldServers.clear();
    unmatched.add(orphanEnds.size());
    orphanEnds.clear();
    recentClients.clear();
    inFlightCount = 0;
    expire(now);
  }

  public synchronized int inFlight() {
    return streams.size();
  }

  public synchronized int heldServerSpans() {
    return heldServers.size();
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
          case HTTP2_SERVER_OPERATE_HEADERS, HTTP2_SERVER_PROCESS_HEADERS, HTTP2_SERVER_WRITE_RES_HEADERS -> e.side() == Side.SERVER;
        };
    return sideOk ? null : "probe_side_mismatch";
  }

  private static StreamKey keyOf(HeaderEvent e) {
    return new StreamKey(e.pid(), e.connectionId(), e.streamId(), e.side());
  }

  private static boolean isStart(HeaderEvent e) {
    return (e.probe() == ProbeKind.LOOPY_WRITER_WRITE_HEADER && e.side() == Side.CLIENT)
        || e.probe() == ProbeKind.HTTP2_SERVER_OPERATE_HEADERS
        || e.probe() == ProbeKind.HTTP2_SERVER_PROCESS_HEADERS;
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
    String traceId = null;
    if (remoteParent != null) {
      traceId = remoteParent.getTraceId();
    } else if (e.side() == Side.CLIENT) {
      traceId = ids.generateTraceId();
    }
    Stream s = new Stream(key, e, now + timeoutNs, remoteParent, ids.generateSpanId(), traceId);
    s.truncated = e.fieldsTruncated();
    for (HeaderField f : e.fields()) {
      s.truncated |= f.truncated();
      captureMetadata(s.requestMetadata, f);
    }
    streams.put(key, s);
    // Read the process's resource now, while it surely runs: a short-lived process of a known
    // binary (traced from its first call, never discovered) may exit before its span ends.
    metadata.resource(e.pid());

    if (s.side == Side.CLIENT && s.flow != null) {
      ClientRecord rec = new ClientRecord(s.traceId, s.spanId, s.startNs, Long.MAX_VALUE, Long.MAX_VALUE);
      inFlightClients.put(s.flow, rec);
      HeldServer held = heldServers.get(s.flow);
      if (held != null && rec.covers(held.stream().startNs)) {
        heldServers.remove(s.flow);
        emitServer(held.stream(), held.endNs(), held.status(), held.message(), rec);
      }
    }
    OrphanEnd orphan = orphanEnds.remove(key);
    if (orphan != null) {
      update(s, orphan.event(), now);
    }
  }

  private void update(Stream s, HeaderEvent e, long now) {
    s.lastNs = Math.max(s.lastNs, e.monotonicNs());
    s.truncated |= e.fieldsTruncated();
    for (HeaderField f : e.fields()) {
      s.truncated |= f.truncated();
      if (f.name().equals(":status")) {
        s.httpStatus = f.value();
      }
      captureMetadata(s.responseMetadata, f);
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
    String message = TraceHeaders.decodeGrpcMessage(e.header("grpc-message"));
    finish(s, Math.max(e.monotonicNs(), s.startNs), status, message, now);
  }

  private void holdOrphan(StreamKey key, HeaderEvent e, long now) {
    if (orphanEnds.size() >= Math.max(1, settings.maxPendingLinks())) {
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

  private void finish(Stream s, long endNs, GrpcStatus status, String message, long now) {
    if (s.side == Side.CLIENT) {
      emit(s, s.traceId, parentOf(s, null), endNs, status, message, null);
      retireClient(s, endNs, now);
      return;
    }
    if (s.remoteParent != null || s.flow == null || linkWaitNs == 0) {
      emitServer(s, endNs, status, message, null);
      return;
    }
    ClientRecord client = findClient(s);
    if (client != null) {
      emitServer(s, endNs, status, message, client);
    } else if (heldServers.size() < settings.maxPendingLinks()) {
      HeldServer previous = heldServers.remove(s.flow); // re-insert: the map stays in release order
      heldServers.put(s.flow, new HeldServer(s, endNs, status, message, now + linkWaitNs));
      if (previous != null) {
        // Two server streams with one flow key (a reused 4-tuple): release the older one unlinked.
        emitServer(previous.stream(), previous.endNs(), previous.status(), previous.message(), null);
      }
    } else {
      linkOverflow.add(1);
      emitServer(s, endNs, status, message, null);
    }
  }

  private void endIncomplete(Stream s, String reason, long now) {
    incomplete.add(1, Attributes.of(AssemblyMetrics.REASON, reason));
    if (s.side == Side.CLIENT) {
      emit(s, s.traceId, parentOf(s, null), s.lastNs, null, null, reason);
      retireClient(s, Long.MAX_VALUE, now);
    } else {
      ClientRecord client = s.remoteParent == null && s.flow != null ? findClient(s) : null;
      emit(s, traceIdOf(s, client), parentOf(s, client), s.lastNs, null, null, reason);
    }
  }

  private void retireClient(Stream s, long endNs, long now) {
    if (s.flow == null) {
      return;
    }
    ClientRecord rec = inFlightClients.remove(s.flow);
    if (rec == null || linkWaitNs == 0 || settings.maxPendingLinks() == 0) {
      return;
    }
    if (recentClients.size() >= settings.maxPendingLinks()) {
      Iterator<ClientRecord> oldest = recentClients.values().iterator();
      oldest.next();
      oldest.remove();
    }
    recentClients.remove(s.flow);
    recentClients.put(s.flow, new ClientRecord(rec.traceId(), rec.spanId(), rec.startNs(), endNs, now + linkWaitNs));
  }

  private ClientRecord findClient(Stream server) {
    ClientRecord c = inFlightClients.get(server.flow);
    if (c != null && c.covers(server.startNs)) {
      return c;
    }
    c = recentClients.get(server.flow);
    return c != null && c.covers(server.startNs) ? c : null;
  }

  private void emitServer(Stream s, long endNs, GrpcStatus status, String message, ClientRecord client) {
    if (client != null) {
      linked.add(1);
    }
    emit(s, traceIdOf(s, client), parentOf(s, client), endNs, status, message, null);
  }

  private String traceIdOf(Stream s, ClientRecord client) {
    if (s.traceId != null) {
      return s.traceId;
    }
    return client != null ? client.traceId() : ids.generateTraceId();
  }

  private static SpanContext parentOf(Stream s, ClientRecord client) {
    if (s.remoteParent != null) {
      return s.remoteParent;
    }
    if (client != null) {
      return SpanContext.createFromRemoteParent(
          client.traceId(), client.spanId(), TraceFlags.getSampled(), TraceState.getDefault());
    }
    return SpanContext.getInvalid();
  }

  private void emit(
      Stream s, String traceId, SpanContext parent, long endNs, GrpcStatus status, String message, String incompleteReason) {
    TraceState state = s.remoteParent != null ? s.remoteParent.getTraceState() : TraceState.getDefault();
    SpanContext ctx = SpanContext.create(traceId, s.spanId, TraceFlags.getSampled(), state);
    StatusData statusData = StatusData.unset();
    if (status != null && status.isError(s.side)) {
      statusData = StatusData.create(StatusCode.ERROR, message != null ? message : status.name());
    }
    long start = clock.toEpochNanos(s.startNs);
    long end = clock.toEpochNanos(Math.max(endNs, s.startNs));
    AssembledSpan span =
        new AssembledSpan(
            s.fullMethod != null ? s.fullMethod : RpcAttributes.GRPC,
            s.side == Side.CLIENT ? SpanKind.CLIENT : SpanKind.SERVER,
            ctx,
            parent,
            statusData,
            start,
            end,
            attributes(s, status, incompleteReason),
            metadata.resource(s.pid));
    sink.accept(new FinishedSpan(span, s.pid, s.side, s.fullMethod, status, end - start));
  }

  // ------------------------------------------------------------------------------------ attributes

  private Attributes attributes(Stream s, GrpcStatus status, String incompleteReason) {
    AttributesBuilder b = Attributes.builder();
    semconv.putSpanAttributes(b, s.side, s.fullMethod, status);

    InetSocketAddress serverEnd = null;
    InetSocketAddress peer = null;
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
    } else if (serverEnd != null) {
      b.put(RpcAttributes.SERVER_ADDRESS, hostAddress(serverEnd));
      b.put(RpcAttributes.SERVER_PORT, (long) serverEnd.getPort());
    }
    if (peer != null) {
      b.put(RpcAttributes.NETWORK_PEER_ADDRESS, hostAddress(peer));
      b.put(RpcAttributes.NETWORK_PEER_PORT, (long) peer.getPort());
      b.put(RpcAttributes.NETWORK_TRANSPORT, "tcp");
      b.put(RpcAttributes.NETWORK_TYPE, peer.getAddress() instanceof Inet6Address ? "ipv6" : "ipv4");
      if (s.side == Side.SERVER) {
        b.put(RpcAttributes.CLIENT_ADDRESS, hostAddress(peer));
        b.put(RpcAttributes.CLIENT_PORT, (long) peer.getPort());
      }
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

  private void captureMetadata(Map<String, List<String>> into, HeaderField f) {
    String name = f.name();
    if (HeaderPolicy.mayExport(name, settings.allowHeaders())) {
      into.computeIfAbsent(name, k -> new ArrayList<>(1)).add(f.value());
    }
  }

  private static String hostAddress(InetSocketAddress a) {
    return a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
  }

  /** {@code pkg.Service/Method} from {@code /pkg.Service/Method}; {@code null} when it is not that shape. */
  static String fullMethod(String path) {
    if (path == null || path.length() < 4 || path.charAt(0) != '/') {
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
