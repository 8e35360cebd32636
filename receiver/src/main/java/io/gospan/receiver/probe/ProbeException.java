package io.gospan.receiver.probe;

/**
 * The kernel or libbpf refused a probe operation (attach, the exec tracepoint): the message is
 * libbpf's one line, with the errno's name where known (e.g. {@code EACCES} without
 * {@code CAP_SYS_ADMIN}, {@code ENOENT} when the binary vanished).
 */
public final class ProbeException extends RuntimeException {
  ProbeException(RuntimeException cause) {
    super(cause.getMessage(), cause);
  }

  /**
   * Whether the kernel refused for lack of privileges: errno {@code EACCES} (13) or {@code EPERM}
   * (1), asm-generic/errno-base.h (a uprobe without {@code CAP_SYS_ADMIN} on recent kernels).
   */
  public boolean permissionDenied() {
    return getCause() instanceof io.gospan.receiver.bpf.BpfException b && (b.errno() == 13 || b.errno() == 1);
  }
}
