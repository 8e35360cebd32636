package io.gospan.receiver.bpf;

/**
 * The scheduling priority of the calling thread: Linux keeps a nice value per thread ({@code
 * setpriority(PRIO_PROCESS, tid, nice)}, man 2 setpriority, "a thread's nice value"), which the
 * JVM does not set (Java thread priorities are ignored on Linux by default).
 */
public final class ThreadPriority {
  private static final int PRIO_PROCESS = 0;

  private ThreadPriority() {}

  /**
   * Sets the calling thread's nice value (-20 highest .. 19 lowest). Lowering it below the current
   * value needs {@code CAP_SYS_NICE} (root has it).
   *
   * @return 0 when set, else the errno (EACCES, EPERM: not permitted)
   * @throws BpfException when libc cannot be loaded
   */
  public static int setCurrentThreadNice(int nice) {
    Libbpf l = Libbpf.get();
    int tid = l.libc.gettid();
    return l.libc.setpriority(PRIO_PROCESS, tid, nice) == 0 ? 0 : l.lastErrno();
  }
}
