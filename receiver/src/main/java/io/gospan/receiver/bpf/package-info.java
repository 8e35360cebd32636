/**
 * libbpf from Java through jnr-ffi: open and load BPF objects, find programs and maps,
 * attach entry uprobes, read and write map elements, consume ring buffers, and
 * describe the C structs shared with the BPF programs ({@link io.gospan.receiver.bpf.StructLayout}).
 *
 * <p>Every native resource is {@link java.lang.AutoCloseable}. Errors surface as
 * {@link io.gospan.receiver.bpf.BpfException} whose message carries libbpf's own log
 * (and the verifier log when a program is rejected). libbpf's print callback is routed
 * into the {@code io.gospan.receiver.bpf.libbpf} logger.
 *
 * <p>Needs the native {@code libbpf.so.1} (libbpf 1.x, Debian package {@code libbpf1}).
 */
package io.gospan.receiver.bpf;
