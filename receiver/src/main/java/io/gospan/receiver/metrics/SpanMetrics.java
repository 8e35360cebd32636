package io.gospan.receiver.metrics;

import io.gospan.receiver.span.FinishedSpan;

/**
 * What metrics of the traced calls are recorded from finished spans, per traced process: {@link
 * RedMetrics} when they go somewhere (OTLP with {@code metrics.enabled}, {@code /metrics} with
 * {@code metrics.prometheus}), {@link #noop()} otherwise.
 */
public interface SpanMetrics extends AutoCloseable {
  /** Records a finished span; incomplete spans are ignored. */
  void record(FinishedSpan f);

  /** A new process has {@code pid} (a pid that exited may be reused). */
  void processStarted(int pid);

  /** A process exited: its metrics are read once more, then dropped. */
  void forget(int pid);

  /** Drops every process's metrics; records nothing after. */
  @Override
  void close();

  /** Records nothing (no metrics go anywhere). */
  static SpanMetrics noop() {
    return NoopSpanMetrics.INSTANCE;
  }
}
