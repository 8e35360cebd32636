package io.gospan.receiver.app;

import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.probe.GrpcProbe;
import io.gospan.receiver.probe.ProbeCounters;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Feeds the BPF counters and the tracer's state into the pipeline's meter (OTLP and {@code
 * /metrics}): events lost per probe and reason, probe hits, probes attached and refused per binary.
 *
 * <p>The BPF counters are read once per collection: one {@link Meter#batchCallback} reads the
 * counters map ({@code GrpcProbes.counters()}: one {@code bpf(MAP_LOOKUP_ELEM)} per probe and
 * counter) and records all eight instruments from that one read.
 */
final class ProbeTelemetry {
  private ProbeTelemetry() {}

  static final AttributeKey<String> PROBE = AttributeKey.stringKey("probe");
  static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
  /** Events lost before reaching user space (BPF counters), by {@code probe} and {@code reason}. */
  static final String EVENTS_LOST = "gospan.events.lost";
  /** Probes attached now, by {@code probe} and binary. */
  static final String PROBES_ATTACHED = "gospan.probes.attached";
  /** Probes not attached to a traced binary, by {@code probe}, binary and {@code reason}. */
  static final String PROBES_REFUSED = "gospan.probes.refused";

  static final AttributeKey<String> BINARY = AttributeKey.stringKey("binary");
  static final AttributeKey<String> GRPC_VERSION = AttributeKey.stringKey("grpc_version");

  /** Registers the instruments on {@code m}; their callbacks read {@code sidecar} at each collection. */
  static void register(Meter m, Sidecar sidecar) {
    ObservableLongMeasurement lost = m.counterBuilder(EVENTS_LOST)
        .setDescription("Events lost in the kernel, by probe and reason (ring buffer full, user memory unreadable); exec notices as probe sched_process_exec")
        .buildObserver();
    ObservableLongMeasurement unidentified = m.counterBuilder("gospan.connections.unidentified")
        .setDescription("Streams whose start's connection could not be followed to its socket (a net.Conn type not in the"
            + " binary's connection types, a failed read, not a socket: the span's gospan.connection.unidentified says which), by probe")
        .buildObserver();
    ObservableLongMeasurement hits = m.counterBuilder("gospan.probe.hits")
        .setDescription("Probe hits in traced programs (each costs the program the uprobe trap and the BPF program), by probe")
        .buildObserver();
    ObservableLongMeasurement skipped = m.counterBuilder("gospan.probe.hits.skipped")
        .setDescription("Probe hits that needed no record (response headers before the trailers, no extra header names), by probe")
        .buildObserver();
    ObservableLongMeasurement truncated = m.counterBuilder("gospan.fields.truncated")
        .setDescription("Header values cut to fit or header fields left out, by probe")
        .buildObserver();
    ObservableLongMeasurement noParent = m.counterBuilder("gospan.client_streams.no_parent")
        .setDescription("Client streams created with no in-process parent (made outside any served call, in a process"
            + " that serves none, or the parent missed), by probe")
        .buildObserver();
    ObservableLongMeasurement outside = m.counterBuilder("gospan.probe.hits.outside_namespace")
        .setDescription("Probe hits in processes outside gospan's PID namespace (another pod's process running a binary of"
            + " the same inode): nothing of them is sent, by probe")
        .buildObserver();
    ObservableLongMeasurement undecodable = m.counterBuilder("gospan.events.undecodable")
        .setDescription("Ring buffer records that could not be decoded")
        .buildObserver();
    m.batchCallback(
        () -> {
          Map<GrpcProbe, ProbeCounters> counters;
          try {
            counters = sidecar.probes().counters();
          } catch (IllegalStateException closed) {
            return; // the BPF object is closed: shutting down
          }
          counters.forEach((probe, c) -> {
            String name = probe.name().toLowerCase(Locale.ROOT);
            Attributes p = Attributes.of(PROBE, name);
            lost.record(c.ringBufferFull(), Attributes.of(PROBE, name, REASON, "ring_buffer_full"));
            lost.record(c.readFailed(), Attributes.of(PROBE, name, REASON, "read_failed"));
            lost.record(c.noOffsets(), Attributes.of(PROBE, name, REASON, "no_offsets"));
            unidentified.record(c.unknownItab(), p);
            hits.record(c.hits(), p);
            skipped.record(c.skipped(), p);
            truncated.record(c.fieldTruncated(), p);
            outside.record(c.invisibleProcess(), p);
            if (probe.sendsStreamParents()) {
              noParent.record(c.noParent(), p);
            }
          });
          if (sidecar.watchesExecs()) {
            lost.record(sidecar.probes().execNoticesLost(),
                Attributes.of(PROBE, "sched_process_exec", REASON, "ring_buffer_full"));
          }
          undecodable.record(sidecar.probes().malformedRecords());
        },
        lost, unidentified, hits, skipped, truncated, outside, noParent, undecodable);

    m.counterBuilder("gospan.binaries.learned_from_exec")
        .setDescription("Binaries learned from the exec notice of a process that was gone when discovery looked (a short-lived"
            + " command-line client): inspected by the notice's path, attached and lingering, so that their next runs are traced")
        .buildWithCallback(r -> r.record(sidecar.tracer().learnedFromExecs()));
    m.counterBuilder("gospan.binaries.unreachable")
        .setDescription("Binaries of exec notices whose process was gone and whose file could not be reached (deleted or replaced"
            + " at its path, no live process running it): not learned")
        .buildWithCallback(r -> r.record(sidecar.tracer().unreachableBinaries()));
    m.counterBuilder("gospan.processes.without_events")
        .setDescription("Processes that exec'd a binary traced at the time and exited without one event: programs that made no"
            + " gRPC call, or probes that did not run for them (compare with the runs that should have made calls)")
        .buildWithCallback(r -> r.record(sidecar.processesWithoutEvents()));

    m.gaugeBuilder(PROBES_ATTACHED)
        .setDescription("Probes attached now, by probe and binary")
        .ofLongs()
        .buildWithCallback(r -> {
          for (TracedBinary b : sidecar.tracer().binaries()) {
            for (Probe p : b.attached()) {
              r.record(1, Attributes.of(PROBE, p.name().toLowerCase(Locale.ROOT), BINARY, b.path(), GRPC_VERSION, b.grpcVersion()));
            }
          }
        });
    m.gaugeBuilder(PROBES_REFUSED)
        .setDescription("Probes not attached to a traced binary, by probe, binary and reason")
        .ofLongs()
        .buildWithCallback(r -> {
          for (TracedBinary b : sidecar.tracer().binaries()) {
            b.refused().forEach((p, reason) ->
                r.record(1, Attributes.of(PROBE, p.name().toLowerCase(Locale.ROOT), BINARY, b.path(),
                    REASON, reason.length() > 120 ? reason.substring(0, 120) : reason)));
          }
        });
    m.gaugeBuilder("gospan.process")
        .setDescription("One per traced process (value 1): pid, executable, Go and grpc-go versions, offsets source, probes attached and refused")
        .ofLongs()
        .buildWithCallback(r -> {
          try {
            sidecar.tracer().traced().forEach((pid, b) -> r.record(1, Attributes.builder()
                .put("pid", (long) pid)
                .put(BINARY, b.path())
                .put("go_version", b.goVersion())
                .put(GRPC_VERSION, b.grpcVersion())
                .put("offsets_source", b.offsetsSource())
                .put("probes_attached", b.attached().stream().map(p -> p.name().toLowerCase(Locale.ROOT)).sorted().collect(Collectors.joining(",")))
                .put("probes_refused", b.refused().entrySet().stream()
                    .map(e -> e.getKey().name().toLowerCase(Locale.ROOT) + ": " + e.getValue())
                    .collect(Collectors.joining("; ")))
                .build()));
          } catch (IllegalStateException closed) {
            // shutting down
          }
        });
  }
}
