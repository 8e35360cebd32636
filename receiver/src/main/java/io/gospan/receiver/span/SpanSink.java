package io.gospan.receiver.span;

/** Receives every span the assembler finishes. Called with the assembler's lock held: must not block. */
@FunctionalInterface
public interface SpanSink {
  void accept(FinishedSpan span);
}
