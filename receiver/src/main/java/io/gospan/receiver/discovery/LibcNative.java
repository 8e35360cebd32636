package io.gospan.receiver.discovery;

import jnr.ffi.Pointer;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;

/**
 * The libc functions discovery calls: opening a binary once so that what is inspected and what is
 * attached is one file ({@link PinnedFile}), and fanotify, which holds execs of binaries not judged yet
 * ({@link ExecHold}; fanotify(7), {@code sys/fanotify.h}). Public only because jnr-ffi generates its
 * implementation in another class loader; not part of gospan's API. Calls marked {@code @SaveError}
 * return -1 and set errno on failure.
 */
public interface LibcNative {
  @SaveError
  int open(String path, int flags);

  @SaveError
  int close(int fd);

  /** {@code dup2(2)}: {@code newFd} names what {@code oldFd} names, atomically closing what it named. */
  @SaveError
  int dup2(int oldFd, int newFd);

  @SaveError
  @ssize_t long read(int fd, Pointer buf, @size_t long count);

  @SaveError
  @ssize_t long write(int fd, Pointer buf, @size_t long count);

  /** {@code fds}: {@code struct pollfd} entries of 8 bytes (int fd, short events, short revents). */
  @SaveError
  int poll(Pointer fds, long nfds, int timeoutMs);

  @SaveError
  int eventfd(int initval, int flags);

  @SaveError
  int fanotify_init(int flags, int eventFileFlags);

  /** {@code mask}: a 64-bit {@code __u64}; {@code path} relative to {@code dirFd} ({@code AT_FDCWD} -100). */
  @SaveError
  int fanotify_mark(int fanotifyFd, int flags, long mask, int dirFd, String path);
}
