/**
 * Metrics: RED histograms of the traced RPCs per the RPC semantic conventions ({@link
 * io.gospan.receiver.metrics.RedMetrics}), the span assembler's counters on the SDK meter ({@link
 * io.gospan.receiver.metrics.SelfTelemetry}, transitional), and the {@code /metrics} + {@code
 * /healthz} HTTP endpoint, the SDK's Prometheus server ({@link
 * io.gospan.receiver.metrics.TelemetryServer}).
 */
package io.gospan.receiver.metrics;
