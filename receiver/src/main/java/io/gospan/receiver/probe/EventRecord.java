package io.gospan.receiver.probe;

import io.gospan.receiver.probe.GrpcStructs.HeaderEvent;
import java.nio.ByteBuffer;

/**
 * The fixed part of one {@code struct header_event} ring buffer record, as the BPF program
 * wrote it (no interpretation beyond unsigned widening).
 *
 * @param tsNs {@code bpf_ktime_get_ns()}, CLOCK_MONOTONIC, ns
 * @param pid thread group id
 * @param tid thread id
 * @param connId the {@code net.Conn} data pointer within pid, 0 unknown
 * @param streamId HTTP/2 stream id (unsigned 32-bit, as long)
 * @param probe {@code enum gospan_probe} ({@link GrpcProbe#ofId})
 * @param side {@code enum gospan_side} ({@link io.gospan.receiver.event.Side#of})
 * @param flags {@code enum header_event_flags} ({@link GrpcConstants#EVENT_END_STREAM}, ...)
 * @param fieldCount header fields that follow
 * @param fd socket fd in pid, -1 unknown
 * @param connStatus {@code enum conn_status}: why a stream's start has no socket ({@link ConnStatus#of})
 * @param exe the task's executable (device + inode)
 */
public record EventRecord(
    long tsNs,
    int pid,
    int tid,
    long connId,
    long streamId,
    int probe,
    int side,
    int flags,
    int fieldCount,
    int fd,
    int connStatus,
    ExeKey exe) {

  /** Bytes of the fixed part of a record: {@code offsetof(struct header_event, fields)}. */
  public static final int FIXED_SIZE = HeaderEvent.FIELDS;

  /**
   * Decodes the fixed part of a record (little-endian buffer, position 0). A record holds the
   * fixed part and its {@code field_count} fields only, packed (bpf/headers.bpf.h {@code pack_event}:
   * each 4 + value_len bytes, padded to 8), then, with {@link GrpcConstants#EVENT_SOCKET_PATH}, a
   * {@code struct socket_path} packed the same way ({@link HeaderEventDecoder} walks them).
   *
   * @throws IllegalArgumentException when the record is shorter than its fixed part
   */
  public static EventRecord decode(ByteBuffer b) {
    if (b.remaining() < FIXED_SIZE) {
      throw new IllegalArgumentException(
          "ring buffer record of " + b.remaining() + " bytes, the fixed part of struct header_event needs " + FIXED_SIZE);
    }
    return new EventRecord(
        HeaderEvent.tsNs(b, 0),
        HeaderEvent.pid(b, 0),
        HeaderEvent.tid(b, 0),
        HeaderEvent.connId(b, 0),
        Integer.toUnsignedLong(HeaderEvent.streamId(b, 0)),
        HeaderEvent.probe(b, 0),
        HeaderEvent.side(b, 0),
        HeaderEvent.flags(b, 0),
        HeaderEvent.fieldCount(b, 0),
        HeaderEvent.fd(b, 0),
        HeaderEvent.connStatus(b, 0),
        new ExeKey(GrpcStructs.ExeKey.dev(b, HeaderEvent.EXE), GrpcStructs.ExeKey.ino(b, HeaderEvent.EXE)));
  }

  public boolean endStream() {
    return (flags & GrpcConstants.EVENT_END_STREAM) != 0;
  }
}
