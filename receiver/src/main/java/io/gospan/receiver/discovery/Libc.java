package io.gospan.receiver.discovery;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;

/** libc through jnr-ffi, loaded once ({@link LibcNative}). */
final class Libc {
  private static volatile Libc instance;

  final LibcNative lib;
  final Runtime runtime;

  private Libc() {
    // jnr-ffi's proxy binding instead of a class generated with ASM at each start, unless the command
    // line chose (io.gospan.receiver.bpf.Libbpf#preferProxyBinding; whichever library loads first decides).
    if (System.getProperty("jnr.ffi.asm.enabled") == null) {
      System.setProperty("jnr.ffi.asm.enabled", "false");
    }
    this.lib = LibraryLoader.create(LibcNative.class).failImmediately().load("c");
    this.runtime = Runtime.getRuntime(lib);
  }

  /** @throws UnsatisfiedLinkError when libc cannot be loaded */
  static Libc get() {
    Libc l = instance;
    if (l == null) {
      synchronized (Libc.class) {
        if (instance == null) {
          instance = new Libc();
        }
        l = instance;
      }
    }
    return l;
  }

  /** errno of the last call marked {@code @SaveError} on this thread. */
  int errno() {
    return runtime.getLastError();
  }

  /** "ENOENT (No such file or directory)" style text for an errno. */
  static String describe(int errno) {
    jnr.constants.platform.Errno e = jnr.constants.platform.Errno.valueOf(errno);
    return e == null || e == jnr.constants.platform.Errno.__UNKNOWN_CONSTANT__ ? "errno " + errno : e.name() + " (" + e.description() + ")";
  }
}
