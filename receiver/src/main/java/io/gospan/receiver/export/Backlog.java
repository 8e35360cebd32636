package io.gospan.receiver.export;

import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;

/**
 * Where {@link ExportQueue} keeps the batches the collector has not taken yet, oldest first,
 * bounded in bytes: {@link MemoryBacklog} or {@link DiskBacklog}. Not thread-safe: the queue calls
 * it under its own lock.
 */
interface Backlog extends AutoCloseable {
  /**
   * Stores {@code batch} after the ones stored before; to stay within the bound, drops the oldest
   * batches (or {@code batch} itself when it alone exceeds the bound).
   *
   * @return spans dropped to make room (0 when none)
   */
  long offer(List<SpanData> batch);

  /** The oldest batch ready to be sent, or {@code null}; the same batch until {@link #remove}. */
  List<SpanData> peek();

  /** Removes the batch {@link #peek} returned (sent, or refused by the collector). */
  void remove();

  /** Whether nothing is stored (also nothing that is not ready to be read yet). */
  boolean isEmpty();

  /** Spans stored now (on disk: those stored by this process; a previous run's files are not counted). */
  long spans();

  /** Bytes stored now (in memory: the estimate of {@link SpanSizes}; on disk: the files' size). */
  long bytes();

  /** Spans dropped since the last call that {@link #offer} did not return (on disk: a file found removed by age). */
  default long droppedElsewhere() {
    return 0;
  }

  /** Where it keeps the spans, for log lines ({@code memory} or the directory). */
  String where();

  /** Whether what is stored outlives the process. */
  boolean durable();

  @Override
  void close();
}
