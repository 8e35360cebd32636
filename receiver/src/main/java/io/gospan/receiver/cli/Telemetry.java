package io.gospan.receiver.cli;

import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.export.Pipeline;

/** Feeds the probes' and the tracer's figures into the pipeline's self-telemetry. */
final class Telemetry {
  private Telemetry() {}

  static void register(Pipeline pipeline, Sidecar sidecar) {
    // Wired to SelfTelemetry once its observation API is settled (events lost per probe from
    // the BPF counters, processes traced, probes attached/refused).
  }
}
