package io.gospan.receiver.bpf;

import jnr.ffi.Pointer;
import jnr.ffi.types.size_t;

/** The libc functions the binding needs: formatting libbpf's {@code va_list} messages. */
public interface LibcNative {
  int vsnprintf(Pointer buf, @size_t long size, Pointer format, Pointer vaList);
}
