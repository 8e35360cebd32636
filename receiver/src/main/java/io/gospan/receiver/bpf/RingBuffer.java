package io.gospan.receiver.bpf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jnr.constants.platform.Errno;
import jnr.ffi.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer of a {@code BPF_MAP_TYPE_RINGBUF} map ({@code ring_buffer__new/__poll/__free}).
 * {@link #poll} runs the handler on the calling thread for each record; one thread polls.
 */
public final class RingBuffer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RingBuffer.class);

  /** Receives ring buffer records. */
  @FunctionalInterface
  public interface RecordHandler {
    /**
     * One record. {@code record} is a little-endian view valid only during this call (its
     * bytes are reused for the next record); copy what must outlive it.
     */
    void onRecord(ByteBuffer record);
  }

  private final BpfMap map;
  private final RecordHandler handler;
  /** Strongly referenced for as long as libbpf may call it (until ring_buffer__free). */
  private final LibbpfNative.SampleFn sampleFn;
  private byte[] scratch = new byte[4096];
  /** The view handed to the handler, over {@code scratch}: one object for every record, not one per record. */
  private ByteBuffer view = ByteBuffer.wrap(scratch).order(ByteOrder.LITTLE_ENDIAN);
  private Pointer rb;
  private long handlerFailures;

  private RingBuffer(BpfMap map, RecordHandler handler) {
    this.map = map;
    this.handler = handler;
    this.sampleFn = this::sample;
    Libbpf libbpf = map.object().libbpf();
    try (Libbpf.LogCapture log = Libbpf.captureLog()) {
      Pointer p = libbpf.lib.ring_buffer__new(map.fd(), sampleFn, null, null);
      if (p == null) {
        throw BpfException.of("opening ring buffer " + map.name(), libbpf.lastErrno(), log.text());
      }
      this.rb = p;
    }
  }

  /**
   * Opens a consumer on a loaded ring buffer map.
   *
   * @throws BpfException when the map is not a ring buffer or libbpf fails
   */
  public static RingBuffer open(BpfMap map, RecordHandler handler) {
    if (map.type() != BpfMap.BPF_MAP_TYPE_RINGBUF) {
      throw new BpfException("map " + map.name() + " is not a ring buffer (type " + map.type() + ")", Errno.EINVAL.intValue());
    }
    return new RingBuffer(map, handler);
  }

  /**
   * Waits up to {@code timeoutMs} for records and hands each available one to the handler.
   *
   * @return number of records consumed (0 on timeout or when interrupted by a signal)
   * @throws BpfException on an epoll error
   */
  public int poll(int timeoutMs) {
    ensureOpen();
    int n = map.object().libbpf().lib.ring_buffer__poll(rb, timeoutMs);
    if (n == -4) { // EINTR: a signal arrived, not an error
      return 0;
    }
    if (n < 0) {
      throw BpfException.of("polling ring buffer " + map.name(), -n, null);
    }
    return n;
  }

  /** Hands every record available now to the handler without waiting. */
  public int consume() {
    ensureOpen();
    int n = map.object().libbpf().lib.ring_buffer__consume(rb);
    if (n < 0) {
      throw BpfException.of("consuming ring buffer " + map.name(), -n, null);
    }
    return n;
  }

  /** Records whose handler threw (the record is dropped, polling goes on). */
  public long handlerFailures() {
    return handlerFailures;
  }

  private int sample(Pointer ctx, Pointer data, long size) {
    try {
      int n = (int) size;
      if (scratch.length < n) {
        scratch = new byte[Math.max(n, scratch.length * 2)];
        view = ByteBuffer.wrap(scratch).order(ByteOrder.LITTLE_ENDIAN);
      }
      data.get(0, scratch, 0, n);
      view.clear().limit(n); // position 0, limit n: the record; absolute reads are record offsets
      handler.onRecord(view);
    } catch (RuntimeException e) {
      // Never unwind into native code; never stop consuming because of one record.
      handlerFailures++;
      if (handlerFailures == 1 || Long.bitCount(handlerFailures) == 1) {
        LOG.warn("ring buffer {} handler failed ({} so far)", map.name(), handlerFailures, e);
      }
    }
    return 0;
  }

  private void ensureOpen() {
    if (rb == null) {
      throw new IllegalStateException("ring buffer " + map.name() + " is closed");
    }
  }

  /** Frees the consumer. Idempotent. */
  @Override
  public void close() {
    if (rb != null) {
      map.object().libbpf().lib.ring_buffer__free(rb);
      rb = null;
    }
  }
}
