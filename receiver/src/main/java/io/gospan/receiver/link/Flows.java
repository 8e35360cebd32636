package io.gospan.receiver.link;

import com.google.protobuf.ByteString;
import io.gospan.receiver.link.proto.Flow;
import io.gospan.receiver.span.ClientFlow;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceId;
import io.opentelemetry.api.trace.TraceState;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.HexFormat;

/** Conversions between the link service's messages and span assembly's types, with validation. */
final class Flows {
  private Flows() {}

  private static final HexFormat HEX = HexFormat.of();

  static Flow toProto(ClientFlow f) {
    return Flow.newBuilder()
        .setClientIp(ByteString.copyFrom(f.client().getAddress().getAddress()))
        .setClientPort(f.client().getPort())
        .setStreamId(f.streamId())
        .build();
  }

  /** The flow a message names, or {@code null} when it is not well-formed (address of 4 or 16 bytes, port 1-65535, stream id 1 to 2^31-1). */
  static ClientFlow fromProto(Flow f) {
    int n = f.getClientIp().size();
    if ((n != 4 && n != 16) || f.getClientPort() < 1 || f.getClientPort() > 65535
        || f.getStreamId() < 1 || f.getStreamId() > Integer.MAX_VALUE) {
      return null;
    }
    try {
      // a v4-mapped IPv6 address becomes the IPv4 address, as the probes' sockets do
      InetAddress a = InetAddress.getByAddress(f.getClientIp().toByteArray());
      return new ClientFlow(new InetSocketAddress(a, f.getClientPort()), f.getStreamId());
    } catch (UnknownHostException e) {
      return null;
    }
  }

  /** A span's ids as an answer carries them: 16 and 8 bytes. */
  static ByteString traceId(SpanContext c) {
    return ByteString.copyFrom(c.getTraceIdBytes());
  }

  static ByteString spanId(SpanContext c) {
    return ByteString.copyFrom(c.getSpanIdBytes());
  }

  /**
   * The span an answer names, a remote parent whose sampled flag is {@code sampled}, or {@code
   * null} unless its trace id is 16 bytes and its span id 8, neither all zero.
   */
  static SpanContext span(ByteString traceId, ByteString spanId, boolean sampled) {
    if (traceId.size() != TraceId.getLength() / 2 || spanId.size() != SpanId.getLength() / 2) {
      return null;
    }
    String t = HEX.formatHex(traceId.toByteArray());
    String s = HEX.formatHex(spanId.toByteArray());
    if (!TraceId.isValid(t) || !SpanId.isValid(s)) {
      return null;
    }
    return SpanContext.createFromRemoteParent(t, s, sampled ? TraceFlags.getSampled() : TraceFlags.getDefault(),
        TraceState.getDefault());
  }
}
