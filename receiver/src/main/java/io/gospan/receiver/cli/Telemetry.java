package io.gospan.receiver.cli;

import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.export.Pipeline;
import io.gospan.receiver.metrics.SelfTelemetry;
import io.gospan.receiver.probe.GrpcProbe;
import io.gospan.receiver.probe.ProbeCounters;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import java.util.Locale;
import java.util.Map;

/**
 * Feeds the BPF counters and the tracer's state into the pipeline's self-telemetry (OTLP and
 * {@code /metrics}): events lost per probe and reason, probes attached and refused per binary.
 */
final class Telemetry {
  private Telemetry() {}

  static final AttributeKey<String> BINARY = AttributeKey.stringKey("binary");
  static final AttributeKey<String> GRPC_VERSION = AttributeKey.stringKey("grpc_version");

  /** A callback that records nothing once the probes are closed (during shutdown). */
  private static java.util.function.Consumer<SelfTelemetry.Recorder> safe(java.util.function.Consumer<SelfTelemetry.Recorder> c) {
    return r -> {
      try {
        c.accept(r);
      } catch (IllegalStateException closed) {
        // the BPF object is closed: shutting down
      }
    };
  }

  static void register(Pipeline pipeline, Sidecar sidecar) {
    SelfTelemetry t = pipeline.telemetry();
    t.observeCounter(
        SelfTelemetry.EVENTS_LOST,
        "Events lost in the kernel, by probe and reason (ring buffer full, user memory unreadable)",
        safe(r -> {
          Map<GrpcProbe, ProbeCounters> counters = sidecar.probes().counters();
          counters.forEach((probe, c) -> {
            String name = probe.name().toLowerCase(Locale.ROOT);
            r.record(c.ringBufferFull(), Attributes.of(SelfTelemetry.PROBE, name, SelfTelemetry.REASON, "ring_buffer_full"));
            r.record(c.readFailed(), Attributes.of(SelfTelemetry.PROBE, name, SelfTelemetry.REASON, "read_failed"));
            r.record(c.noOffsets(), Attributes.of(SelfTelemetry.PROBE, name, SelfTelemetry.REASON, "no_offsets"));
          });
        }));
    t.observeCounter(
        "gospan.connections.unidentified",
        "Probe hits whose connection could not be unwrapped to a socket (unknown net.Conn type), by probe",
        safe(r -> sidecar.probes().counters().forEach((probe, c) ->
            r.record(c.unknownItab(), Attributes.of(SelfTelemetry.PROBE, probe.name().toLowerCase(Locale.ROOT))))));
    t.observeCounter(
        "gospan.probe.hits",
        "Probe hits in traced programs (each costs the program the uprobe trap and the BPF program), by probe",
        safe(r -> sidecar.probes().counters().forEach((probe, c) ->
            r.record(c.hits(), Attributes.of(SelfTelemetry.PROBE, probe.name().toLowerCase(Locale.ROOT))))));
    t.observeCounter(
        "gospan.probe.hits.skipped",
        "Probe hits that needed no record (response headers before the trailers, no extra header names), by probe",
        safe(r -> sidecar.probes().counters().forEach((probe, c) ->
            r.record(c.skipped(), Attributes.of(SelfTelemetry.PROBE, probe.name().toLowerCase(Locale.ROOT))))));
    t.observeCounter(
        "gospan.fields.truncated",
        "Header values cut to fit or header fields left out, by probe",
        safe(r -> sidecar.probes().counters().forEach((probe, c) ->
            r.record(c.fieldTruncated(), Attributes.of(SelfTelemetry.PROBE, probe.name().toLowerCase(Locale.ROOT))))));
    t.observeGauge(
        SelfTelemetry.PROBES_ATTACHED,
        "Probes attached now, by probe and binary",
        r -> {
          for (TracedBinary b : sidecar.tracer().binaries()) {
            for (Probe p : b.attached()) {
              r.record(1, Attributes.of(SelfTelemetry.PROBE, p.name().toLowerCase(Locale.ROOT), BINARY, b.path(), GRPC_VERSION, b.grpcVersion()));
            }
          }
        });
    t.observeGauge(
        SelfTelemetry.PROBES_REFUSED,
        "Probes not attached to a traced binary, by probe, binary and reason",
        r -> {
          for (TracedBinary b : sidecar.tracer().binaries()) {
            b.refused().forEach((p, reason) ->
                r.record(1, Attributes.of(SelfTelemetry.PROBE, p.name().toLowerCase(Locale.ROOT), BINARY, b.path(),
                    SelfTelemetry.REASON, reason.length() > 120 ? reason.substring(0, 120) : reason)));
          }
        });
    t.observeGauge(
        "gospan.process",
        "One per traced process (value 1): pid, executable, Go and grpc-go versions, offsets source, probes attached and refused",
        safe(r -> sidecar.tracer().traced().forEach((pid, b) -> r.record(1, Attributes.builder()
            .put("pid", (long) pid)
            .put(BINARY, b.path())
            .put("go_version", b.goVersion())
            .put(GRPC_VERSION, b.grpcVersion())
            .put("offsets_source", b.offsetsSource())
            .put("probes_attached", b.attached().stream().map(p -> p.name().toLowerCase(Locale.ROOT)).sorted().collect(java.util.stream.Collectors.joining(",")))
            .put("probes_refused", b.refused().entrySet().stream()
                .map(e -> e.getKey().name().toLowerCase(Locale.ROOT) + ": " + e.getValue())
                .collect(java.util.stream.Collectors.joining("; ")))
            .build()))));
    t.observeCounter(
        "gospan.events.undecodable",
        "Ring buffer records that could not be decoded",
        safe(r -> r.record(sidecar.probes().malformedRecords())));
  }
}
