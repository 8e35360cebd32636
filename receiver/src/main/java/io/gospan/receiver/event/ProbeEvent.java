package io.gospan.receiver.event;

/**
 * What the probes report, decoded from the {@code events} ring buffer: the header fields of a
 * stream ({@link HeaderEvent}) or the parent of a client stream ({@link StreamParent}).
 */
public sealed interface ProbeEvent permits HeaderEvent, StreamParent {
  /** Process id (in the namespace gospan runs in). */
  int pid();

  /** {@code bpf_ktime_get_ns()}: {@code CLOCK_MONOTONIC}, ns. */
  long monotonicNs();
}
