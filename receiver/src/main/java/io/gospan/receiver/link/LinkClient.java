package io.gospan.receiver.link;

import io.gospan.receiver.link.proto.Answer;
import io.gospan.receiver.link.proto.LinkGrpc;
import io.gospan.receiver.link.proto.LookupRequest;
import io.gospan.receiver.link.proto.LookupResponse;
import io.gospan.receiver.link.proto.Query;
import io.gospan.receiver.logging.LogLimiter;
import io.gospan.receiver.span.ClientFlow;
import io.gospan.receiver.span.RemoteLinks;
import io.gospan.receiver.span.SpanAssembler;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.SpanContext;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The link service's client half, span assembly's {@link RemoteLinks}: a server span's question
 * goes to the gospan at its client's address (port {@link LinkSettings#peerPort()}), queued and
 * sent with the other questions for that peer every {@link LinkSettings#batchInterval()} on one
 * long-lived stream per peer. Answers are validated (the flow and server start of a question
 * asked of that peer, a 16-byte trace id and an 8-byte span id, neither all zero; anything else
 * is ignored and counted) and handed to {@link SpanAssembler#remoteParent} or {@link
 * SpanAssembler#remoteNotFound}; questions without an answer within their wait are given up
 * ({@code timeout}: the server span is a root at the end of its own wait).
 *
 * <p>A peer that cannot be reached or refuses (the stream fails: connection refused, no route,
 * TLS refused, not a gospan) is counted and backed off, 1 s doubling up to 60 s, reset by an
 * answer: questions for it are not queued meanwhile ({@code skipped}). Nothing here blocks span
 * assembly: {@link #lookup} only queues; sending and answers run on the link thread and grpc-java's.
 *
 * <p>Thread-safe: one lock over the peers; span assembly is called only outside it.
 */
public final class LinkClient implements RemoteLinks, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LinkClient.class);
  static final long MIN_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);
  static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(60);
  /** A peer without questions this long has its stream and channel closed. */
  static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(60);
  /** At most one log line about unreachable peers this often; the next says how many were left out. */
  static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(30);

  private static final Attributes BACKED_OFF = Attributes.of(LinkMetrics.REASON, "peer_backed_off");
  private static final Attributes OVERFLOW = Attributes.of(LinkMetrics.REASON, "overflow");
  private static final Attributes TIMEOUT = Attributes.of(LinkMetrics.REASON, "timeout");
  private static final Attributes NOT_FOUND = Attributes.of(LinkMetrics.REASON, "not_found");
  private static final Attributes PEER_FAILED = Attributes.of(LinkMetrics.REASON, "peer_failed");
  private static final Attributes BAD_FLOW = Attributes.of(LinkMetrics.REASON, "bad_flow");
  private static final Attributes UNASKED = Attributes.of(LinkMetrics.REASON, "unasked");
  private static final Attributes BAD_IDS = Attributes.of(LinkMetrics.REASON, "bad_ids");
  private static final Attributes BAD_WAIT = Attributes.of(LinkMetrics.REASON, "bad_wait");
  /** The latest pending_until taken: this far after now (an answerer's longer wait is not believed). */
  static final long MAX_PENDING_AHEAD_NANOS = TimeUnit.SECONDS.toNanos(60);

  private final LinkSettings settings;
  private final SpanAssembler assembler;
  private final OwnAddresses own;
  private final Function<InetSocketAddress, ManagedChannel> channels;
  private final Function<InetAddress, InetSocketAddress> peerAddress;
  private final Runnable wake;
  private final long waitNanos;

  private final LongCounter sent;
  private final LongCounter answered;
  private final LongCounter unanswered;
  private final LongCounter skipped;
  private final LongCounter unreachable;
  private final LongCounter linked;
  private final LongCounter malformed;
  private final LongCounter late;

  private final Object lock = new Object();
  private final LinkedHashMap<InetAddress, Peer> peers = new LinkedHashMap<>(16, 0.75f, true);
  private int pendingCount;
  private final LogLimiter unreachableLog = LogLimiter.everyNanos(LOG_EVERY_NANOS);
  private boolean closed;

  /**
   * @param channels opens the channel to a peer's link service (plaintext or TLS, as configured)
   * @param peerAddress where the link service of the gospan at a client address is (that address,
   *     {@link LinkSettings#peerPort()})
   * @param wake asks for a {@link #tick} in about {@link LinkSettings#batchInterval()} (called when a
   *     question is queued; the tick asks again while questions wait)
   */
  LinkClient(LinkSettings settings, SpanAssembler assembler, OwnAddresses own, Meter meter,
      Function<InetSocketAddress, ManagedChannel> channels, Function<InetAddress, InetSocketAddress> peerAddress,
      Runnable wake) {
    this.wake = wake;
    this.settings = settings;
    this.assembler = assembler;
    this.own = own;
    this.channels = channels;
    this.peerAddress = peerAddress;
    this.waitNanos = settings.linkWait().plus(settings.extraWait()).toNanos();
    this.sent = counter(meter, LinkMetrics.LOOKUPS_SENT);
    this.answered = counter(meter, LinkMetrics.LOOKUPS_ANSWERED);
    this.unanswered = counter(meter, LinkMetrics.LOOKUPS_UNANSWERED);
    this.skipped = counter(meter, LinkMetrics.LOOKUPS_SKIPPED);
    this.unreachable = counter(meter, LinkMetrics.PEERS_UNREACHABLE);
    this.linked = counter(meter, LinkMetrics.SPANS_LINKED);
    this.malformed = counter(meter, LinkMetrics.ANSWERS_MALFORMED);
    this.late = counter(meter, LinkMetrics.ANSWERS_LATE);
  }

  private static LongCounter counter(Meter m, LinkMetrics i) {
    return m.counterBuilder(i.metricName()).setDescription(i.description()).build();
  }

  @Override
  public boolean isLocal(InetAddress address) {
    return own.contains(address);
  }

  @Override
  public long extraWaitNanos() {
    return settings.extraWait().toNanos();
  }

  @Override
  public boolean lookup(ClientFlow flow, long serverStartEpochNanos) {
    synchronized (lock) {
      if (closed) {
        return false;
      }
      long now = System.nanoTime();
      InetAddress ip = flow.client().getAddress();
      Peer p = peers.get(ip);
      if (p == null) {
        p = new Peer(ip);
        peers.put(ip, p);
        evictBeyondBound();
      }
      if (p.backedOff(now)) {
        skipped.add(1, BACKED_OFF);
        return false;
      }
      if (pendingCount >= settings.maxPending()) {
        skipped.add(1, OVERFLOW);
        return false;
      }
      pendingCount++;
      p.queued.add(new Question(flow, serverStartEpochNanos, now + waitNanos));
      p.lastUsed = now;
    }
    wake.run();
    return true;
  }

  /** Questions queued or waiting for an answer now. */
  public int pending() {
    synchronized (lock) {
      return pendingCount;
    }
  }

  /** Peers with state now (a channel, or a back-off to remember). */
  public int peers() {
    synchronized (lock) {
      return peers.size();
    }
  }

  /**
   * Sends each peer's queued questions in one message, gives up questions whose wait is over,
   * closes idle peers. Runs on the link thread every {@link LinkSettings#batchInterval()} while
   * questions wait (and once a minute, for idle peers).
   *
   * @return whether questions still wait (tick again)
   */
  boolean tick() {
    synchronized (lock) {
      if (closed) {
        return false;
      }
      long now = System.nanoTime();
      for (Iterator<Peer> it = peers.values().iterator(); it.hasNext(); ) {
        Peer p = it.next();
        expire(p, now);
        if (!p.queued.isEmpty()) {
          send(p, now);
        }
        if (p.queued.isEmpty() && p.asked.isEmpty() && now - p.lastUsed > IDLE_NANOS && !p.backedOff(now)) {
          p.close();
          it.remove();
        }
      }
      return pendingCount > 0;
    }
  }

  private void expire(Peer p, long now) {
    for (Iterator<Question> it = p.asked.values().iterator(); it.hasNext(); ) {
      if (now - it.next().deadline >= 0) {
        it.remove();
        pendingCount--;
        unanswered.add(1, TIMEOUT);
      }
    }
    for (Iterator<Question> it = p.queued.iterator(); it.hasNext(); ) {
      if (now - it.next().deadline >= 0) {
        it.remove();
        pendingCount--;
        unanswered.add(1, TIMEOUT);
      }
    }
  }

  private void send(Peer p, long now) {
    if (p.stream == null) {
      if (p.backedOff(now)) {
        return;
      }
      p.open();
      if (p.stream == null) { // failed at once: backed off, its questions dropped and counted
        return;
      }
    }
    LookupRequest.Builder req = LookupRequest.newBuilder();
    long wait = 0;
    for (Question q : p.queued) {
      req.addQueries(Query.newBuilder().setFlow(Flows.toProto(q.flow)).setServerStartUnixNano(q.serverStart));
      wait = Math.max(wait, q.deadline - now);
      p.asked.put(q.key(), q);
    }
    int n = p.queued.size();
    p.queued.clear();
    req.setWaitMillis((int) Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(wait)));
    try {
      p.stream.onNext(req.build());
      sent.add(n);
    } catch (RuntimeException e) { // the call ended meanwhile: its onError says why
      log.debug("link: sending to {} failed: {}", p.ip.getHostAddress(), e.toString());
      sent.add(n);
    }
  }

  /** Closes the least recently asked peers beyond {@link LinkSettings#maxPeers()}. */
  private void evictBeyondBound() {
    for (Iterator<Peer> it = peers.values().iterator(); peers.size() > settings.maxPeers() && it.hasNext(); ) {
      Peer p = it.next();
      int lost = p.queued.size() + p.asked.size();
      pendingCount -= lost;
      unanswered.add(lost, PEER_FAILED);
      p.close();
      it.remove();
    }
  }

  /** Ends every stream and channel; questions still waiting are given up (their spans are released by span assembly's flush). */
  @Override
  public void close() {
    List<Peer> all;
    synchronized (lock) {
      closed = true;
      all = new ArrayList<>(peers.values());
      peers.clear();
      pendingCount = 0;
    }
    for (Peer p : all) {
      p.close();
    }
  }

  /** A peer's text (a status description) made safe for one log line: control characters escaped, at most 200 characters. */
  static String printable(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length() && b.length() < 200; i++) {
      char c = s.charAt(i);
      if (Character.isISOControl(c) || Character.getType(c) == Character.FORMAT
          || Character.getType(c) == Character.UNASSIGNED || Character.isSurrogate(c)) {
        b.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  // --------------------------------------------------------------------------------- answers

  private record Key(ClientFlow flow, long serverStart) {}

  private static final class Question {
    final ClientFlow flow;
    final long serverStart;
    long deadline;

    Question(ClientFlow flow, long serverStart, long deadline) {
      this.flow = flow;
      this.serverStart = serverStart;
      this.deadline = deadline;
    }

    Key key() {
      return new Key(flow, serverStart);
    }
  }

  /** What an answer does: a parent ({@code parent}), not found (neither), or a longer wait ({@code until} > 0). */
  private record Result(Question q, SpanContext parent, long until) {}

  /** One peer gospan: its channel, its stream, its questions. Guarded by {@code lock}. */
  private final class Peer {
    final InetAddress ip;
    final List<Question> queued = new ArrayList<>();
    final Map<Key, Question> asked = new LinkedHashMap<>();
    ManagedChannel channel;
    ClientCallStreamObserver<LookupRequest> stream;
    long backoffUntil; // with backedOff
    boolean backedOff;
    int failures;
    long lastUsed = System.nanoTime();

    Peer(InetAddress ip) {
      this.ip = ip;
    }

    boolean backedOff(long now) {
      if (backedOff && now - backoffUntil >= 0) {
        backedOff = false;
      }
      return backedOff;
    }

    void open() {
      if (channel == null) {
        channel = channels.apply(peerAddress.apply(ip));
      }
      // beforeStart makes it this peer's stream before the call starts: a failure reported at
      // once (in this thread, under the lock) is then taken as this stream's
      LinkGrpc.newStub(channel).lookup(new Responses(this));
    }

    void close() {
      if (stream != null) {
        try {
          stream.cancel("gospan link: peer closed", null);
        } catch (RuntimeException e) {
          // ended already
        }
        stream = null;
      }
      if (channel != null) {
        channel.shutdownNow();
        channel = null;
      }
    }
  }

  /** The answers of one stream to one peer. */
  private final class Responses implements ClientResponseObserver<LookupRequest, LookupResponse> {
    final Peer peer;
    ClientCallStreamObserver<LookupRequest> requests;

    Responses(Peer peer) {
      this.peer = peer;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<LookupRequest> requestStream) {
      this.requests = requestStream;
      peer.stream = requestStream; // under the lock: Peer.open runs in tick()
    }

    @Override
    public void onNext(LookupResponse response) {
      List<Result> results = new ArrayList<>();
      synchronized (lock) {
        if (peer.stream != requests) {
          return; // a stream given up
        }
        peer.failures = 0;
        for (Answer a : response.getAnswersList()) {
          ClientFlow flow = Flows.fromProto(a.getFlow());
          if (flow == null) {
            malformed.add(1, BAD_FLOW);
            continue;
          }
          Key key = new Key(flow, a.getServerStartUnixNano());
          Question q = peer.asked.get(key);
          if (q == null) {
            malformed.add(1, UNASKED);
            continue;
          }
          if (!a.getFound() && a.getPendingUntilUnixNano() != 0) {
            long epoch = LinkService.epochNanos();
            long until = a.getPendingUntilUnixNano();
            if (until - epoch > MAX_PENDING_AHEAD_NANOS) {
              malformed.add(1, BAD_WAIT);
              continue;
            }
            // its trace id is final by then: keep asking until then, plus the margin the answer needs
            q.deadline = Math.max(q.deadline, System.nanoTime() + Math.max(0, until - epoch) + settings.extraWait().toNanos());
            results.add(new Result(q, null, until + settings.extraWait().toNanos()));
            continue;
          }
          SpanContext parent = null;
          if (a.getFound()) {
            parent = Flows.span(a.getTraceId(), a.getSpanId(), !a.getUnsampled());
            if (parent == null) {
              malformed.add(1, BAD_IDS); // ignored: the question waits on
              continue;
            }
          }
          peer.asked.remove(key);
          pendingCount--;
          results.add(new Result(q, parent, 0));
        }
      }
      for (Result r : results) { // outside the lock: span assembly calls lookup() under its own
        if (r.until() != 0) {
          assembler.remoteWaitUntil(r.q().flow, r.q().serverStart, r.until());
          continue;
        }
        if (r.parent() == null) {
          unanswered.add(1, NOT_FOUND);
          assembler.remoteNotFound(r.q().flow, r.q().serverStart);
          continue;
        }
        answered.add(1);
        if (assembler.remoteParent(r.q().flow, r.q().serverStart, r.parent())) {
          linked.add(1);
        } else {
          late.add(1);
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      ended(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      ended(Status.UNAVAILABLE.withDescription("the peer ended the stream"));
    }

    private void ended(Status status) {
      synchronized (lock) {
        if (peer.stream != requests || closed) {
          return;
        }
        peer.stream = null;
        int lost = peer.asked.size();
        peer.asked.clear();
        pendingCount -= lost;
        unanswered.add(lost, PEER_FAILED);
        if (status.getCode() == Status.Code.CANCELLED) {
          return;
        }
        unreachable.add(1);
        long backoff = Math.min(MAX_BACKOFF_NANOS, MIN_BACKOFF_NANOS << Math.min(peer.failures, 6));
        peer.failures++;
        long now = System.nanoTime();
        peer.backoffUntil = now + backoff;
        peer.backedOff = true;
        int dropped = peer.queued.size();
        peer.queued.clear();
        pendingCount -= dropped;
        skipped.add(dropped, BACKED_OFF);
        if (peer.channel != null) {
          peer.channel.shutdownNow();
          peer.channel = null;
        }
        long unlogged = unreachableLog.admit(now);
        if (unlogged >= 0) {
          log.warn("link: the gospan at {}:{} does not answer ({}{}); not asking it for {} s{}; counted in {}",
              peer.ip.getHostAddress(), settings.peerPort(), status.getCode(),
              status.getDescription() != null ? ": " + printable(status.getDescription()) : "",
              TimeUnit.NANOSECONDS.toSeconds(backoff),
              unlogged > 0 ? " (" + unlogged + " more such failures since the last line)" : "",
              LinkMetrics.PEERS_UNREACHABLE.metricName());
        }
      }
    }
  }
}
