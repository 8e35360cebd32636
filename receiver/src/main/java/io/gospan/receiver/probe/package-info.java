/**
 * gospan's uprobes on grpc-go: the Java side of the contract in {@code bpf/grpc_events.h}
 * (layouts of the offsets, key and event structs) and the decoding of ring buffer records.
 */
package io.gospan.receiver.probe;
