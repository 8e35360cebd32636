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

  /** The counters of one probe, indexed by {@code enum gospan_counter}. */
  static ProbeCounters of(long[] c) {
    return new ProbeCounters(
        c[GrpcConstants.COUNTER_HITS],
        c[GrpcConstants.COUNTER_EVENTS_SENT],
        c[GrpcConstants.COUNTER_RINGBUF_FULL],
        c[GrpcConstants.COUNTER_READ_FAILED],
        c[GrpcConstants.COUNTER_NO_OFFSETS],
        c[GrpcConstants.COUNTER_UNKNOWN_ITAB],
        c[GrpcConstants.COUNTER_FIELD_TRUNCATED],
        c[GrpcConstants.COUNTER_SKIPPED]);
  }
}
