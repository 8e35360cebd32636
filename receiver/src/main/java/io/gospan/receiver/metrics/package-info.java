/**
 * Metrics: RED histograms of the traced RPCs per the RPC semantic conventions ({@link
 * io.gospan.receiver.metrics.RedMetrics}), and the {@code /metrics} + {@code /healthz} HTTP
 * endpoint, the SDK's Prometheus server ({@link io.gospan.receiver.metrics.TelemetryServer}).
 * gospan's own counters are SDK instruments on the pipeline's meter, recorded where they happen.
 */
package io.gospan.receiver.metrics;
