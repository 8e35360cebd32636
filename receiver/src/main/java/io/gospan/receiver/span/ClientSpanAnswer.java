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
 */
public record ClientSpanAnswer(State state, SpanContext span, long finalByEpochNanos) {
  /** Found with a final trace id; seen but its trace id not final yet; not seen. */
  public enum State {
    FOUND,
    PENDING,
    UNKNOWN
  }

  static final ClientSpanAnswer UNKNOWN = new ClientSpanAnswer(State.UNKNOWN, SpanContext.getInvalid(), 0);

  public ClientSpanAnswer {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(span, "span");
  }

  static ClientSpanAnswer pending(long finalByEpochNanos) {
    return new ClientSpanAnswer(State.PENDING, SpanContext.getInvalid(), finalByEpochNanos);
  }
}
