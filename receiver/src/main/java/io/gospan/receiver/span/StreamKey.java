package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.Side;

/**
 * A stream, by the connection's Go object (its address) and stream id. Only a stream's start
 * carries the connection's 4-tuple (the probes read the socket once per stream, grpc.bpf.c),
 * so it is not part of the key: Go may allocate a new connection at the address of a closed
 * one, and a start whose 4-tuple differs from the in-flight stream with its key ends that
 * stream (its connection is gone).
 */
record StreamKey(int pid, long connection, int streamId, Side side) {
  static StreamKey of(HeaderEvent e) {
    return new StreamKey(e.pid(), e.connectionId(), e.streamId(), e.side());
  }

  /** The pid (high 32 bits) and stream id (low 32 bits) in one number: with the connection, a key's identity within one side. */
  long pidAndStreamId() {
    return ((long) pid << 32) | (streamId & 0xFFFFFFFFL);
  }

  /** Mixed ({@link RecentEnds#hash}): connections are nearby addresses and stream ids small odd or even numbers. */
  @Override
  public int hashCode() {
    return RecentEnds.hash(connection, streamId, ((long) pid) << 1 | side.ordinal());
  }

  /** Written out: a record's generated equals is a method-handle chain the profile showed on every event. */
  @Override
  public boolean equals(Object o) {
    return o instanceof StreamKey k && k.connection == connection && k.streamId == streamId && k.pid == pid
        && k.side == side;
  }
}
