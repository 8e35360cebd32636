package io.gospan.receiver.span;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/** Header value decoding: W3C trace context (through the OpenTelemetry propagator) and {@code grpc-message}. */
final class TraceHeaders {
  private TraceHeaders() {}

  private static final TextMapGetter<Map<String, String>> GETTER =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };

  /**
   * The remote parent named by {@code traceparent} (+ {@code tracestate}), or {@code null} when
   * absent or malformed (the caller tells the two apart by whether {@code traceparent} was present).
   */
  static SpanContext parent(String traceparent, String tracestate) {
    if (traceparent == null) {
      return null;
    }
    Map<String, String> carrier = new HashMap<>(2);
    carrier.put("traceparent", traceparent);
    if (tracestate != null) {
      carrier.put("tracestate", tracestate);
    }
    Context ctx = W3CTraceContextPropagator.getInstance().extract(Context.root(), carrier, GETTER);
    SpanContext sc = Span.fromContext(ctx).getSpanContext();
    return sc.isValid() ? sc : null;
  }

  /**
   * Decodes {@code grpc-message}: percent-encoded UTF-8 per the gRPC HTTP/2 protocol ({@code %XX};
   * unlike form encoding, {@code +} is a plus). Invalid escapes are kept as they are.
   */
  static String decodeGrpcMessage(String value) {
    if (value == null || value.indexOf('%') < 0) {
      return value;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(value.length());
    byte[] in = value.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < in.length; i++) {
      byte b = in[i];
      if (b == '%' && i + 2 < in.length) {
        int hi = Character.digit(in[i + 1], 16);
        int lo = Character.digit(in[i + 2], 16);
        if (hi >= 0 && lo >= 0) {
          out.write(hi << 4 | lo);
          i += 2;
          continue;
        }
      }
      out.write(b);
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
