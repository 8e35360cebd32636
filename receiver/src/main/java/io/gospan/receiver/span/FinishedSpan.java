package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import io.grpc.Status;
import io.opentelemetry.sdk.trace.data.SpanData;

/**
 * A span the assembler has finished, with the facts RED metrics need.
 *
 * @param span the span, ready for any {@code SpanExporter}
 * @param pid traced process
 * @param side client or server
 * @param method {@code pkg.Service/Method}, or {@code null} when {@code :path} was missing
 * @param status the gRPC status, {@code null} when the stream's end was never seen
 * @param durationNanos end − start
 */
public record FinishedSpan(SpanData span, int pid, Side side, String method, Status.Code status, long durationNanos) {

  /** Whether the stream's end was seen (otherwise the span carries {@code gospan.incomplete}). */
  public boolean complete() {
    return status != null;
  }
}
