package io.gospan.receiver.span;

import io.grpc.Status;

/**
 * How a stream ended: its end (event time, ns), gRPC status and message ({@code null} when not
 * seen), and why it ended without its end event ({@code null} when it did not). Emitted with the
 * stream's {@link SpanIdentity} once its trace id is final ({@link SpanEmitter}), held until then
 * ({@link HeldSpans}).
 */
record EndedSpan(TracedStream stream, long endNs, Status.Code status, String message, String incompleteReason) {}
