/**
 * Export: the {@link io.gospan.receiver.export.Pipeline} that wires config → span assembly →
 * bounded batching → an OpenTelemetry SDK {@code SpanExporter} (OTLP/gRPC, OTLP/HTTP, console,
 * OTLP-JSON file) plus OTLP metrics and the telemetry endpoint.
 */
package io.gospan.receiver.export;
