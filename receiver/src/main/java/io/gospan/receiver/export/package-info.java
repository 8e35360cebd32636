/**
 * Export: the running {@link io.gospan.receiver.export.Pipeline} (events → span assembly → export),
 * a finished span's way to an OpenTelemetry SDK {@code SpanExporter} ({@link
 * io.gospan.receiver.export.SpanExport}: admission, bounded batching, the export queue; OTLP/gRPC,
 * OTLP/HTTP, console, OTLP-JSON file) and gospan's own metrics ({@link
 * io.gospan.receiver.export.SelfTelemetry}: OTLP metrics and the telemetry endpoint). {@code
 * app.PipelineBuilder} wires them from the configuration.
 */
package io.gospan.receiver.export;
