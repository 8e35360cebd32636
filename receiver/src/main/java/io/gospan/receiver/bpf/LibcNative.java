package io.gospan.receiver.bpf;

import jnr.ffi.Pointer;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;

/**
 * The libc functions the binding needs: formatting libbpf's {@code va_list} messages, and mapping
 * and waiting on a ring buffer map ({@link RingBuffer}: {@code mmap}, {@code epoll}). Public only
 * because jnr-ffi generates its implementation in another class loader; not part of gospan's API.
 * Calls marked {@code @SaveError} return -1 (or {@code MAP_FAILED}) and set errno on failure.
 */
public interface LibcNative {
  int vsnprintf(Pointer buf, @size_t long size, Pointer format, Pointer vaList);

  /** {@code mmap(2)}; returns {@code MAP_FAILED} ((void *) -1) on failure. */
  @SaveError
  Pointer mmap(Pointer addr, @size_t long length, int prot, int flags, int fd, @off_t long offset);

  @SaveError
  int munmap(Pointer addr, @size_t long length);

  @SaveError
  int epoll_create1(int flags);

  /** {@code event}: a {@code struct epoll_event} (12 bytes, packed on x86-64). */
  @SaveError
  int epoll_ctl(int epfd, int op, int fd, Pointer event);

  @SaveError
  int epoll_wait(int epfd, Pointer events, int maxEvents, int timeoutMs);

  @SaveError
  int close(int fd);

  long sysconf(int name);
}
