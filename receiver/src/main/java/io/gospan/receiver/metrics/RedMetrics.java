package io.gospan.receiver.metrics;

import io.gospan.receiver.event.Side;
import io.gospan.receiver.span.FinishedSpan;
import io.gospan.receiver.span.RpcSemconv;
import io.grpc.Status;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.DoubleHistogramBuilder;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.resources.Resource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;

/**
 * RED metrics of the traced RPCs, per the RPC semantic conventions as {@link RpcSemconv} maps them:
 * in stable mode the {@code rpc.server.call.duration} and {@code rpc.client.call.duration}
 * histograms in seconds; in old mode {@code rpc.server.duration} / {@code rpc.client.duration} in
 * milliseconds; in dup mode both. Rate is the histogram count, errors the count by status.
 *
 * <p>Each traced process gets its own {@link SdkMeterProvider} carrying that process's resource
 * (so the metrics belong to the traced service, as its spans do), read by a pull reader with
 * cumulative temporality. The metrics leave through {@link Reader}s ({@link #reader}), each taken
 * before the first span is recorded: the OTLP export (added to each periodic export) and the
 * Prometheus reader behind {@code /metrics}; each sees every process's metrics. Only spans whose end
 * was seen are recorded (incomplete ones have no status).
 *
 * <p>A process that exited ({@link #forget}) keeps its metrics until every reader has collected
 * them once after {@code settle} since its exit (its calls still held for linking, up to {@code
 * streams.link_wait} and a remote answer's wait, have ended by then), or for at most {@code settle}
 * + {@link #EXITED_KEPT_NANOS} (a reader nobody calls, e.g. {@code /metrics} that is never scraped,
 * is not waited for longer): its last calls reach every reader that collects in that time, then they
 * go. A span of it that ends later still (timed out) is kept the same way, at most {@value
 * #EXITED_REMEMBERED} exited pids being remembered for that, so an exited process never leaves an
 * entry behind.
 */
public final class RedMetrics implements SpanMetrics {
  /** Seconds; the conventions' advice, with sub-millisecond buckets added for in-cluster gRPC. */
  static final List<Double> SECONDS_BUCKETS =
      List.of(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0,
          2.5, 5.0, 7.5, 10.0);
  static final List<Double> MILLIS_BUCKETS =
      List.of(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0,
          5000.0, 7500.0, 10000.0);

  private final RpcSemconv.Mode mode;
  private final IntFunction<Resource> resourceOf;
  static final int EXITED_REMEMBERED = 4096;
  /** How long an exited process's metrics wait for a reader that has not collected them: 2 min, two scrapes at Prometheus's default 1 min interval. */
  static final long EXITED_KEPT_NANOS = 120_000_000_000L;

  private final LongSupplier nanoTime;
  private final long settleNanos;
  /** One bit per reader taken ({@link #reader}). */
  private volatile int allReaders;

  private final Map<Integer, PerProcess> processes = new ConcurrentHashMap<>();
  /** Pids that exited (oldest first, bounded): an entry made for one of them goes once the readers collected it. */
  private final java.util.Set<Integer> exited = java.util.Collections.newSetFromMap(new java.util.LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> eldest) {
      return size() > EXITED_REMEMBERED;
    }
  });
  private volatile boolean closed;

  /**
   * @param mode which conventions to emit
   * @param resourceOf the resource of a traced process (e.g. {@code ProcessMetadata::resource})
   */
  public RedMetrics(RpcSemconv.Mode mode, IntFunction<Resource> resourceOf) {
    this(mode, resourceOf, Duration.ZERO);
  }

  /**
   * @param settle how long after a process's exit its spans may still end (held for linking): a
   *     reader's collection counts as its last only after that
   */
  public RedMetrics(RpcSemconv.Mode mode, IntFunction<Resource> resourceOf, Duration settle) {
    this(mode, resourceOf, settle, System::nanoTime);
  }

  /** With a monotonic clock in ns (tests). */
  RedMetrics(RpcSemconv.Mode mode, IntFunction<Resource> resourceOf, Duration settle, LongSupplier nanoTime) {
    this.mode = mode;
    this.resourceOf = resourceOf;
    this.settleNanos = settle.toNanos();
    this.nanoTime = nanoTime;
  }

  /**
   * A new reader of every process's metrics. Take every reader before the first {@link #record}:
   * an exited process's metrics go once the readers taken so far have collected them.
   *
   * @throws IllegalStateException more than 31 readers
   */
  public synchronized Reader reader() {
    int taken = Integer.bitCount(allReaders);
    if (taken == 31) {
      throw new IllegalStateException("at most 31 readers");
    }
    allReaders |= 1 << taken;
    return new Reader(1 << taken);
  }

  /** Records a finished span; incomplete spans are ignored. */
  @Override
  public void record(FinishedSpan f) {
    if (!f.complete() || closed) {
      return;
    }
    PerProcess p = processes.get(f.pid()); // first: computeIfAbsent's capturing lambda is an allocation per span
    if (p == null) {
      p = processes.computeIfAbsent(f.pid(), pid -> {
        PerProcess n = new PerProcess(resourceOf.apply(pid));
        synchronized (exited) {
          if (exited.contains(pid)) {
            n.exit(nanoTime.getAsLong());
          }
        }
        return n;
      });
    }
    boolean server = f.side() == Side.SERVER;
    CallAttributes a = callAttributes(f.side(), f.method(), f.status());
    if (mode.emitStable()) {
      (server ? p.serverSeconds : p.clientSeconds).record(f.durationNanos() / 1e9, a.stable);
    }
    if (mode.emitOld()) {
      (server ? p.serverMillis : p.clientMillis).record(f.durationNanos() / 1e6, a.old);
    }
  }

  private static final int CALL_ATTRIBUTE_SLOTS = 256;
  /**
   * The histograms' attributes by side, method and status, direct-mapped: a call's are built once,
   * not per span (building and sorting them was a fifth of the ring buffer thread's CPU per span at
   * 20,000 spans/s). A slot is replaced whole (final fields: safe to race).
   */
  private final CallAttributes[] callAttributes = new CallAttributes[CALL_ATTRIBUTE_SLOTS];

  private static final class CallAttributes {
    final Side side;
    final String method;
    final Status.Code status;
    final Attributes stable; // null unless mode.emitStable()
    final Attributes old; // null unless mode.emitOld()

    CallAttributes(Side side, String method, Status.Code status, Attributes stable, Attributes old) {
      this.side = side;
      this.method = method;
      this.status = status;
      this.stable = stable;
      this.old = old;
    }
  }

  private CallAttributes callAttributes(Side side, String method, Status.Code status) {
    int h = ((method == null ? 0 : method.hashCode()) * 31 + status.ordinal()) * 2 + side.ordinal();
    int slot = (h ^ (h >>> 16)) & (CALL_ATTRIBUTE_SLOTS - 1);
    CallAttributes known = callAttributes[slot];
    if (known != null && known.side == side && known.status == status && Objects.equals(known.method, method)) {
      return known;
    }
    CallAttributes a = new CallAttributes(side, method, status,
        mode.emitStable() ? RpcSemconv.stableMetricAttributes(side, method, status) : null,
        mode.emitOld() ? RpcSemconv.oldMetricAttributes(method, status) : null);
    callAttributes[slot] = a;
    return a;
  }

  /** A process exited: its metrics are kept until every reader has collected them after {@code settle}, then dropped. */
  @Override
  public void forget(int pid) {
    synchronized (exited) {
      exited.add(pid);
    }
    long now = nanoTime.getAsLong();
    PerProcess p = processes.get(pid);
    if (p != null) {
      p.exit(now);
    }
    dropExpired(now);
  }

  /** Drops the exited processes some reader has not collected within {@code settle} + {@link #EXITED_KEPT_NANOS}. */
  private void dropExpired(long now) {
    for (Map.Entry<Integer, PerProcess> e : processes.entrySet()) {
      PerProcess p = e.getValue();
      if (p.expired(now)) {
        drop(e.getKey(), p);
      }
    }
  }

  private void drop(int pid, PerProcess p) {
    if (processes.remove(pid, p)) {
      p.provider.close();
    }
  }

  /** A new process has {@code pid} (a pid that exited may be reused). */
  @Override
  public void processStarted(int pid) {
    synchronized (exited) {
      exited.remove(pid);
    }
  }

  /**
   * One reader of the RED metrics: its {@link #collect} returns every process's metrics
   * (cumulative). Readers may collect concurrently.
   */
  public final class Reader {
    private final int bit;

    private Reader(int bit) {
      this.bit = bit;
    }

    /** Every process's metrics; an exited process's go once every reader has collected them {@code settle} after its exit. */
    public Collection<MetricData> collect() {
      long now = nanoTime.getAsLong();
      int all = allReaders;
      List<MetricData> out = new ArrayList<>();
      for (Map.Entry<Integer, PerProcess> e : processes.entrySet()) {
        PerProcess p = e.getValue();
        boolean exitedBefore = p.exited;
        out.addAll(p.reader.collect());
        if (exitedBefore && (p.collectedBy(bit, all, now) || p.expired(now))) {
          drop(e.getKey(), p);
        }
      }
      return out;
    }
  }

  @Override
  public void close() {
    closed = true;
    processes.values().forEach(p -> p.provider.close());
    processes.clear();
  }

  private final class PerProcess {
    final PullReader reader = new PullReader();
    volatile boolean exited;
    private long exitedAt; // guarded by this
    private int collectedAfterExit; // readers' bits, guarded by this
    final SdkMeterProvider provider;
    final DoubleHistogram serverSeconds;
    final DoubleHistogram clientSeconds;
    final DoubleHistogram serverMillis;
    final DoubleHistogram clientMillis;

    PerProcess(Resource resource) {
      provider = SdkMeterProvider.builder().setResource(resource).registerMetricReader(reader).build();
      Meter meter = provider.get("io.gospan");
      serverSeconds =
          histogram(meter, RpcSemconv.SERVER_CALL_DURATION, "Measures the duration of inbound remote procedure calls.",
              RpcSemconv.STABLE_UNIT, SECONDS_BUCKETS);
      clientSeconds =
          histogram(meter, RpcSemconv.CLIENT_CALL_DURATION, "Measures the duration of outbound remote procedure calls.",
              RpcSemconv.STABLE_UNIT, SECONDS_BUCKETS);
      serverMillis = mode.emitOld()
          ? histogram(meter, RpcSemconv.OLD_SERVER_DURATION, "Measures the duration of inbound RPC.", RpcSemconv.OLD_UNIT,
              MILLIS_BUCKETS)
          : null;
      clientMillis = mode.emitOld()
          ? histogram(meter, RpcSemconv.OLD_CLIENT_DURATION, "Measures the duration of outbound RPC.", RpcSemconv.OLD_UNIT,
              MILLIS_BUCKETS)
          : null;
    }

    synchronized void exit(long now) {
      if (!exited) {
        exitedAt = now;
        collectedAfterExit = 0;
        exited = true;
      }
    }

    /** Notes that the reader {@code bit} collected at {@code now}; whether every reader in {@code all} has, settle after the exit. */
    synchronized boolean collectedBy(int bit, int all, long now) {
      if (now - exitedAt >= settleNanos) {
        collectedAfterExit |= bit;
      }
      return (collectedAfterExit & all) == all;
    }

    synchronized boolean expired(long now) {
      return exited && now - exitedAt > settleNanos + EXITED_KEPT_NANOS;
    }
  }

  private static DoubleHistogram histogram(Meter meter, String name, String description, String unit, List<Double> buckets) {
    DoubleHistogramBuilder b = meter.histogramBuilder(name).setDescription(description).setUnit(unit);
    return b.setExplicitBucketBoundariesAdvice(buckets).build();
  }

  /** Collects on demand; {@link Reader}s collect through it (cumulative, so each sees every call). */
  private static final class PullReader implements MetricReader {
    private volatile CollectionRegistration registration = CollectionRegistration.noop();

    @Override
    public void register(CollectionRegistration registration) {
      this.registration = registration;
    }

    Collection<MetricData> collect() {
      return registration.collectAllMetrics();
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
      return AggregationTemporality.CUMULATIVE;
    }

    @Override
    public CompletableResultCode forceFlush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}
