package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.StreamParent;
import io.grpc.Status;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Sampling in span assembly: one decision per trace, made when its trace id is final, given the
 * parent's decision, so a chain (front client → relay server → the relay's two calls → their
 * servers) is kept or dropped whole; spans not sampled still reach the sink, without their span,
 * for RED metrics.
 */
class SpanAssemblerSamplingTest {
  static final long MS = 1_000_000L;
  static final int FRONT = 100;
  static final int RELAY = 300;
  static final int BACK = 200;

  TestClock time;
  List<FinishedSpan> out;
  SpanAssembler assembler;
  Events hop1; // front -> relay
  Events hop2a; // relay -> back
  Events hop2b; // relay -> back, a second connection

  @BeforeEach
  void setUp() {
    time = new TestClock();
    hop1 = new Events(FRONT, RELAY, 0xc000_a100L, 0xc000_b100L, 41000).path("/test.Front/Call");
    hop2a = new Events(RELAY, BACK, 0xc000_a200L, 0xc000_b200L, 42000).path("/test.Back/A");
    hop2b = new Events(RELAY, BACK, 0xc000_a201L, 0xc000_b201L, 42001).path("/test.Back/B");
    out = new ArrayList<>();
    assembler = new SpanAssembler(
        new SpanAssembler.Settings(Duration.ofSeconds(30), 1000, Duration.ofSeconds(2), 1000, RpcSemconv.Mode.STABLE, Set.of()),
        MonotonicClock.of(time), new FakeMetadata(), SdkMeterProvider.builder().build().get("test"), out::add,
        seeded(36));
  }

  /** Ids from a seeded generator: the same trace ids, so the same decisions, on every run. */
  static IdGenerator seeded(long seed) {
    Random r = new Random(seed);
    return new IdGenerator() {
      @Override
      public String generateSpanId() {
        return io.opentelemetry.api.trace.SpanId.fromLong(r.nextLong() | 1);
      }

      @Override
      public String generateTraceId() {
        return io.opentelemetry.api.trace.TraceId.fromLongs(r.nextLong(), r.nextLong() | 1);
      }
    };
  }

  /** Call {@code i}: its streams {@code 2i+1}, 10 ms apart from the previous one, in the probes' order. */
  List<ProbeEvent> chain(int i) {
    int s = 2 * i + 1;
    long t = time.now;
    return List.of(
        hop1.clientStart(s, t),
        hop1.serverStart(s, t + MS),
        hop2a.streamParent(s, t + 2 * MS, hop1, s),
        hop2a.clientStart(s, t + 2 * MS),
        hop2b.streamParent(s, t + 3 * MS, hop1, s),
        hop2b.clientStart(s, t + 3 * MS),
        hop2a.serverStart(s, t + 4 * MS),
        hop2b.serverStart(s, t + 4 * MS),
        hop2a.serverTrailersOnly(s, t + 5 * MS, 0, null),
        hop2b.serverTrailersOnly(s, t + 5 * MS, 0, null),
        hop2a.clientTrailersOnly(s, t + 6 * MS, 0, null),
        hop2b.clientTrailersOnly(s, t + 6 * MS, 0, null),
        hop1.serverTrailersOnly(s, t + 7 * MS, 5, "gone"),
        hop1.clientTrailersOnly(s, t + 8 * MS, 5, "gone"));
  }

  /** The same call with its StreamParents first, then every end before its start, the children's before their parents'. */
  List<ProbeEvent> reordered(int i) {
    List<ProbeEvent> c = chain(i);
    List<ProbeEvent> r = new ArrayList<>(List.of(c.get(4), c.get(2)));
    for (int k = c.size() - 1; k >= 0; k--) {
      if (!(c.get(k) instanceof StreamParent)) {
        r.add(c.get(k));
      }
    }
    return r;
  }

  void feed(List<ProbeEvent> events) {
    events.forEach(assembler::accept);
  }

  void waitMillis(long ms) {
    time.advanceMillis(ms);
    assembler.expire();
  }

  /** The six spans of one call, all sampled or all not; returns which. */
  boolean whole(List<FinishedSpan> call) {
    assertThat(call).hasSize(6);
    boolean sampled = call.get(0).sampled();
    assertThat(call).as("one decision for the whole call").allSatisfy(f -> assertThat(f.sampled()).isEqualTo(sampled));
    if (sampled) {
      String trace = call.get(0).span().getTraceId();
      assertThat(call).allSatisfy(f -> assertThat(f.span().getTraceId()).isEqualTo(trace));
    }
    // RED metrics' facts are there either way
    assertThat(call).allSatisfy(f -> {
      assertThat(f.method()).isNotNull();
      assertThat(f.status()).isNotNull();
      assertThat(f.durationNanos()).isPositive();
    });
    assertThat(call.stream().filter(f -> f.pid() == RELAY && f.side() == Side.SERVER).findFirst().orElseThrow().status())
        .isEqualTo(Status.Code.NOT_FOUND);
    return sampled;
  }

  @Test
  void ratioKeepsOrDropsEachCallWholeAndAboutTheRatioOfThem() {
    assembler.sampler(Sampler.traceIdRatioBased(0.25));
    int calls = 2000;
    int kept = 0;
    for (int i = 0; i < calls; i++) {
      int before = out.size();
      if (i % 2 == 0) {
        feed(chain(i));
      } else {
        feed(reordered(i)); // ends first (held), children before their parents
        waitMillis(2_000);
      }
      waitMillis(10);
      if (whole(out.subList(before, out.size()))) {
        kept++;
      }
    }
    assertThat(assembler.heldServerSpans() + assembler.heldClientSpans()).isZero();
    assertThat(kept / (double) calls).isBetween(0.20, 0.30);
  }

  @Test
  void alwaysOffKeepsNoSpanButEveryCallReachesTheSink() {
    assembler.sampler(Sampler.alwaysOff());
    feed(chain(0));
    assertThat(whole(out)).isFalse();
  }

  @Test
  void parentBasedFollowsTheApplicationsTraceparentFlagThroughTheChain() {
    assembler.sampler(Sampler.parentBased(Sampler.alwaysOff()));
    feed(chain(0));
    assertThat(whole(out)).as("a root: parentbased_always_off drops it").isFalse();

    out.clear();
    hop1.withRequestHeader("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    feed(chain(1));
    assertThat(whole(out)).as("the application's parent is sampled").isTrue();
    assertThat(out.get(0).span().getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");

    out.clear();
    assembler.sampler(Sampler.parentBased(Sampler.alwaysOn()));
    hop1.extraRequest.clear();
    hop1.withRequestHeader("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    feed(chain(2));
    assertThat(whole(out)).as("the application's parent is not sampled").isFalse();
  }

  @Test
  void anotherGospanLearnsTheDecisionWithTheClientSpan() {
    // The front client is traced by one gospan, the relay by another: the relay's server span's
    // parent is the first one's client span, not sampled (its application's traceparent says so).
    // parentbased_always_on everywhere: were the decision not passed on, the relay would keep its spans.
    Sampler sampler = Sampler.parentBased(Sampler.alwaysOn());
    Events front = new Events(40000);
    Events relayCall = new Events(200, 300, 0xc000_a300L, 0xc000_b300L, 43000).path("/test.Back/A");
    for (boolean sampledFlag : new boolean[] {false, true}) {
      TestClock t = new TestClock();
      SpanAssemblerRemoteTest.Gospan client = new SpanAssemblerRemoteTest.Gospan(t, Set.of("10.0.0.1"));
      SpanAssemblerRemoteTest.Gospan server = new SpanAssemblerRemoteTest.Gospan(t, Set.of("10.0.0.2"));
      client.assembler.sampler(sampler);
      server.assembler.sampler(sampler);
      front.extraRequest.clear();
      if (!sampledFlag) {
        front.withRequestHeader("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
      }
      Events serverSide = new Events(40000); // the server sees no traceparent: the application sent none on
      long t0 = t.now;
      client.feed(front.clientStart(1, t0));
      server.feed(serverSide.serverStart(1, t0 + MS),
          relayCall.streamParent(1, t0 + 2 * MS, serverSide, 1), relayCall.clientStart(1, t0 + 2 * MS),
          relayCall.clientTrailersOnly(1, t0 + 3 * MS, 0, null),
          serverSide.serverTrailersOnly(1, t0 + 4 * MS, 0, null));
      client.feed(front.clientTrailersOnly(1, t0 + 5 * MS, 0, null));
      assertThat(server.out).as("held until the answer").isEmpty();
      ClientSpanAnswer a = client.assembler.clientSpan((ClientFlow) server.asked.get(0)[0], (Long) server.asked.get(0)[1], 0);
      assertThat(a.span().isSampled()).isEqualTo(sampledFlag);

      assertThat(server.answerFrom(client)).isEqualTo(1);
      assertThat(client.out).hasSize(1);
      assertThat(server.out).hasSize(2);
      assertThat(client.out.get(0).sampled()).isEqualTo(sampledFlag);
      assertThat(server.out).as("the relay's server span and its call: the client span's decision")
          .allSatisfy(f -> assertThat(f.sampled()).isEqualTo(sampledFlag));
      if (sampledFlag) {
        assertThat(server.only(SpanKind.SERVER).getParentSpanId()).isEqualTo(client.only(SpanKind.CLIENT).getSpanId());
      }
    }
  }
}
