package io.gospan.receiver.export;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sits between the SDK's {@code BatchSpanProcessor} and the real exporter: turns whatever the
 * exporter throws into a failed export (the processor's worker rethrows a {@link LinkageError}, which
 * would end it and every later export), and keeps the number of spans lost to failed exports for
 * {@link #report}, which logs the true count since the last report (one line, at most as often as it
 * is called). Counting itself is the processor's: {@code
 * otel.sdk.processor.span.processed{error.type}}.
 */
final class ExportFailureLog implements SpanExporter {
  private static final Logger log = LoggerFactory.getLogger(ExportFailureLog.class);

  private final SpanExporter delegate;
  private final AtomicLong spansLost = new AtomicLong();
  private final AtomicLong failedExports = new AtomicLong();
  private final AtomicReference<String> lastError = new AtomicReference<>();

  ExportFailureLog(SpanExporter delegate) {
    this.delegate = delegate;
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    int n = spans.size();
    CompletableResultCode r;
    try {
      r = delegate.export(spans);
    } catch (RuntimeException | LinkageError e) {
      lastError.set(e.toString());
      r = CompletableResultCode.ofExceptionalFailure(e);
    }
    CompletableResultCode result = r;
    result.whenComplete(() -> {
      // a request of several spans refused as too large is not lost: RequestSplitter, above, sends
      // it again in halves (each counted here on its own)
      if (!result.isSuccess() && !(n > 1 && RequestSplitter.tooLarge(result.getFailureThrowable()))) {
        failedExports.incrementAndGet();
        spansLost.addAndGet(n);
        Throwable t = result.getFailureThrowable();
        if (t != null) {
          lastError.set(t.toString());
        }
      }
    });
    return result;
  }

  /** Logs the spans lost to failed exports since the last call, if any; returns their number. */
  long report() {
    long lost = spansLost.getAndSet(0);
    long calls = failedExports.getAndSet(0);
    if (lost > 0 || calls > 0) {
      String why = lastError.getAndSet(null);
      log.warn(
          "dropped {} span(s) in {} failed export(s) since the last report{} (counted in otel.sdk.processor.span.processed)",
          lost, calls, why != null ? "; last error: " + why : "");
    }
    return lost;
  }

  @Override
  public CompletableResultCode flush() {
    return delegate.flush();
  }

  @Override
  public CompletableResultCode shutdown() {
    return delegate.shutdown();
  }

  @Override
  public String toString() {
    return delegate.toString();
  }
}
