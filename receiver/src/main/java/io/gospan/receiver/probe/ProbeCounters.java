package io.gospan.receiver.probe;

/**
 * The BPF-side counters of one probe ({@code enum gospan_counter}), summed over CPUs, since the
 * object was loaded.
 *
 * @param hits the program ran
 * @param eventsSent records submitted to the ring buffer
 * @param ringBufferFull records lost because the ring buffer was full
 * @param readFailed user memory reads that faulted
 * @param noOffsets hits in an executable with no offsets entry
 * @param unknownItab connections of a type that could not be unwrapped to a socket
 * @param fieldTruncated header values cut or header fields left out
 * @param skipped hits that needed no record: response headers that do not end the stream, when
 *     no extra header names are captured
 */
public record ProbeCounters(
    long hits,
    long eventsSent,
    long ringBufferFull,
    long readFailed,
    long noOffsets,
    long unknownItab,
    long fieldTruncated,
    long skipped) {

  /** Number of counters per probe (COUNTER_COUNT). */
  public static final int COUNT = 8;

  static ProbeCounters of(long[] c) {
    return new ProbeCounters(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
  }
}
