package io.gospan.receiver.cli;

import io.gospan.receiver.logging.LogLimiter;
import java.io.IOException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Routes {@code java.util.logging} into SLF4J, so the libraries that log through it (the
 * OpenTelemetry SDK and its OTLP exporters, grpc-java, the JDK HTTP client) print in gospan's one
 * format ({@code simplelogger.properties}: timestamp, thread, level, logger).
 *
 * <p>Two changes on the way, both for failures a sidecar expects (a collector that is down,
 * refuses, resets or times out):
 *
 * <ul>
 *   <li>A record whose exception chain holds an {@link IOException} or a gRPC status exception
 *       becomes one line: its message and the chain's class names and messages, no stack frames.
 *       (The OTLP/HTTP exporter attaches a {@code CompletionException}, {@code UncheckedIOException},
 *       {@code ConnectException} chain of ~40 frames to each failed export.) Any other exception is a
 *       bug somewhere and keeps its stack trace.
 *   <li>Throttling: one line per logger and message kind (the message's first {@value
 *       #KEY_CHARS} characters) per {@value #WINDOW_SECONDS} s; the next line printed for that
 *       kind says how many were left out. The SDK's exporters throttle their own messages to 5 a
 *       minute, but {@code PeriodicMetricReader} warns "Exporter failed" at every interval.
 * </ul>
 *
 * <p>Line breaks inside a library's message are replaced by spaces, so every line of the log
 * starts with a timestamp and a level.
 */
final class LibraryLogBridge extends SLF4JBridgeHandler {
  static final int WINDOW_SECONDS = 30;
  static final int KEY_CHARS = 40;
  private static final int MAX_KINDS = 256;
  private static final int MAX_CHAIN = 8;

  private final SimpleFormatter formatter = new SimpleFormatter();
  private final Map<String, LogLimiter> windows = new ConcurrentHashMap<>();
  private final long windowNanos;

  LibraryLogBridge(long windowNanos) {
    this.windowNanos = windowNanos;
  }

  /**
   * Replaces the root {@code java.util.logging} logger's handlers (the JDK's console handler)
   * with this bridge. Levels stay {@code java.util.logging}'s (root: INFO), so FINE records are
   * never built.
   */
  static void installForRoot() {
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    java.util.logging.Logger.getLogger("").addHandler(new LibraryLogBridge(TimeUnit.SECONDS.toNanos(WINDOW_SECONDS)));
  }

  @Override
  public void publish(LogRecord record) {
    if (record == null) {
      return;
    }
    String message = formatter.formatMessage(record);
    if (message == null) {
      message = "";
    }
    long suppressed = admit(record.getLoggerName() + '|' + record.getLevel() + '|'
        + message.substring(0, Math.min(KEY_CHARS, message.length())), System.nanoTime());
    if (suppressed < 0) {
      return;
    }
    Throwable thrown = record.getThrown();
    boolean oneLine = thrown != null && isExpected(thrown);
    if (!oneLine && suppressed == 0 && message.indexOf('\n') < 0 && message.indexOf('\r') < 0
        && record.getParameters() == null && record.getResourceBundle() == null) {
      super.publish(record);
      return;
    }
    StringBuilder line = new StringBuilder(message.replaceAll("[\r\n]+\\s*", " ").strip());
    if (oneLine) {
      line.append(" (").append(chain(thrown)).append(')');
    }
    if (suppressed > 0) {
      line.append(" [").append(suppressed).append(" more like this in the last ")
          .append(TimeUnit.NANOSECONDS.toSeconds(windowNanos)).append(" s not shown]");
    }
    LogRecord copy = new LogRecord(record.getLevel(), line.toString());
    copy.setLoggerName(record.getLoggerName());
    copy.setInstant(record.getInstant());
    copy.setSourceClassName(record.getSourceClassName());
    copy.setSourceMethodName(record.getSourceMethodName());
    copy.setThrown(oneLine ? null : thrown);
    super.publish(copy);
  }

  /**
   * Whether a line of this kind may be printed now.
   *
   * @return -1 to leave it out, else how many of its kind were left out since the last one printed
   */
  long admit(String kind, long now) {
    if (windows.size() > MAX_KINDS) {
      windows.clear();
    }
    return windows.computeIfAbsent(kind, k -> LogLimiter.everyNanos(windowNanos)).admit(now);
  }

  /** An exception a sidecar expects from the network: I/O, or a gRPC status (UNAVAILABLE, DEADLINE_EXCEEDED). */
  static boolean isExpected(Throwable t) {
    Set<Throwable> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable c = t; c != null && seen.add(c); c = c.getCause()) {
      String name = c.getClass().getName();
      if (c instanceof IOException || c instanceof java.io.UncheckedIOException
          || c instanceof java.util.concurrent.TimeoutException
          || name.equals("io.grpc.StatusRuntimeException") || name.equals("io.grpc.StatusException")) {
        return true;
      }
    }
    return false;
  }

  /** The chain as "a.B: message caused by c.D caused by …", a message left out where it only repeats its cause. */
  static String chain(Throwable t) {
    StringBuilder sb = new StringBuilder();
    Set<Throwable> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    String previous = null;
    int n = 0;
    for (Throwable c = t; c != null && seen.add(c) && n < MAX_CHAIN; c = c.getCause(), n++) {
      String msg = c.getMessage();
      Throwable cause = c.getCause();
      if (msg != null && cause != null && msg.equals(cause.toString())) {
        msg = null;
      }
      String item = c.getClass().getName() + (msg == null || msg.isBlank() ? "" : ": " + msg.replaceAll("[\r\n]+\\s*", " ").strip());
      if (item.equals(previous)) {
        continue;
      }
      if (sb.length() > 0) {
        sb.append(" caused by ");
      }
      sb.append(item);
      previous = item;
    }
    return sb.toString();
  }
}
