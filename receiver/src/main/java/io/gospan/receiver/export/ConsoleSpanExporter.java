package io.gospan.receiver.export;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.PrintStream;
import java.time.Instant;
import java.util.Collection;
import java.util.Locale;

/**
 * One readable line per span, for debugging and the demo:
 *
 * <pre>
 * 2026-11-21T05:30:00.123456Z SERVER helloworld.Greeter/SayHello 0.412ms OK service=greeter pid=4242
 *     trace=4bf9… span=00f0… parent=53ce… peer=127.0.0.1:51234 [attr=value …]
 * </pre>
 */
public final class ConsoleSpanExporter implements SpanExporter {
  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
  private static final AttributeKey<Long> PID = AttributeKey.longKey("process.pid");

  private final PrintStream out;
  private volatile boolean shutdown;

  private ConsoleSpanExporter(PrintStream out) {
    this.out = out;
  }

  public static ConsoleSpanExporter create(PrintStream out) {
    return new ConsoleSpanExporter(out);
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    if (shutdown) {
      return CompletableResultCode.ofFailure();
    }
    StringBuilder sb = new StringBuilder(256 * spans.size());
    for (SpanData s : spans) {
      format(sb, s);
      sb.append('\n');
    }
    synchronized (out) {
      out.print(sb);
      out.flush();
    }
    return CompletableResultCode.ofSuccess();
  }

  static void format(StringBuilder sb, SpanData s) {
    long start = s.getStartEpochNanos();
    sb.append(Instant.ofEpochSecond(start / 1_000_000_000L, start % 1_000_000_000L)).append(' ');
    sb.append(s.getKind()).append(' ').append(s.getName()).append(' ');
    sb.append(String.format(Locale.ROOT, "%.3fms", (s.getEndEpochNanos() - start) / 1e6)).append(' ');
    String code = s.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code"));
    if (code == null) {
      Long old = s.getAttributes().get(AttributeKey.longKey("rpc.grpc.status_code"));
      code = old != null ? String.valueOf(old) : "-";
    }
    sb.append(code).append(' ').append(s.getStatus().getStatusCode());
    if (!s.getStatus().getDescription().isEmpty()) {
      sb.append("(\"").append(s.getStatus().getDescription()).append("\")");
    }
    sb.append(" service=").append(s.getResource().getAttribute(SERVICE_NAME));
    sb.append(" pid=").append(s.getResource().getAttribute(PID));
    sb.append(" trace=").append(s.getTraceId()).append(" span=").append(s.getSpanId());
    sb.append(" parent=").append(s.getParentSpanContext().isValid() ? s.getParentSpanId() : "-");
    s.getAttributes()
        .forEach(
            (k, v) -> {
              String key = k.getKey();
              if (!key.equals("rpc.method") && !key.equals("rpc.response.status_code")) {
                sb.append(' ').append(key).append('=').append(v);
              }
            });
  }

  @Override
  public CompletableResultCode flush() {
    out.flush();
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode shutdown() {
    shutdown = true;
    return CompletableResultCode.ofSuccess();
  }
}
