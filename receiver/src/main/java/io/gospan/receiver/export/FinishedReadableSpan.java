package io.gospan.receiver.export;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.common.InstrumentationLibraryInfo;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.data.SpanData;

/**
 * A span gospan assembled (already ended, as {@link SpanData}) seen as the {@link ReadableSpan} the
 * SDK's span processors take, so the SDK's {@code BatchSpanProcessor} can queue and batch it.
 * {@link #toSpanData} returns the span itself (the processor calls it once, when draining its queue).
 */
final class FinishedReadableSpan implements ReadableSpan {
  private final SpanData span;

  FinishedReadableSpan(SpanData span) {
    this.span = span;
  }

  @Override
  public SpanContext getSpanContext() {
    return span.getSpanContext();
  }

  @Override
  public SpanContext getParentSpanContext() {
    return span.getParentSpanContext();
  }

  @Override
  public String getName() {
    return span.getName();
  }

  @Override
  public SpanData toSpanData() {
    return span;
  }

  @Override
  @Deprecated
  public InstrumentationLibraryInfo getInstrumentationLibraryInfo() {
    InstrumentationScopeInfo s = span.getInstrumentationScopeInfo();
    return InstrumentationLibraryInfo.create(s.getName(), s.getVersion(), s.getSchemaUrl());
  }

  @Override
  public InstrumentationScopeInfo getInstrumentationScopeInfo() {
    return span.getInstrumentationScopeInfo();
  }

  @Override
  public boolean hasEnded() {
    return true;
  }

  @Override
  public long getLatencyNanos() {
    return span.getEndEpochNanos() - span.getStartEpochNanos();
  }

  @Override
  public SpanKind getKind() {
    return span.getKind();
  }

  @Override
  public <T> T getAttribute(AttributeKey<T> key) {
    return span.getAttributes().get(key);
  }

  @Override
  public Attributes getAttributes() {
    return span.getAttributes();
  }
}
