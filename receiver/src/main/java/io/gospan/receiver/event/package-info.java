/**
 * The events the BPF side reports, as the Java side sees them after decoding the ring buffer:
 * header events ({@link io.gospan.receiver.event.HeaderEvent}) for every probe hit and per-process
 * facts ({@link io.gospan.receiver.event.ProcessInfo}). This is the contract between the ring-buffer
 * reader ({@code io.gospan.receiver.bpf}) and span assembly ({@code io.gospan.receiver.span}).
 * {@link io.gospan.receiver.event.HeaderPolicy} decides which header names may be captured and
 * exported. {@code ProbeKind}, {@code Side} and {@code StreamParentVia} are generated from the C
 * contract ({@code bpf/grpc_events.h}, the {@code GOSPAN_*} tags) by {@code bpf/gen} during the
 * build. Depends on the JDK only.
 */
package io.gospan.receiver.event;
