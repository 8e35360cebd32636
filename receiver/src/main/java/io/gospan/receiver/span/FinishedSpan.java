package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import io.grpc.Status;
import io.opentelemetry.sdk.trace.data.SpanData;

/**
 * A span the assembler has finished, with the facts RED metrics need.
 *
 * @param span the span, ready for any {@code SpanExporter}; {@code null} when its trace was not
 *     sampled ({@code sampling.*}): only its RED facts are kept, nothing else of it is built
 * @param pid traced process
 * @param side client or server
 * @param method {@code pkg.Service/Method}, or {@code null} when {@code :path} was missing
 * @param status the gRPC status, {@code null} when the stream's end was never seen
 * @param durationNanos end − start
 */
public record FinishedSpan(SpanData span, int pid, Side side, String method, Status.Code status, long durationNanos) {

  /** Whether its trace was sampled: {@link #span} is set and goes to the exporter. */
  public boolean sampled() {
    return span != null;
  }

  /** Whether the stream's end was seen (otherwise the span carries {@code gospan.incomplete}). */
  public boolean complete() {
    return status != null;
  }
}
