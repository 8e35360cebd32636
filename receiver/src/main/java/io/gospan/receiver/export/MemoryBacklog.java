package io.gospan.receiver.export;

import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.ArrayDeque;
import java.util.List;

/** The export queue in memory: a FIFO of batches bounded by the spans' estimated heap size ({@link SpanSizes}). */
final class MemoryBacklog implements Backlog {
  private record Entry(List<SpanData> spans, long bytes) {}

  private final long maxBytes;
  private final ArrayDeque<Entry> batches = new ArrayDeque<>();
  private long bytes;
  private long spans;

  MemoryBacklog(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  @Override
  public long offer(List<SpanData> batch) {
    long size = SpanSizes.estimate(batch);
    if (size > maxBytes) {
      return batch.size();
    }
    long dropped = 0;
    while (bytes + size > maxBytes && !batches.isEmpty()) {
      Entry oldest = batches.pollFirst();
      bytes -= oldest.bytes();
      spans -= oldest.spans().size();
      dropped += oldest.spans().size();
    }
    batches.addLast(new Entry(batch, size));
    bytes += size;
    spans += batch.size();
    return dropped;
  }

  @Override
  public List<SpanData> peek() {
    Entry e = batches.peekFirst();
    return e == null ? null : e.spans();
  }

  @Override
  public void remove() {
    Entry e = batches.pollFirst();
    if (e != null) {
      bytes -= e.bytes();
      spans -= e.spans().size();
    }
  }

  @Override
  public boolean isEmpty() {
    return batches.isEmpty();
  }

  @Override
  public long spans() {
    return spans;
  }

  @Override
  public long bytes() {
    return bytes;
  }

  @Override
  public String where() {
    return "memory";
  }

  @Override
  public boolean durable() {
    return false;
  }

  @Override
  public void close() {}
}
