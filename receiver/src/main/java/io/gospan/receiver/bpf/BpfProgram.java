package io.gospan.receiver.bpf;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import jnr.constants.platform.Errno;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * One program of a {@link BpfObject}. Only entry uprobes are offered: gospan never uses
 * uretprobes on Go code (Go moves goroutine stacks, and a return probe's trampoline
 * address on a moved stack crashes the target).
 */
public final class BpfProgram {

  /** An attach target meaning every process that maps the binary. */
  public static final int ALL_PIDS = -1;

  /**
   * sizeof(struct bpf_uprobe_opts) in libbpf 1.1 (src/libbpf.h): sz@0, ref_ctr_offset@8,
   * bpf_cookie@16, retprobe@24, func_name@32. Older or newer libbpf accept it by {@code sz}.
   */
  private static final int UPROBE_OPTS_SIZE = 40;

  private static final int OPTS_COOKIE = 16;
  private static final int OPTS_FUNC_NAME = 32;

  private final BpfObject object;
  private final Pointer prog;
  private final String name;

  BpfProgram(BpfObject object, Pointer prog, String name) {
    this.object = object;
    this.prog = prog;
    this.name = name;
  }

  public String name() {
    return name;
  }

  /** The program's fd; valid once the object is loaded. */
  public int fd() {
    object.ensureLoaded();
    return object.libbpf().lib.bpf_program__fd(prog);
  }

  /**
   * Attaches this program as an entry uprobe at a file offset of a binary.
   *
   * @param binary the executable (for another mount namespace, e.g. {@code /proc/<pid>/exe})
   * @param fileOffset file offset of the instruction, bytes (not a virtual address)
   * @param pid one process, or {@link #ALL_PIDS}
   * @param cookie a value the program reads with {@code bpf_get_attach_cookie} (kernel >= 5.15)
   * @throws BpfException when the binary does not exist or the kernel refuses the uprobe
   */
  public BpfLink attachUprobe(Path binary, long fileOffset, int pid, long cookie) {
    if (fileOffset < 0) {
      throw new IllegalArgumentException("negative file offset " + fileOffset);
    }
    return attach(binary, null, fileOffset, pid, cookie);
  }

  /**
   * Attaches this program as an entry uprobe at the start of a function found by its ELF
   * symbol name (libbpf resolves it in the binary's {@code .symtab}/{@code .dynsym}; stripped
   * Go binaries have no symbols: resolve through pclntab and use the file-offset form).
   *
   * @param functionName e.g. {@code google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader}
   * @throws BpfException when the binary does not exist, has no such symbol, or the kernel
   *     refuses the uprobe
   */
  public BpfLink attachUprobe(Path binary, String functionName, int pid, long cookie) {
    if (functionName == null || functionName.isEmpty()) {
      throw new IllegalArgumentException("function name is empty");
    }
    return attach(binary, functionName, 0, pid, cookie);
  }

  /**
   * Attaches this program to a raw kernel tracepoint (e.g. {@code sched_process_exec}); needs
   * no tracefs mount.
   *
   * @throws BpfException when the kernel has no such tracepoint or refuses the attach
   */
  public BpfLink attachRawTracepoint(String tracepoint) {
    object.ensureLoaded();
    String action = "attaching " + name + " to raw tracepoint " + tracepoint;
    Libbpf libbpf = object.libbpf();
    try (Libbpf.LogCapture log = Libbpf.captureLog()) {
      Pointer link = libbpf.lib.bpf_program__attach_raw_tracepoint(prog, tracepoint);
      if (link == null) {
        throw BpfException.of(action, libbpf.lastErrno(), log.text());
      }
      BpfLink l = new BpfLink(object, link, action.substring("attaching ".length()));
      object.track(l);
      return l;
    }
  }

  private BpfLink attach(Path binary, String functionName, long offset, int pid, long cookie) {
    object.ensureLoaded();
    String target =
        (functionName != null ? "function '" + functionName + "'" : "offset 0x" + Long.toHexString(offset))
            + " of " + binary + (pid == ALL_PIDS ? " (all processes)" : " (pid " + pid + ")");
    String action = "attaching uprobe " + name + " to " + target;
    if (!Files.isRegularFile(binary)) {
      throw new BpfException(action + " failed: " + binary + " does not exist or is not a file", Errno.ENOENT.intValue());
    }
    Libbpf libbpf = object.libbpf();
    Pointer opts = Memory.allocateDirect(libbpf.runtime, UPROBE_OPTS_SIZE, true);
    opts.putLong(0, UPROBE_OPTS_SIZE);
    opts.putLong(OPTS_COOKIE, cookie);
    Pointer fn = null;
    if (functionName != null) {
      byte[] bytes = functionName.getBytes(StandardCharsets.UTF_8);
      fn = Memory.allocateDirect(libbpf.runtime, bytes.length + 1, true);
      fn.put(0, bytes, 0, bytes.length);
      opts.putPointer(OPTS_FUNC_NAME, fn);
    }
    try (Libbpf.LogCapture log = Libbpf.captureLog()) {
      Pointer link =
          libbpf.lib.bpf_program__attach_uprobe_opts(prog, pid, binary.toString(), offset, opts);
      if (link == null) {
        int errno = libbpf.lastErrno();
        if (functionName != null && errno == Errno.ENOENT.intValue()) {
          action += " (no ELF symbol of that name: is the binary stripped, or the name misspelt?)";
        }
        throw BpfException.of(action, errno, log.text());
      }
      BpfLink l = new BpfLink(object, link, action.substring("attaching ".length()));
      object.track(l);
      return l;
    } finally {
      // keep `fn` reachable until libbpf returned
      java.lang.ref.Reference.reachabilityFence(fn);
    }
  }
}
