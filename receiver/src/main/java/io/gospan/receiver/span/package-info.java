/**
 * Span assembly: header events in, finished OpenTelemetry {@code SpanData} out.
 *
 * <ul>
 *   <li>{@link io.gospan.receiver.span.SpanAssembler} — the per-stream state machine, client→server
 *       linking, timeouts, bounds.
 *   <li>{@link io.gospan.receiver.span.MonotonicClock} — kernel monotonic time to epoch time.
 *   <li>{@link io.gospan.receiver.span.ProcessMetadata} / {@link io.gospan.receiver.span.ProcFsProcessMetadata}
 *       — the resource of each traced process.
 *   <li>{@link io.gospan.receiver.span.RpcAttributes} — the RPC semantic-convention attribute names.
 * </ul>
 */
package io.gospan.receiver.span;
