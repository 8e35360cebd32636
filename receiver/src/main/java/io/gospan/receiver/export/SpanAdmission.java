package io.gospan.receiver.export;

import io.gospan.receiver.span.TraceIdBits;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.internal.OtelEncodingUtils;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What enters the span processor's queue (the SDK's {@code BatchSpanProcessor}), decided per trace:
 * when the sidecar cannot keep up it refuses whole traces, not random spans of them.
 *
 * <p>Bounds: at most {@code exporter.batch.max_queue_size} spans and {@code
 * exporter.batch.max_queue_bytes} bytes wait between span assembly and the exporter. The bytes
 * are {@link SpanSizes}' estimate of the spans' heap: each span's own part, and each attribute
 * set once while any waiting span holds it (span assembly shares one set among the spans of a
 * method, status and connection; counted per span, the load benchmark's spans weighed ~1 KB each
 * instead of ~400 bytes, and the queue was "half full" at ~4,100 spans, 0.14 s at 30,000
 * spans/s). They are counted here when they enter and when the exporter is handed them, so the
 * processor's own queue (as large) never overflows and this class is where spans are dropped,
 * each counted in {@value #DROPPED}{@code {reason}}.
 *
 * <p>Pressure, and shedding: the sidecar is behind when that queue is {@value #SHED_FROM} full (in
 * spans or bytes) or the events span assembly reads have been {@value #LAG_SHED_MILLIS} ms old or
 * more for {@value #LAG_SHED_MILLIS} ms (the ring buffer's backlog, not one stall of the reader: an
 * event's timestamp is its probe hit, {@code bpf_ktime_get_ns}, the same {@code CLOCK_MONOTONIC}
 * as {@link System#nanoTime}). From then on every trace not seen
 * before is shed whole ({@code reason="shed"}, and once in {@value #TRACES_SHED}), while the traces
 * already admitted keep the headroom for their remaining spans; shedding stops, after at least
 * {@value #MIN_SHED_MILLIS} ms, once the queue is below {@value #SHED_UNTIL} full and an event is
 * read less than {@value #LAG_RESUME_MILLIS} ms old. Falling behind is logged at most every 30 s,
 * with the "caught up" line that ends it; the counts are in the report every 10 s.
 * A trace's decision is remembered by its trace id (every span of a trace carries it: span
 * assembly exports a span only once its trace id is final), in a table of {@value #DECISIONS}
 * slots (512 KiB) where a newer trace takes the slot of an older one: a trace whose spans reach
 * the queue more than a few seconds apart at full speed may be decided twice. A span of an
 * admitted trace that still finds the queue at its bound is dropped ({@code
 * reason="queue_full"}): that trace is then incomplete, counted.
 *
 * <p>Thread-safe: spans are offered by span assembly (the ring buffer thread and the assembler's
 * timer), taken by the processor's worker.
 */
final class SpanAdmission {
  private static final Logger log = LoggerFactory.getLogger(SpanAdmission.class);
  /** Counter: spans dropped before the span processor's queue, by {@code reason}: {@code shed}, {@code queue_full}. */
  static final String DROPPED = "gospan.spans.dropped";
  /** Counter: spans span assembly finished (before this admission). */
  static final String FINISHED = "gospan.spans.finished";
  /** Counter: traces refused whole while the sidecar was behind. */
  static final String TRACES_SHED = "gospan.traces.shed";
  static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
  static final double SHED_FROM = 0.5;
  static final double SHED_UNTIL = 0.25;
  static final long LAG_SHED_MILLIS = 200;
  static final long LAG_RESUME_MILLIS = 50;
  private static final long LAG_SHED_NANOS = TimeUnit.MILLISECONDS.toNanos(LAG_SHED_MILLIS);
  private static final long LAG_RESUME_NANOS = TimeUnit.MILLISECONDS.toNanos(LAG_RESUME_MILLIS);
  static final int DECISIONS = 1 << 16;
  /**
   * Shedding lasts at least this long once it starts: longer than one export at full speed (a
   * 2,048-span batch every ~0.1 s at 20,000 spans/s), so it does not flap with every export. It was
   * 1 s: a sidecar started under ~30,000 spans/s shed for exactly that second when its cold export
   * path fell behind for a fraction of it; at 250 ms it dropped ~3× fewer spans during the load
   * benchmark's warm-up (docs/benchmarks.md, "Warm-up shedding").
   */
  static final long MIN_SHED_MILLIS = 250;
  private static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(30);
  private static final Attributes SHED = Attributes.of(REASON, "shed");
  private static final Attributes QUEUE_FULL = Attributes.of(REASON, "queue_full");

  private final long minShedNanos;
  private final long maxSpans;
  private final long maxBytes;
  /** {@link #SHED_FROM} of {@link #maxSpans} and {@link #maxBytes}. */
  private final double shedFromSpans;
  private final double shedFromBytes;
  private final AtomicLong queuedSpans = new AtomicLong();
  private final AtomicLong queuedBytes = new AtomicLong();
  // totals since start, and what report() last logged
  private final AtomicLong shedSpans = new AtomicLong();
  private final AtomicLong shedTraces = new AtomicLong();
  private final AtomicLong fullSpans = new AtomicLong();
  private long reportedShedSpans;
  private long reportedShedTraces;
  private long reportedFullSpans;
  private final LongCounter dropped;
  private final LongCounter tracesShed;
  /** Spans offered ({@link #admit}), observed by the {@value #FINISHED} counter's callback (no series lookup per span). */
  private final AtomicLong finished = new AtomicLong();
  /**
   * The attribute sets of the spans waiting, by identity, with how many of them hold each: a set
   * is in {@link #queuedBytes} once while its count is above 0. Guarded by this.
   */
  private final IdentityHashMap<Attributes, int[]> attributeSets = new IdentityHashMap<>();
  /** Trace id hash with bit 0 the decision (1 = admitted); 0 = empty. Guarded by this. */
  private final long[] decisions = new long[DECISIONS];
  private volatile long lagNanos;
  /** Since when events are read {@value #LAG_SHED_MILLIS} ms or more late; 0: not late. */
  private volatile long lateSinceNanos;
  private boolean shedding; // guarded by this
  private long sheddingSinceNanos;
  private long loggedBehindNanos; // when "behind" was last said; 0: never
  private long shedAtLog;
  private boolean caughtUpToLog;

  SpanAdmission(long maxSpans, long maxBytes, Meter meter) {
    this(maxSpans, maxBytes, meter, MIN_SHED_MILLIS);
  }

  /** With another minimum shedding time (tests). */
  SpanAdmission(long maxSpans, long maxBytes, Meter meter, long minShedMillis) {
    this.minShedNanos = TimeUnit.MILLISECONDS.toNanos(minShedMillis);
    this.maxSpans = maxSpans;
    this.maxBytes = maxBytes;
    this.shedFromSpans = maxSpans * SHED_FROM;
    this.shedFromBytes = maxBytes * SHED_FROM;
    this.dropped = meter.counterBuilder(DROPPED).setUnit("{span}")
        .setDescription("Spans dropped before the span processor's queue: shed (a whole trace, the sidecar was behind),"
            + " queue_full (the queue's bound in spans or bytes)")
        .build();
    this.tracesShed = meter.counterBuilder(TRACES_SHED).setUnit("{trace}")
        .setDescription("Traces refused whole while the sidecar was behind").build();
    meter.counterBuilder(FINISHED).setUnit("{span}")
        .setDescription("Spans span assembly finished: exported, or dropped and counted on the way out")
        .buildWithCallback(m -> {
          long n = finished.get();
          if (n > 0) {
            m.record(n);
          }
        });
    meter.gaugeBuilder("gospan.spans.queued").ofLongs().setUnit("{span}")
        .setDescription("Spans waiting between span assembly and the exporter").buildWithCallback(m -> m.record(queuedSpans.get()));
    meter.gaugeBuilder("gospan.spans.queued.bytes").ofLongs().setUnit("By")
        .setDescription("Estimated heap of the spans waiting between span assembly and the exporter")
        .buildWithCallback(m -> m.record(queuedBytes.get()));
  }

  /**
   * The probe hit time ({@code CLOCK_MONOTONIC} ns) of the event span assembly just read: how far
   * behind the ring buffer's reader is. Timestamps more than a minute away from now are not taken
   * as a lag (a test's clock, or a clock gospan does not share). Any thread.
   */
  void eventRead(long monotonicNs) {
    eventRead(monotonicNs, System.nanoTime());
  }

  /** As {@link #eventRead(long)}, against {@code now}, a {@link System#nanoTime} read the caller made (one for a run of events). */
  void eventRead(long monotonicNs, long now) {
    long lag = now - monotonicNs;
    if (lag >= TimeUnit.MINUTES.toNanos(1) || lag <= -TimeUnit.SECONDS.toNanos(1)) {
      return;
    }
    lagNanos = lag;
    if (lag >= LAG_SHED_NANOS) {
      if (lateSinceNanos == 0) {
        lateSinceNanos = now | 1; // never 0
      }
    } else if (lag < LAG_RESUME_NANOS) {
      lateSinceNanos = 0;
    }
  }

  /** Whether events have been read late for {@value #LAG_SHED_MILLIS} ms: a backlog, not one stall. */
  private boolean late() {
    long since = lateSinceNanos;
    return since != 0 && System.nanoTime() - since >= LAG_SHED_NANOS;
  }

  /** Totals since start: {spans shed, traces shed, spans dropped at the bound}. */
  long[] totals() {
    return new long[] {shedSpans.get(), shedTraces.get(), fullSpans.get()};
  }

  /**
   * Whether {@code span} may enter the span processor's queue; if so it is counted there until the
   * exporter is handed it. A refusal is counted.
   */
  boolean admit(SpanData span) {
    finished.incrementAndGet();
    long size = SpanSizes.estimateWithoutAttributes(span);
    long hash;
    if (span instanceof TraceIdBits bits) { // span assembly's spans: the id as numbers already
      hash = mix(bits.traceIdHigh(), bits.traceIdLow());
    } else {
      String traceId = span.getSpanContext().getTraceId();
      hash = mix(OtelEncodingUtils.longFromBase16String(traceId, 0), OtelEncodingUtils.longFromBase16String(traceId, 16));
    }
    boolean keep;
    synchronized (this) {
      updateShedding();
      int slot = (int) (hash >>> 48) & (DECISIONS - 1);
      long entry = decisions[slot];
      if (entry != 0 && (entry | 1) == (hash | 1)) {
        keep = (entry & 1) != 0;
      } else {
        keep = !shedding;
        decisions[slot] = keep ? hash | 1 : hash & ~1L;
        if (!keep) {
          shedTraces.incrementAndGet();
          tracesShed.add(1);
        }
      }
      int[] holders = attributeSets.get(span.getAttributes());
      if (holders == null) {
        size += SpanSizes.attributes(span.getAttributes()); // the first waiting span to hold its set
      }
      if (keep && (queuedSpans.get() >= maxSpans || queuedBytes.get() + size > maxBytes)) {
        fullSpans.incrementAndGet();
        dropped.add(1, QUEUE_FULL);
        return false;
      }
      if (!keep) {
        shedSpans.incrementAndGet();
        dropped.add(1, SHED);
        return false;
      }
      if (holders == null) {
        attributeSets.put(span.getAttributes(), new int[] {1});
      } else {
        holders[0]++;
      }
      queuedSpans.incrementAndGet();
      queuedBytes.addAndGet(size);
      return true;
    }
  }

  /** Turns shedding on and off (under this). */
  private void updateShedding() {
    long spans = queuedSpans.get();
    long bytes = queuedBytes.get();
    if (!shedding && spans < shedFromSpans && bytes < shedFromBytes && lateSinceNanos == 0) {
      return; // admitting, and nothing says to stop: most spans (no division, no clock read)
    }
    double fill = Math.max(spans / (double) maxSpans, bytes / (double) maxBytes);
    long now = System.nanoTime();
    if (!shedding && (fill >= SHED_FROM || late())) {
      shedding = true;
      sheddingSinceNanos = now;
      if (loggedBehindNanos == 0 || now - loggedBehindNanos >= LOG_EVERY_NANOS) {
        loggedBehindNanos = now | 1;
        shedAtLog = shedTraces.get();
        log.warn("behind (span processor queue {}% full, events read {} ms after their probe hit): shedding new traces"
            + " whole until it catches up (counted in {}{reason=\"shed\"} and {}; said at most every {} s)",
            Math.round(fill * 100), TimeUnit.NANOSECONDS.toMillis(lagNanos), DROPPED, TRACES_SHED,
            TimeUnit.NANOSECONDS.toSeconds(LOG_EVERY_NANOS));
        caughtUpToLog = true;
      }
    } else if (shedding && now - sheddingSinceNanos >= minShedNanos && fill < SHED_UNTIL && lateSinceNanos == 0) {
      shedding = false;
      if (caughtUpToLog) {
        caughtUpToLog = false;
        log.info("caught up: {} trace(s) shed since it fell behind {} ms ago; admitting new traces again",
            shedTraces.get() - shedAtLog, TimeUnit.NANOSECONDS.toMillis(now - loggedBehindNanos));
      }
    }
  }

  /** The exporter behind the processor, counting the spans it is handed out of the queue. */
  SpanExporter tracking(SpanExporter delegate) {
    return new SpanExporter() {
      @Override
      public CompletableResultCode export(Collection<SpanData> spans) {
        long bytes = 0;
        synchronized (SpanAdmission.this) {
          for (SpanData s : spans) {
            bytes += SpanSizes.estimateWithoutAttributes(s); // what admit() added for it
            int[] holders = attributeSets.get(s.getAttributes());
            if (holders != null && --holders[0] == 0) { // the last waiting span to hold its set
              attributeSets.remove(s.getAttributes());
              bytes += SpanSizes.attributes(s.getAttributes());
            }
          }
          // under the lock, as admit() adds: report() then reads spans and bytes that belong together
          queuedSpans.addAndGet(-spans.size());
          queuedBytes.addAndGet(-bytes);
        }
        return delegate.export(spans);
      }

      @Override
      public CompletableResultCode flush() {
        return delegate.flush();
      }

      @Override
      public CompletableResultCode shutdown() {
        return delegate.shutdown();
      }

      @Override
      public String toString() {
        return delegate.toString();
      }
    };
  }

  /**
   * Logs the spans dropped here since the last call (one line: shed, with their traces, and
   * queue_full), if any; returns their number.
   */
  synchronized long report() {
    long shed = shedSpans.get() - reportedShedSpans;
    long traces = shedTraces.get() - reportedShedTraces;
    long full = fullSpans.get() - reportedFullSpans;
    reportedShedSpans += shed;
    reportedShedTraces += traces;
    reportedFullSpans += full;
    if (shed + full > 0 || traces > 0) {
      log.warn("span processor queue: dropped {} span(s) since the last report: {} shed ({} whole trace(s)), {} queue_full;"
          + " {} span(s) ({} bytes) waiting (counted in {}{reason} and {})", shed + full, shed, traces, full,
          queuedSpans.get(), queuedBytes.get(), DROPPED, TRACES_SHED);
    }
    return shed + full;
  }

  long queuedSpans() {
    return queuedSpans.get();
  }

  long queuedBytes() {
    return queuedBytes.get();
  }

  private static long mix(long hi, long lo) {
    long h = hi * 0x9E3779B97F4A7C15L ^ lo;
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    return h;
  }
}
