package io.gospan.receiver.link;

import io.gospan.receiver.link.proto.Answer;
import io.gospan.receiver.link.proto.Flow;
import io.gospan.receiver.link.proto.LinkGrpc;
import io.gospan.receiver.link.proto.LookupRequest;
import io.gospan.receiver.link.proto.LookupResponse;
import io.gospan.receiver.link.proto.Query;
import io.gospan.receiver.span.ClientFlow;
import io.gospan.receiver.span.ClientSpanAnswer;
import io.gospan.receiver.span.SpanAssembler;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The link service's server half: answers other gospans' questions from span assembly ({@link
 * SpanAssembler#clientSpan}). A question whose client span is known with a final trace id is
 * answered at once; one whose client span waits for its own parent ({@code PENDING}) is asked
 * again every {@link #tick} until it is final; one this gospan has not seen is answered not found
 * once span assembly has read an event from after the asker's server span's start (plus the clock
 * skew; the ring buffer is read in order, so the client span's start, before the server's, would
 * have been read), and at least {@value #UNSEEN_GRACE_MILLIS} ms after that start; else when the
 * question's wait is over (an idle or lagging reader). Only ids are answered, for the flow asked.
 *
 * <p>Thread-safe. The answers of one stream are written under that stream's lock; span assembly's
 * lock is taken inside it, never the other way round.
 */
final class LinkServer extends LinkGrpc.LinkImplBase {
  /** How long after the asker's server span started an unseen flow is answered not found (plus the clock skew). */
  static final long UNSEEN_GRACE_MILLIS = 250;
  /** Questions per message answered; more are answered not found (counted {@code malformed}). */
  static final int MAX_QUERIES_PER_REQUEST = 4096;

  private static final Attributes FOUND = Attributes.of(LinkMetrics.RESULT, "found");
  private static final Attributes NOT_FOUND = Attributes.of(LinkMetrics.RESULT, "not_found");
  private static final Attributes MALFORMED = Attributes.of(LinkMetrics.RESULT, "malformed");
  private static final Attributes OVERFLOW = Attributes.of(LinkMetrics.RESULT, "overflow");

  private final SpanAssembler assembler;
  private final long maxWaitNanos;
  private final long toleranceNanos;
  private final long unseenAfterNanos;
  /**
   * An interim answer is sent when the client span's trace id may be final later than this before
   * the asker stops waiting: the extra wait an answer is given ({@code LinkSettings.extraWait}, 500
   * ms by default). The trace id is final at the time span assembly names only once its timer has
   * run after it (every 100 ms, later on a loaded machine), then a tick here, the network and the
   * asker. With a 100 ms margin, on a loaded machine, 7 of 215 chains of LinkAcrossNamespacesIT's
   * slow-peer case and 8 of 200 of its malformed-answer case lost their last link: the asker
   * stopped waiting before the final answer came (counted unanswered {@code timeout}, or late).
   */
  private final long interimMarginNanos;
  private final int maxPending;
  private final LongSupplier epochNanos;
  private final LongCounter served;
  private final Set<Call> calls = ConcurrentHashMap.newKeySet();
  private final AtomicInteger pending = new AtomicInteger();
  private final Runnable wake;

  /**
   * @param wake asks for a {@link #tick} in about {@value LinkService#SERVER_TICK_MILLIS} ms (called
   *     when a question starts waiting; the tick asks again while questions wait)
   */
  LinkServer(LinkSettings s, SpanAssembler assembler, Meter meter, LongSupplier epochNanos, Runnable wake) {
    this.wake = wake;
    this.assembler = assembler;
    this.maxWaitNanos = s.linkWait().plus(s.extraWait()).toNanos();
    this.toleranceNanos = s.clockSkew().toNanos();
    this.unseenAfterNanos = toleranceNanos + UNSEEN_GRACE_MILLIS * 1_000_000L;
    this.interimMarginNanos = s.extraWait().toNanos();
    this.maxPending = s.maxPending();
    this.epochNanos = epochNanos;
    this.served = meter.counterBuilder(LinkMetrics.QUERIES_SERVED.metricName())
        .setDescription(LinkMetrics.QUERIES_SERVED.description()).build();
  }

  @Override
  public StreamObserver<LookupRequest> lookup(StreamObserver<LookupResponse> responses) {
    Call c = new Call((ServerCallStreamObserver<LookupResponse>) responses);
    calls.add(c);
    c.out.setOnCancelHandler(c::finish);
    return c;
  }

  /** Questions waiting for an answer now, over all streams. */
  int pending() {
    return pending.get();
  }

  /**
   * Asks span assembly again about every waiting question; answers what is known or over.
   *
   * @return whether questions still wait (tick again)
   */
  boolean tick() {
    long now = System.nanoTime();
    long epoch = epochNanos.getAsLong();
    for (Call c : calls) {
      c.recheck(now, epoch);
    }
    return pending.get() > 0;
  }

  /** Ends every stream (shutdown). */
  void closeAll() {
    for (Call c : calls) {
      c.finish();
    }
  }

  /** A question waiting here. */
  private static final class Pending {
    final Flow flow;
    final ClientFlow client;
    final long serverStart;
    long deadline; // System.nanoTime()
    long toldUntil; // the pending_until last sent, 0 = none

    Pending(Flow flow, ClientFlow client, long serverStart, long deadline) {
      this.flow = flow;
      this.client = client;
      this.serverStart = serverStart;
      this.deadline = deadline;
    }

    Flow flow() {
      return flow;
    }

    ClientFlow client() {
      return client;
    }

    long serverStart() {
      return serverStart;
    }

    long deadline() {
      return deadline;
    }
  }

  /** One asking peer's stream. */
  private final class Call implements StreamObserver<LookupRequest> {
    final ServerCallStreamObserver<LookupResponse> out;
    final List<Pending> waiting = new ArrayList<>();
    boolean done;

    Call(ServerCallStreamObserver<LookupResponse> out) {
      this.out = out;
    }

    @Override
    public void onNext(LookupRequest req) {
      long now = System.nanoTime();
      long epoch = epochNanos.getAsLong();
      long wait = Math.min(Integer.toUnsignedLong(req.getWaitMillis()) * 1_000_000L, maxWaitNanos);
      List<Answer> answers = new ArrayList<>();
      synchronized (this) {
        if (done) {
          return;
        }
        int n = 0;
        for (Query q : req.getQueriesList()) {
          ClientFlow flow = Flows.fromProto(q.getFlow());
          if (flow == null || ++n > MAX_QUERIES_PER_REQUEST) {
            served.add(1, MALFORMED);
            answers.add(notFound(q.getFlow(), q.getServerStartUnixNano()));
            continue;
          }
          Pending p = new Pending(q.getFlow(), flow, q.getServerStartUnixNano(), now + wait);
          if (resolve(p, now, epoch, answers)) {
            continue;
          }
          if (pending.incrementAndGet() > maxPending) {
            pending.decrementAndGet();
            served.add(1, OVERFLOW);
            answers.add(notFound(q.getFlow(), q.getServerStartUnixNano()));
            continue;
          }
          waiting.add(p);
        }
        send(answers);
      }
      if (!waiting.isEmpty()) {
        wake.run();
      }
    }

    synchronized void recheck(long now, long epoch) {
      if (done || waiting.isEmpty()) {
        return;
      }
      List<Answer> answers = new ArrayList<>();
      for (Iterator<Pending> it = waiting.iterator(); it.hasNext(); ) {
        if (resolve(it.next(), now, epoch, answers)) {
          it.remove();
          pending.decrementAndGet();
        }
      }
      send(answers);
    }

    /** Adds the answer to {@code p} when there is one now; returns whether it did. */
    private boolean resolve(Pending p, long now, long epoch, List<Answer> answers) {
      ClientSpanAnswer a = assembler.clientSpan(p.client(), p.serverStart(), toleranceNanos);
      if (a.state() == ClientSpanAnswer.State.FOUND) {
        served.add(1, FOUND);
        answers.add(Answer.newBuilder().setFlow(p.flow()).setServerStartUnixNano(p.serverStart()).setFound(true)
            .setTraceId(Flows.traceId(a.span())).setSpanId(Flows.spanId(a.span()))
            .setUnsampled(!a.span().isSampled()).build());
        return true;
      }
      if (a.state() == ClientSpanAnswer.State.PENDING) {
        // waits for its own parent. The final answer comes in time for the asker when its trace id
        // is final well before the asker stops waiting; else tell the asker until when (once per
        // new time), and wait that long here too.
        long until = a.finalByEpochNanos();
        if (now + (until - epoch) + interimMarginNanos - p.deadline <= 0) {
          return false;
        }
        p.deadline = Math.max(p.deadline, Math.min(now + (until - epoch) + maxWaitNanos, now + 4 * maxWaitNanos));
        if (until > p.toldUntil) {
          p.toldUntil = until;
          answers.add(Answer.newBuilder().setFlow(p.flow()).setServerStartUnixNano(p.serverStart()).setFound(false)
              .setPendingUntilUnixNano(until).build());
        }
        return false;
      }
      boolean unseen = a.state() == ClientSpanAnswer.State.UNKNOWN && epoch - p.serverStart() > unseenAfterNanos
          && a.readUpToEpochNanos() - p.serverStart() > toleranceNanos;
      if (unseen || now - p.deadline() >= 0) {
        served.add(1, NOT_FOUND);
        answers.add(notFound(p.flow(), p.serverStart()));
        return true;
      }
      return false;
    }

    private void send(List<Answer> answers) {
      if (answers.isEmpty() || done) {
        return;
      }
      try {
        out.onNext(LookupResponse.newBuilder().addAllAnswers(answers).build());
      } catch (RuntimeException e) { // the stream was cancelled meanwhile
        finish();
      }
    }

    @Override
    public void onError(Throwable t) {
      finish();
    }

    @Override
    public void onCompleted() {
      boolean wasDone;
      synchronized (this) {
        wasDone = done;
      }
      finish();
      if (!wasDone) {
        try {
          out.onCompleted();
        } catch (RuntimeException e) {
          // cancelled meanwhile
        }
      }
    }

    synchronized void finish() {
      if (done) {
        return;
      }
      done = true;
      pending.addAndGet(-waiting.size());
      waiting.clear();
      calls.remove(this);
    }
  }

  private static Answer notFound(Flow flow, long serverStart) {
    return Answer.newBuilder().setFlow(flow).setServerStartUnixNano(serverStart).setFound(false).build();
  }
}
