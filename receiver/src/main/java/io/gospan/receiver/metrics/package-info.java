/**
 * Metrics: RED histograms of the traced RPCs per the RPC semantic conventions ({@link
 * io.gospan.receiver.metrics.RedMetrics}), gospan's self-telemetry counters ({@link
 * io.gospan.receiver.metrics.SelfTelemetry}), and the {@code /metrics} + {@code /healthz} HTTP
 * endpoint ({@link io.gospan.receiver.metrics.TelemetryServer}).
 */
package io.gospan.receiver.metrics;
