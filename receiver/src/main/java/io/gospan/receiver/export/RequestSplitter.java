package io.gospan.receiver.export;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.exporter.internal.FailedExportException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.common.export.GrpcStatusCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends each batch in export requests of at most {@code maxBytes} (the OTLP {@code
 * ExportTraceServiceRequest}'s protobuf before compression, estimated from above by {@link
 * #estimate}), the spans in their order. The span processor bounds a batch in spans only, while a
 * gRPC server refuses a larger message whole: {@code RESOURCE_EXHAUSTED}, "grpc: received message
 * larger than max (… vs. 4194304)", 4 MiB by default in grpc-go (server.go {@code
 * defaultServerMaxReceiveMessageSize}), so in the OpenTelemetry Collector's and Jaeger's OTLP/gRPC
 * receivers unless configured. Every span of a refused request is lost, and sending it again as it
 * is cannot help.
 *
 * <ul>
 *   <li>A batch within the bound (the usual case: 2,048 spans of ~400 bytes on the wire in the load
 *       benchmark, ~830 KB) goes as one request; a span larger than the bound alone goes in a
 *       request of its own.
 *   <li>A request the collector still refuses as too large ({@link #tooLarge}: its limit is below
 *       the bound) is sent again in halves, down to single spans; a single span refused so fails
 *       the export. The export queue below does not retry such a refusal ({@link
 *       ExportQueue#retryable}): it fails the export at once, and comes back here.
 *   <li>It sits above the failure log and the export queue, which count, keep and retry each
 *       request: the batch's result is successful when every request's is.
 * </ul>
 */
final class RequestSplitter implements SpanExporter {
  private static final Logger log = LoggerFactory.getLogger(RequestSplitter.class);

  /**
   * A Span message's fields besides its strings and attributes, and its own tag and length in
   * {@code ScopeSpans.spans} (≤ 4): trace id (18), span id and parent span id (10 each), kind (2),
   * start and end (9 each), flags (6), status (≤ 4, and a code of 2), dropped counts (≤ 6 each),
   * with slack. Field layout: opentelemetry-proto {@code opentelemetry/proto/trace/v1/trace.proto}.
   */
  static final long SPAN_BASE = 96;
  /** An Event's or a Link's fields besides its strings and attributes (time, ids, counts, flags), tag and length. */
  static final long EVENT_BASE = 32;
  static final long LINK_BASE = 56;
  /**
   * A ResourceSpans with its Resource and ScopeSpans, the scope's fields and the schema URLs' tags
   * and lengths: once per resource and scope in a request.
   */
  static final long RESOURCE_BASE = 64;

  private final SpanExporter delegate;
  private final long maxBytes;
  private final AtomicBoolean splitLogged = new AtomicBoolean();
  private final AtomicBoolean oversizedLogged = new AtomicBoolean();
  private final AtomicBoolean halvedLogged = new AtomicBoolean();

  /** Attribute sets' estimates by identity. */
  private final AttributesMemo sized = new AttributesMemo(RequestSplitter::attributes);

  /**
   * @param maxBytes the bound of one request in bytes (≥ 1)
   */
  RequestSplitter(SpanExporter delegate, long maxBytes) {
    if (maxBytes < 1) {
      throw new IllegalArgumentException("maxBytes must be at least 1: " + maxBytes);
    }
    this.delegate = delegate;
    this.maxBytes = maxBytes;
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    Set<Object> resources = Collections.newSetFromMap(new IdentityHashMap<>());
    long total = 0;
    for (SpanData s : spans) {
      total += estimate(s) + (resources.add(s.getResource()) ? resourceEstimate(s) : 0);
    }
    if (total <= maxBytes) {
      return send(spans instanceof List<SpanData> l ? l : new ArrayList<>(spans));
    }
    List<CompletableResultCode> results = new ArrayList<>();
    List<SpanData> request = new ArrayList<>();
    long bytes = 0;
    resources.clear();
    for (SpanData s : spans) {
      long n = estimate(s);
      boolean newResource = !resources.contains(s.getResource());
      long add = n + (newResource ? resourceEstimate(s) : 0);
      if (!request.isEmpty() && bytes + add > maxBytes) {
        results.add(send(request));
        request = new ArrayList<>();
        bytes = 0;
        resources.clear();
        newResource = true;
        add = n + resourceEstimate(s);
      }
      if (newResource) {
        resources.add(s.getResource());
      }
      if (add > maxBytes && oversizedLogged.compareAndSet(false, true)) {
        log.warn("a span of ~{} bytes is larger than exporter.batch.max_export_request_bytes ({}): sent in a request"
            + " of its own, which the collector may refuse (said once)", add, maxBytes);
      }
      request.add(s);
      bytes += add;
    }
    results.add(send(request));
    if (splitLogged.compareAndSet(false, true)) {
      log.info("a batch of {} spans (~{} bytes) was sent in {} requests of at most exporter.batch.max_export_request_bytes"
          + " ({}): a collector refuses a gRPC message over 4 MiB by default (said once)",
          spans.size(), total, results.size(), maxBytes);
    }
    return CompletableResultCode.ofAll(results);
  }

  /**
   * Exports {@code request}; when the collector refuses it as too large ({@link #tooLarge}: its
   * limit is below the bound), sends its halves instead, down to single spans. The result is the
   * request's, or both halves' together.
   */
  private CompletableResultCode send(List<SpanData> request) {
    CompletableResultCode r = delegate.export(request);
    if (request.size() < 2) {
      return r;
    }
    CompletableResultCode out = new CompletableResultCode();
    r.whenComplete(() -> {
      Throwable t = r.getFailureThrowable();
      if (r.isSuccess() || !tooLarge(t)) {
        complete(out, r);
        return;
      }
      if (halvedLogged.compareAndSet(false, true)) {
        log.warn("the collector refused a request of {} spans as too large ({}): sending requests in halves;"
            + " set exporter.batch.max_export_request_bytes ({}) below its limit (said once)",
            request.size(), ExportQueue.describe(t), maxBytes);
      }
      int half = request.size() / 2;
      CompletableResultCode both = CompletableResultCode.ofAll(
          List.of(send(List.copyOf(request.subList(0, half))), send(List.copyOf(request.subList(half, request.size())))));
      both.whenComplete(() -> complete(out, both));
    });
    return out;
  }

  private static void complete(CompletableResultCode out, CompletableResultCode from) {
    if (from.isSuccess()) {
      out.succeed();
    } else if (from.getFailureThrowable() != null) {
      out.failExceptionally(from.getFailureThrowable());
    } else {
      out.fail();
    }
  }

  /**
   * Whether an export failed because its request was larger than the collector takes: gRPC {@code
   * RESOURCE_EXHAUSTED} with grpc-go's "received message larger than max" (or "… after
   * decompression larger than max", grpc-go rpc_util.go) or grpc-java's "exceeds maximum size"
   * (MessageDeframer), or HTTP 413 (Content Too Large). Sending it again as it is cannot succeed.
   */
  static boolean tooLarge(Throwable t) {
    if (t instanceof FailedExportException.GrpcExportException g && g.failedWithResponse()) {
      String d = g.getResponse().getStatusDescription();
      return g.getResponse().getStatusCode() == GrpcStatusCode.RESOURCE_EXHAUSTED && d != null
          && (d.contains("larger than max") || d.contains("exceeds maximum size"));
    }
    return t instanceof FailedExportException.HttpExportException h && h.failedWithResponse()
        && h.getResponse().getStatusCode() == 413;
  }

  /** An upper estimate of {@code s}'s bytes in an export request, without its resource's and scope's. */
  long estimate(SpanData s) {
    long n = SPAN_BASE + field(utf8Length(s.getName())) + sized.size(s.getAttributes());
    n += field(traceStateLength(s.getSpanContext().getTraceState()));
    String description = s.getStatus().getDescription();
    if (description != null) {
      n += field(utf8Length(description));
    }
    for (EventData e : s.getEvents()) {
      n += EVENT_BASE + field(utf8Length(e.getName())) + attributes(e.getAttributes());
    }
    for (LinkData l : s.getLinks()) {
      n += LINK_BASE + attributes(l.getAttributes()) + field(traceStateLength(l.getSpanContext().getTraceState()));
    }
    return n;
  }

  /** The length of a trace state's W3C header form ({@code key=value,…}, ASCII), 0 when empty. */
  private static long traceStateLength(TraceState ts) {
    if (ts.isEmpty()) {
      return 0;
    }
    long[] n = {0};
    ts.forEach((k, v) -> n[0] += k.length() + v.length() + 2);
    return n[0];
  }

  /**
   * An upper estimate of the bytes {@code s}'s resource and instrumentation scope add to a request:
   * counted once per resource in a request (gospan's spans all have one scope).
   */
  long resourceEstimate(SpanData s) {
    Resource r = s.getResource();
    InstrumentationScopeInfo scope = s.getInstrumentationScopeInfo();
    return RESOURCE_BASE + attributes(r.getAttributes()) + field(utf8Length(r.getSchemaUrl()))
        + field(utf8Length(scope.getName())) + field(utf8Length(scope.getVersion()))
        + field(utf8Length(scope.getSchemaUrl())) + attributes(scope.getAttributes());
  }

  /** Attributes as repeated KeyValue fields: each a key and an AnyValue, each with its tag and length. */
  static long attributes(Attributes a) {
    long[] n = {0};
    a.forEach((AttributeKey<?> k, Object v) -> n[0] += field(field(utf8Length(k.getKey())) + field(anyValue(v))));
    return n[0];
  }

  /** An AnyValue's bytes: a string, int, double or bool field, or an ArrayValue of AnyValues. */
  private static long anyValue(Object v) {
    if (v instanceof String s) {
      return field(utf8Length(s));
    }
    if (v instanceof List<?> l) {
      long n = 0;
      for (Object o : l) {
        n += field(anyValue(o));
      }
      return field(n);
    }
    if (v instanceof Long l) {
      return 1 + (l < 0 ? 10 : varintLength(l)); // a varint int64 (a negative one takes 10 bytes) and its tag
    }
    return 9; // a fixed64 double (8) or a bool (1), and its tag
  }

  /**
   * A length-delimited field of {@code length} bytes with its tag and length: a field number
   * below 16 takes a 1-byte tag; the larger ones here (flags, 16) are in the fixed parts.
   */
  static long field(long length) {
    return 1 + varintLength(length) + length;
  }

  /** The bytes of a varint holding {@code v} ≥ 0: 7 bits a byte. */
  private static long varintLength(long v) {
    return (64 - Long.numberOfLeadingZeros(v | 1) + 6) / 7;
  }

  /** The UTF-8 length of {@code s} (0 for null): 1 byte per ASCII character, 2 or 3 otherwise, 4 per surrogate pair. */
  static long utf8Length(String s) {
    if (s == null) {
      return 0;
    }
    int len = s.length();
    long n = len;
    for (int i = 0; i < len; i++) {
      char c = s.charAt(i);
      if (c >= 0x80) {
        n += c < 0x800 || Character.isSurrogate(c) ? 1 : 2; // a surrogate pair: 2 chars, 4 bytes
      }
    }
    return n;
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
    return "RequestSplitter{" + delegate + ", maxBytes=" + maxBytes + "}";
  }
}
