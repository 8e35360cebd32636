package io.gospan.receiver.span;

import io.opentelemetry.api.trace.SpanContext;
import java.util.Objects;

/**
 * What span assembly knows of the client span of a call another gospan asks about ({@link
 * SpanAssembler#clientSpan}).
 *
 * @param state whether the client span was found, and whether its trace id is final
 * @param span the client span's trace id and span id when {@link State#FOUND}, else invalid
 */
public record ClientSpanAnswer(State state, SpanContext span) {
  /** Found with a final trace id; seen but its trace id not final yet; not seen. */
  public enum State {
    FOUND,
    PENDING,
    UNKNOWN
  }

  static final ClientSpanAnswer PENDING = new ClientSpanAnswer(State.PENDING, SpanContext.getInvalid());
  static final ClientSpanAnswer UNKNOWN = new ClientSpanAnswer(State.UNKNOWN, SpanContext.getInvalid());

  public ClientSpanAnswer {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(span, "span");
  }
}
