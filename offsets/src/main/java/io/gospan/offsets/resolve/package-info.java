/**
 * What the probes need from a traced binary ({@link io.gospan.offsets.resolve.ProbeField}) and its
 * resolution per binary ({@link io.gospan.offsets.resolve.OffsetsResolver}: the embedded offsets
 * catalog and the binary's DWARF, {@link io.gospan.offsets.resolve.Preference} deciding between
 * them): argument locations, struct member offsets, type sizes and itab addresses, each with its
 * source. A field that cannot be resolved disables only the probes that need it, with the reason.
 *
 * <p>{@code Probe}, {@code ProbeField} and {@code ConnKind} are generated from the tags of the built {@code
 * grpc.bpf.o} ({@code bpf/grpc_events.h}, by {@code bpf/gen} during the build): the C side is
 * their single definition.
 */
package io.gospan.offsets.resolve;
