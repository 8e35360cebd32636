package io.gospan.receiver.bpf;

import jnr.constants.platform.Errno;

/**
 * A libbpf call failed. The message says what was attempted, the errno, what it most likely
 * means for gospan (e.g. missing privileges), and libbpf's own log lines when it printed any.
 */
public class BpfException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int errno;

  public BpfException(String message, int errno) {
    super(message);
    this.errno = Math.abs(errno);
  }

  /** The positive errno of the failed call, 0 when none applies. */
  public int errno() {
    return errno;
  }

  static BpfException of(String action, int errno, String libbpfLog) {
    StringBuilder m = new StringBuilder(action).append(" failed: ").append(Libbpf.describeErrno(errno));
    boolean verifier = libbpfLog != null && libbpfLog.contains("-- BEGIN PROG LOAD LOG --");
    String hint = verifier ? null : hint(errno); // a rejected program's EACCES is not about privileges
    if (hint != null) {
      m.append(". ").append(hint);
    }
    if (libbpfLog != null && !libbpfLog.isBlank()) {
      m.append("\nlibbpf says:\n").append(libbpfLog.stripTrailing());
    }
    return new BpfException(m.toString(), errno);
  }

  private static String hint(int errno) {
    int e = Math.abs(errno);
    // EACCES: also perf_event_open of a uprobe without CAP_SYS_ADMIN
    if (e == Errno.EPERM.intValue() || e == Errno.EACCES.intValue()) {
      return "gospan needs root, or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE, and CAP_SYS_ADMIN"
          + " for uprobes on kernels with the 2025 uprobe permission fix (and before 5.8), to load"
          + " BPF programs and attach uprobes";
    }
    return null;
  }
}
