package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import io.grpc.Status;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.trace.data.StatusData;

/**
 * Turns an ended stream whose trace id is final into a {@link FinishedSpan} and hands it to the
 * {@link SpanSink}: name, kind, ids and parent, status (an error per {@link GrpcStatus#isError}),
 * epoch times ({@link MonotonicClock}), {@link SpanAttributes}, the process's resource (read at
 * the stream's start). A span whose trace was not sampled ({@link SpanIdentity#sampled}) goes
 * without its span: only the facts RED metrics need. Counts server spans linked to a client span ({@link
 * AssemblyMetrics#SPANS_LINKED}).
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason);
 * the sink is called under it.
 */
final class SpanEmitter implements TraceDecisions.Emitter {
  private final MonotonicClock clock;
  private final ProcessMetadata metadata;
  private final SpanAttributes attributes;
  private final SpanSink sink;
  private final AssemblyCounters counters;

  SpanEmitter(MonotonicClock clock, ProcessMetadata metadata, SpanAttributes attributes, SpanSink sink,
      AssemblyCounters counters) {
    this.clock = clock;
    this.metadata = metadata;
    this.attributes = attributes;
    this.sink = sink;
    this.counters = counters;
  }

  @Override
  public void emit(EndedSpan h, SpanIdentity node) {
    TracedStream s = h.stream();
    Status.Code status = h.status();
    if (s.side == Side.SERVER && s.remoteParent == null && node.parentContext.isValid()) {
      counters.serverSpanLinked();
    }
    if (!node.sampled) { // its trace is not exported: only what RED metrics need, no attributes, no SpanData
      sink.accept(new FinishedSpan(null, s.pid, s.side, s.fullMethod, status, Math.max(h.endNs(), s.startNs) - s.startNs));
      return;
    }
    TraceState state = s.remoteParent != null ? s.remoteParent.getTraceState() : TraceState.getDefault();
    SpanContext ctx = node.context(TraceFlags.getSampled(), state, false);
    StatusData statusData = StatusData.unset();
    if (status != null && GrpcStatus.isError(status, s.side)) {
      statusData = StatusData.create(StatusCode.ERROR, h.message() != null ? h.message() : status.name());
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
            attributes.of(s, status, h.incompleteReason()),
            s.resource != null ? s.resource : metadata.resource(s.pid),
            node.traceIdHigh,
            node.traceIdLow);
    sink.accept(new FinishedSpan(span, s.pid, s.side, s.fullMethod, status, end - start));
  }
}
