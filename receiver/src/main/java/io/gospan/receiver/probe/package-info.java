/**
 * gospan's uprobes on grpc-go: loading and attaching them ({@link io.gospan.receiver.probe.GrpcProbes}),
 * the per-binary offsets they read, and the decoding of ring buffer records. The Java side of the
 * contract in {@code bpf/grpc_events.h} ({@code GrpcProbe}, {@code GrpcLayouts}, {@code
 * GrpcStructs}, {@code GrpcObject}, {@code GrpcConstants}, {@code ProbeCounters}, {@code
 * ConnStatus}) is generated from the BTF of the built object by
 * {@code bpf/gen} during the build: its sources are under {@code target/generated-sources/bpf}.
 */
package io.gospan.receiver.probe;
