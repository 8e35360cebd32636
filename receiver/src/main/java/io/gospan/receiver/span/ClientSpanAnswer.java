package io.gospan.receiver.span;

import io.opentelemetry.api.trace.SpanContext;
import java.util.Objects;

/**
 * What span assembly knows of the client span of a call another gospan asks about ({@link
 * SpanAssembler#clientSpan}).
 *
 * @param state whether the client span was found, and whether its trace id is final
 * @param span the client span's trace id and span id when {@link State#FOUND}, else invalid
 * @param finalByEpochNanos when {@link State#PENDING}: the latest time its trace id will be final
 *     (the end of the wait of the span its chain waits on), Unix epoch ns; else 0
 * @param readUpToEpochNanos when {@link State#UNKNOWN}: the time of the latest event span assembly
 *     has read (Unix epoch ns; 0 = none yet): a client span that started before it would have been
 *     seen (the ring buffer is read in order); else 0
 */
public record ClientSpanAnswer(State state, SpanContext span, long finalByEpochNanos, long readUpToEpochNanos) {
  /** Found with a final trace id; seen but its trace id not final yet; not seen. */
  public enum State {
    FOUND,
    PENDING,
    UNKNOWN
  }


  public ClientSpanAnswer {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(span, "span");
  }

  static ClientSpanAnswer pending(long finalByEpochNanos) {
    return new ClientSpanAnswer(State.PENDING, SpanContext.getInvalid(), finalByEpochNanos, 0);
  }

  static ClientSpanAnswer unknown(long readUpToEpochNanos) {
    return new ClientSpanAnswer(State.UNKNOWN, SpanContext.getInvalid(), 0, readUpToEpochNanos);
  }
}
