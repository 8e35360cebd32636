package io.gospan.receiver.probe;

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
 * @param side {@code enum gospan_side} ({@link GrpcConstants#SIDE_CLIENT}, ...)
 * @param flags {@code enum header_event_flags} ({@link GrpcConstants#EVENT_END_STREAM}, ...)
 * @param fieldCount header fields that follow
 * @param fd socket fd in pid, -1 unknown
 * @param connStatus {@code enum conn_status}: why a stream's start has no socket ({@link GrpcConstants#CONN_OK}, ...)
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

  private static final int TS = GrpcLayouts.HEADER_EVENT.offset("ts_ns");
  private static final int PID = GrpcLayouts.HEADER_EVENT.offset("pid");
  private static final int TID = GrpcLayouts.HEADER_EVENT.offset("tid");
  private static final int CONN = GrpcLayouts.HEADER_EVENT.offset("conn_id");
  private static final int STREAM = GrpcLayouts.HEADER_EVENT.offset("stream_id");
  private static final int PROBE = GrpcLayouts.HEADER_EVENT.offset("probe");
  private static final int SIDE = GrpcLayouts.HEADER_EVENT.offset("side");
  private static final int FLAGS = GrpcLayouts.HEADER_EVENT.offset("flags");
  private static final int FIELD_COUNT = GrpcLayouts.HEADER_EVENT.offset("field_count");
  private static final int FD = GrpcLayouts.HEADER_EVENT.offset("fd");
  private static final int CONN_STATUS = GrpcLayouts.HEADER_EVENT.offset("conn_status");
  private static final int EXE_DEV = GrpcLayouts.HEADER_EVENT.offset("exe") + GrpcLayouts.EXE_KEY.offset("dev");
  private static final int EXE_INO = GrpcLayouts.HEADER_EVENT.offset("exe") + GrpcLayouts.EXE_KEY.offset("ino");

  /** Bytes of the fixed part of a record: {@code offsetof(struct header_event, fields)}. */
  public static final int FIXED_SIZE = GrpcLayouts.HEADER_EVENT.offset("fields");

  /**
   * Decodes the fixed part of a record (little-endian buffer, position 0). A record holds the
   * fixed part and its {@code field_count} fields only (grpc.bpf.c sends the used part), then, with
   * {@link GrpcConstants#EVENT_SOCKET_PATH}, a {@code struct socket_path}.
   *
   * @throws IllegalArgumentException when the record is shorter than its fixed part
   */
  public static EventRecord decode(ByteBuffer b) {
    if (b.remaining() < FIXED_SIZE) {
      throw new IllegalArgumentException(
          "ring buffer record of " + b.remaining() + " bytes, the fixed part of struct header_event needs " + FIXED_SIZE);
    }
    return new EventRecord(
        b.getLong(TS),
        b.getInt(PID),
        b.getInt(TID),
        b.getLong(CONN),
        Integer.toUnsignedLong(b.getInt(STREAM)),
        Byte.toUnsignedInt(b.get(PROBE)),
        Byte.toUnsignedInt(b.get(SIDE)),
        Byte.toUnsignedInt(b.get(FLAGS)),
        Byte.toUnsignedInt(b.get(FIELD_COUNT)),
        b.getInt(FD),
        Byte.toUnsignedInt(b.get(CONN_STATUS)),
        new ExeKey(b.getLong(EXE_DEV), b.getLong(EXE_INO)));
  }

  public boolean endStream() {
    return (flags & GrpcConstants.EVENT_END_STREAM) != 0;
  }
}
