package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.sdk.resources.Resource;
import java.util.List;
import java.util.Map;

/**
 * What one traced stream has gathered from its start on for its span: method, authority, sockets,
 * the application's {@code traceparent}, captured metadata, HTTP status, last event time. Made at
 * the stream's start, kept in the {@link StreamTable} while in flight and with its {@link EndedSpan}
 * after.
 *
 * <p>Plain fields, no checks: only the parts of {@link SpanAssembler}, under its lock, touch it.
 */
final class TracedStream {
  final StreamKey key;
  final int pid;
  final Side side;
  final long startNs;
  final long deadline;
  long lastNs;
  final String path;
  final String fullMethod; // pkg.Service/Method, null when unknown
  String authority; // a client started at NewStream: its server's, when gospan sees that
  final SocketPair sockets;
  final String socketUnknown;
  final FlowKey flow;
  SpanContext remoteParent; // a client started at NewStream: its server's traceparent, when gospan sees that
  /** A client stream started at NewStream's return (streams set): it saw no request headers. */
  final boolean startedAtNewStream;
  /**
   * A client started at NewStream in a process that made no in-process link for it: nothing but
   * its server's request headers can give it a parent, so it is a root once those are seen or it ends.
   */
  boolean rootAtEnd;
  final SpanIdentity node;
  // allocated at the first captured value (most spans have none)
  Map<String, List<String>> requestMetadata = Map.of();
  Map<String, List<String>> responseMetadata = Map.of();
  /** The process's resource, read at the stream's start: it may exit (and be forgotten) before export. */
  Resource resource;
  String httpStatus;
  boolean truncated;
  /** The streams started just before and after it, while in flight ({@link StreamTable}'s start order). */
  TracedStream older;
  TracedStream newer;

  TracedStream(StreamKey key, HeaderEvent e, long deadline, SpanContext remoteParent, SpanIdentity node) {
    this.key = key;
    this.pid = e.pid();
    this.side = e.side();
    this.startNs = e.monotonicNs();
    this.lastNs = e.monotonicNs();
    this.deadline = deadline;
    HeaderField pathField = e.field(":path");
    this.path = pathField != null ? pathField.value() : null;
    this.fullMethod = pathField != null && !pathField.truncated() ? SpanAttributes.fullMethod(pathField.value()) : null;
    this.authority = e.header(":authority");
    this.sockets = e.sockets();
    this.socketUnknown = e.sockets() == null ? e.socketUnknown() : null;
    this.flow = FlowKey.of(e.side(), e.sockets(), e.streamId());
    this.remoteParent = remoteParent;
    this.startedAtNewStream = e.probe() == ProbeKind.HTTP2_CLIENT_NEW_STREAM;
    this.node = node;
  }
}
