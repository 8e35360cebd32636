package io.gospan.receiver.span;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.common.InstrumentationLibraryInfo;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import java.util.List;

/**
 * A finished span built from header events; the SDK's {@link SpanData}, so any SDK exporter takes it.
 * {@code traceIdHigh} and {@code traceIdLow} are its span context's trace id as numbers ({@link TraceIdBits}).
 */
record AssembledSpan(
    String name,
    SpanKind kind,
    SpanContext spanContext,
    SpanContext parentSpanContext,
    StatusData status,
    long startEpochNanos,
    long endEpochNanos,
    Attributes attributes,
    Resource resource,
    long traceIdHigh,
    long traceIdLow)
    implements SpanData, TraceIdBits {

  static final InstrumentationScopeInfo SCOPE =
      InstrumentationScopeInfo.builder("io.gospan").setVersion(io.gospan.receiver.version.GospanVersion.get()).build();

  @Override
  public String getName() {
    return name;
  }

  @Override
  public SpanKind getKind() {
    return kind;
  }

  @Override
  public SpanContext getSpanContext() {
    return spanContext;
  }

  @Override
  public SpanContext getParentSpanContext() {
    return parentSpanContext;
  }

  @Override
  public StatusData getStatus() {
    return status;
  }

  @Override
  public long getStartEpochNanos() {
    return startEpochNanos;
  }

  @Override
  public Attributes getAttributes() {
    return attributes;
  }

  @Override
  public List<EventData> getEvents() {
    return List.of();
  }

  @Override
  public List<LinkData> getLinks() {
    return List.of();
  }

  @Override
  public long getEndEpochNanos() {
    return endEpochNanos;
  }

  @Override
  public boolean hasEnded() {
    return true;
  }

  @Override
  public int getTotalRecordedEvents() {
    return 0;
  }

  @Override
  public int getTotalRecordedLinks() {
    return 0;
  }

  @Override
  public int getTotalAttributeCount() {
    return attributes.size();
  }

  @Override
  @SuppressWarnings("deprecation")
  public InstrumentationLibraryInfo getInstrumentationLibraryInfo() {
    return InstrumentationLibraryInfo.create(SCOPE.getName(), SCOPE.getVersion());
  }

  @Override
  public InstrumentationScopeInfo getInstrumentationScopeInfo() {
    return SCOPE;
  }

  @Override
  public Resource getResource() {
    return resource;
  }
}
