package io.gospan.receiver.event;

import java.util.List;

/**
 * One probe hit: a block of HTTP/2 header fields written or received by a traced Go process.
 *
 * @param pid process id (in the namespace gospan runs in)
 * @param tid thread id
 * @param monotonicNs {@code bpf_ktime_get_ns()}, i.e. {@code CLOCK_MONOTONIC}; converted to epoch time by
 *     {@code io.gospan.receiver.span.MonotonicClock}
 * @param probe the probe that fired
 * @param side client or server end of the RPC
 * @param connectionId opaque per-process id of the {@code net.Conn} (its data pointer), 0 = unknown
 * @param fd socket file descriptor, -1 = unknown
 * @param sockets the connection's 4-tuple, {@code null} when unknown
 * @param streamId HTTP/2 stream id (unsigned 31-bit; restarts at 1 on every connection)
 * @param endStream the HEADERS frame carries END_STREAM (trailers, or trailers-only)
 * @param fields the captured header fields, in wire order
 * @param fieldsTruncated the frame had more fields than BPF captured
 * @param socketUnknown on a stream's start without {@code sockets}: why the connection's socket was not
 *     identified ({@code unknown_type}, {@code read_failed}, ...: {@code gospan.connection.unidentified}); else
 *     null
 */
public record HeaderEvent(
    int pid,
    int tid,
    long monotonicNs,
    ProbeKind probe,
    Side side,
    long connectionId,
    int fd,
    SocketPair sockets,
    int streamId,
    boolean endStream,
    List<HeaderField> fields,
    boolean fieldsTruncated,
    String socketUnknown)
    implements ProbeEvent {

  public HeaderEvent {
    fields = fields == null ? List.of() : List.copyOf(fields);
  }

  /** An event whose socket, when absent, was not asked for. */
  public HeaderEvent(int pid, int tid, long monotonicNs, ProbeKind probe, Side side, long connectionId, int fd,
      SocketPair sockets, int streamId, boolean endStream, List<HeaderField> fields, boolean fieldsTruncated) {
    this(pid, tid, monotonicNs, probe, side, connectionId, fd, sockets, streamId, endStream, fields, fieldsTruncated, null);
  }

  /** The first value of header {@code name} (lower case), or {@code null}. */
  public String header(String name) {
    HeaderField f = field(name);
    return f != null ? f.value() : null;
  }

  /**
   * Whether {@code content-type} is gRPC's: {@code application/grpc}, optionally followed by
   * {@code +proto}, {@code +json}, ... or parameters (gRPC over HTTP/2, "Requests").
   */
  public boolean grpcContentType() {
    String ct = header("content-type");
    return ct != null && (ct.equals("application/grpc") || ct.startsWith("application/grpc+") || ct.startsWith("application/grpc;"));
  }

  /** The first field named {@code name}, or {@code null}. */
  public HeaderField field(String name) {
    for (int i = 0, n = fields.size(); i < n; i++) { // no iterator: called several times per event
      HeaderField f = fields.get(i);
      if (f.name().equals(name)) {
        return f;
      }
    }
    return null;
  }
}
