/**
 * Span assembly: header events in, finished OpenTelemetry {@code SpanData} out.
 *
 * <ul>
 *   <li>{@link io.gospan.receiver.span.SpanAssembler} — the per-stream state machine, client→server
 *       linking, timeouts, bounds: a locked façade over package-private parts, one job each, all
 *       confined to its lock (its class comment lists them: the stream table, the flow index, the
 *       trace-id decisions, in-process parent links, held spans, attributes, counters).
 *   <li>{@link io.gospan.receiver.span.MonotonicClock} — kernel monotonic time to epoch time.
 *   <li>{@link io.gospan.receiver.span.ProcessMetadata} / {@link io.gospan.receiver.span.ProcFsProcessMetadata}
 *       — the resource of each traced process.
 *   <li>{@link io.gospan.receiver.span.RpcAttributes} — the RPC semantic-convention attribute names;
 *       {@link io.gospan.receiver.span.RpcSemconv} — the mapping of a call to them (stable, old,
 *       dup), for spans and RED metrics.
 *   <li>{@link io.gospan.receiver.span.AssemblyMetrics} — the counters span assembly records on the
 *       {@code Meter} it is given.
 * </ul>
 *
 * <p>Depends on {@code io.gospan.receiver.event} and the OpenTelemetry API (plus the SDK's {@code
 * SpanData} types, {@code IdGenerator} and {@code Resource}) only; docs/architecture.md, "Package
 * graph".
 */
package io.gospan.receiver.span;
