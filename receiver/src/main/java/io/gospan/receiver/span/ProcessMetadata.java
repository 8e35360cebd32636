package io.gospan.receiver.span;

import io.gospan.receiver.event.ProcessInfo;
import io.opentelemetry.sdk.resources.Resource;

/** Per-process OpenTelemetry resources for the spans and metrics of traced processes. */
public interface ProcessMetadata {

  /** Records what the inspector knows about a process (Go version, executable); replaces earlier facts. */
  void register(ProcessInfo info);

  /**
   * What is known of a process gospan did not discover (its binary, from the event): used when
   * its {@code /proc} entry is gone; forgotten by {@link #sweep} like the resources of other
   * undiscovered processes.
   */
  default void hint(ProcessInfo info) {}

  /** The resource for spans of {@code pid}; computed once and cached until {@link #forget}. */
  Resource resource(int pid);

  /** Drops what is cached for {@code pid} (the process exited; its pid may be reused). */
  void forget(int pid);

  /** Number of processes currently known. */
  int size();

  /**
   * Drops cached resources of processes that were never registered (traced from their first
   * call without being discovered) once they have exited and were cached more than
   * {@code minAge} ago. Keeps the cache bounded over many short-lived processes.
   */
  default void sweep(java.time.Duration minAge) {}
}
