package io.gospan.receiver.bpf;

import jnr.constants.platform.Errno;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads the native libbpf once and routes its print callback into the
 * {@code io.gospan.receiver.bpf.libbpf} logger.
 *
 * <p>While a thread holds a {@link LogCapture}, libbpf's warnings and info lines printed on
 * that thread are also collected, so a failed load or attach can carry libbpf's own
 * explanation (and the verifier log) in its exception message.
 */
public final class Libbpf {

  private static final Logger LIBBPF_LOG = LoggerFactory.getLogger("io.gospan.receiver.bpf.libbpf");

  /** enum libbpf_print_level (libbpf src/libbpf.h). */
  private static final int LIBBPF_WARN = 0;
  private static final int LIBBPF_INFO = 1;

  /** sizeof(__va_list_tag) on x86-64 (System V psABI 3.5.7): a va_list copy is a memcpy. */
  private static final int VA_LIST_SIZE = 24;

  /** The most of one message kept in a capture; a verifier log can be megabytes. */
  private static final int MAX_CAPTURE_CHARS = 256 * 1024;

  private static final ThreadLocal<StringBuilder> CAPTURE = new ThreadLocal<>();

  private static volatile Libbpf instance;
  private static Throwable loadFailure;

  final LibbpfNative lib;
  final LibcNative libc;
  final Runtime runtime;
  /** Strongly referenced for the life of the process: libbpf keeps the function pointer. */
  private final LibbpfNative.PrintFn printFn;

  /**
   * jnr-ffi's choice of loader, read once, when jnr-ffi loads its first library (jnr-ffi 2.2's
   * {@code NativeLibraryLoader}): {@code true}, its default, generates a class implementing the whole
   * interface with ASM at each start; {@code false} returns a {@link java.lang.reflect.Proxy} that
   * binds each function on its first call.
   */
  static final String ASM_PROPERTY = "jnr.ffi.asm.enabled";

  /**
   * Sets {@link #ASM_PROPERTY} to {@code false} unless the command line set it: the proxy saves the
   * class generation at each start (in a fresh JVM, binding discovery's libc and this class's two
   * libraries: 64 ms median instead of 83 with a CDS archive, 143 instead of 169 without, and
   * ~0.04 s less CPU; docs/benchmarks.md, "jnr-ffi's proxy binding; the ServeHTTP programs in a
   * second object") and costs ~0.1 µs more a call ({@code epoll_wait}: ~0.17 µs through the
   * generated class, ~0.28 µs through the proxy), paid per poll of the ring buffer (at most 50 a
   * second), never per record. Process-wide, and decided by the first library jnr-ffi loads: discovery's
   * libc and the offsets module's Capstone decoder (which reads binaries before the probes load) set it
   * the same way. No effect once jnr-ffi has loaded a library.
   */
  static void preferProxyBinding() {
    if (System.getProperty(ASM_PROPERTY) == null) {
      System.setProperty(ASM_PROPERTY, "false");
    }
  }

  private Libbpf() {
    preferProxyBinding();
    this.lib =
        LibraryLoader.create(LibbpfNative.class)
            .failImmediately()
            .load("libbpf.so.1");
    this.libc = LibraryLoader.create(LibcNative.class).failImmediately().load("c");
    this.runtime = Runtime.getRuntime(lib);
    this.printFn = this::print;
    lib.libbpf_set_print(printFn);
  }

  /**
   * The loaded library.
   *
   * @throws BpfException when {@code libbpf.so.1} cannot be loaded (package libbpf1 missing)
   */
  public static Libbpf get() {
    Libbpf l = instance;
    if (l != null) {
      return l;
    }
    synchronized (Libbpf.class) {
      if (instance == null && loadFailure == null) {
        try {
          instance = new Libbpf();
        } catch (LinkageError | RuntimeException e) {
          loadFailure = e;
        }
      }
      if (instance == null) {
        throw new BpfException(
            "cannot load the native libbpf (libbpf.so.1, libbpf >= 1.0): install the libbpf1 package"
                + " (Debian/Ubuntu) or libbpf (Fedora): "
                + loadFailure.getMessage(),
            0);
      }
      return instance;
    }
  }

  private volatile Boolean attachCookies;

  /**
   * Whether uprobe programs can read their attach cookie ({@code bpf_get_attach_cookie}, kernel &gt;= 5.15):
   * probed once by loading a tiny program ({@code libbpf_probe_bpf_helper}); false when the probe fails.
   */
  public boolean attachCookies() {
    Boolean b = attachCookies;
    if (b == null) {
      final int bpfProgTypeKprobe = 2; // uprobes are kprobe-type programs (linux/bpf.h)
      final int bpfFuncGetAttachCookie = 174; // linux/bpf.h, enum bpf_func_id
      b = lib.libbpf_probe_bpf_helper(bpfProgTypeKprobe, bpfFuncGetAttachCookie, null) == 1;
      attachCookies = b;
    }
    return b;
  }

  /** Number of possible CPUs, the slot count of a per-CPU map's value. */
  public int possibleCpus() {
    int n = lib.libbpf_num_possible_cpus();
    if (n <= 0) {
      throw new BpfException("libbpf_num_possible_cpus failed", -n);
    }
    return n;
  }

  /** errno saved by the last {@code @SaveError} call on this thread. */
  int lastErrno() {
    return runtime.getLastError();
  }

  /** "ENOENT (No such file or directory)" for a positive or negative errno. */
  static String describeErrno(int errno) {
    int e = Math.abs(errno);
    Errno known = Errno.valueOf(e);
    if (known == null || !known.defined()) {
      return "errno " + e;
    }
    return known.name() + " (" + known.description() + ")";
  }

  /** Starts collecting libbpf's messages printed on this thread until {@link LogCapture#close()}. */
  public static LogCapture captureLog() {
    return new LogCapture();
  }

  /** libbpf's messages printed on one thread while this capture is open. */
  public static final class LogCapture implements AutoCloseable {
    private final StringBuilder previous;
    private final StringBuilder text = new StringBuilder();

    private LogCapture() {
      previous = CAPTURE.get();
      CAPTURE.set(text);
    }

    /** What libbpf printed so far, each line as libbpf wrote it. */
    public String text() {
      return text.toString();
    }

    @Override
    public void close() {
      if (previous == null) {
        CAPTURE.remove();
      } else {
        CAPTURE.set(previous);
        previous.append(text);
      }
    }
  }

  private int print(int level, Pointer format, Pointer vaList) {
    try {
      StringBuilder capture = CAPTURE.get();
      boolean wanted =
          capture != null && level <= LIBBPF_INFO
              || level == LIBBPF_WARN && LIBBPF_LOG.isWarnEnabled()
              || level == LIBBPF_INFO && LIBBPF_LOG.isInfoEnabled()
              || LIBBPF_LOG.isDebugEnabled();
      if (!wanted) {
        return 0;
      }
      String message = format(format, vaList);
      if (capture != null && level <= LIBBPF_INFO) {
        if (capture.length() + message.length() <= MAX_CAPTURE_CHARS) {
          capture.append(message);
        }
        // The caller reports the failure with this text; log it only at debug here.
        LIBBPF_LOG.debug("{}", message.stripTrailing());
      } else if (level == LIBBPF_WARN) {
        LIBBPF_LOG.warn("{}", message.stripTrailing());
      } else if (level == LIBBPF_INFO) {
        LIBBPF_LOG.info("{}", message.stripTrailing());
      } else {
        LIBBPF_LOG.debug("{}", message.stripTrailing());
      }
    } catch (RuntimeException e) {
      // Never let an exception unwind into native code.
      LIBBPF_LOG.debug("formatting a libbpf message failed", e);
    }
    return 0;
  }

  /** vsnprintf twice: once on a copy of the va_list to size the buffer, once to format. */
  private String format(Pointer format, Pointer vaList) {
    Pointer copy = Memory.allocateDirect(runtime, VA_LIST_SIZE);
    copy.transferFrom(0, vaList, 0, VA_LIST_SIZE);
    int length = libc.vsnprintf(null, 0, format, copy);
    if (length < 0) {
      return format.getString(0);
    }
    Pointer buf = Memory.allocateDirect(runtime, length + 1);
    libc.vsnprintf(buf, length + 1, format, vaList);
    return buf.getString(0, length, java.nio.charset.StandardCharsets.UTF_8);
  }
}
