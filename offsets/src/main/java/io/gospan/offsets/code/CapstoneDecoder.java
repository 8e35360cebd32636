package io.gospan.offsets.code;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.byref.LongLongByReference;
import jnr.ffi.types.size_t;

/**
 * {@link X86Decoder} backed by Capstone (BSD-3, capstone-engine.org), the native library {@code libcapstone}
 * 4.x or 5.x, called through jnr-ffi with {@code cs_disasm_iter}: one instruction per call, Intel syntax,
 * no detail. Capstone's x86 decoder is LLVM's, tested against other disassemblers and fuzzed.
 *
 * <p>Layout facts used (capstone.h of 4.0 and 5.0): {@code cs_insn} is {@code {uint32 id; uint64 address;
 * uint16 size; uint8 bytes[16 (4.x) | 24 (5.x)]; char mnemonic[32]; char op_str[160]; cs_detail *detail}};
 * {@code CS_ARCH_X86} = 3, {@code CS_MODE_64} = 8 in both. Other major versions are refused.
 *
 * <p>One process-wide handle, used under a lock (a Capstone handle is not thread-safe).
 */
public final class CapstoneDecoder implements X86Decoder {
  private static final int CS_ARCH_X86 = 3;
  private static final int CS_MODE_64 = 1 << 3;
  private static final int MNEMONIC_SIZE = 32;
  private static final int OP_STR_SIZE = 160;
  private static final int INSN_SIZE_OFFSET = 16;

  /** The C functions used. {@code csh} is a {@code size_t}. */
  public interface Native {
    int cs_version(IntByReference major, IntByReference minor);

    int cs_open(int arch, int mode, LongLongByReference handle);

    int cs_close(LongLongByReference handle);

    Pointer cs_malloc(@size_t long handle);

    void cs_free(Pointer insn, @size_t long count);

    /** {@code code}, {@code size}, {@code address}: pointers to a {@code uint8_t*}, a size_t, a uint64. */
    boolean cs_disasm_iter(@size_t long handle, Pointer code, Pointer size, Pointer address, Pointer insn);

    String cs_strerror(int code);

    /** {@code type} {@code CS_OPT_DETAIL} (2), {@code value} {@code CS_OPT_ON} (3): operand details kept. */
    int cs_option(@size_t long handle, int type, @size_t long value);

    /**
     * The registers an instruction (decoded with details) reads and writes, explicitly or implicitly:
     * {@code cs_regs} is {@code uint16_t[64]}, the counts {@code uint8_t}.
     */
    int cs_regs_access(@size_t long handle, Pointer insn, Pointer regsRead, Pointer readCount, Pointer regsWrite,
        Pointer writeCount);

    /** The name of register {@code id}, e.g. {@code rbx}, {@code r9d}; null for an invalid id. */
    String cs_reg_name(@size_t long handle, int id);
  }

  private static final int CS_OPT_DETAIL = 2;
  private static final int CS_OPT_ON = 3;

  private static volatile CapstoneDecoder instance;
  private static DecoderUnavailableException loadFailure;

  private final Native lib;
  private final Runtime runtime;
  private final long handle;
  private final Pointer insn;
  private final int mnemonicOffset;
  private final String version;

  private CapstoneDecoder(Native lib, int major, int minor) throws DecoderUnavailableException {
    this.lib = lib;
    this.runtime = Runtime.getRuntime(lib);
    this.version = major + "." + minor;
    int bytesLength;
    if (major == 4) {
      bytesLength = 16;
    } else if (major == 5) {
      bytesLength = 24;
    } else {
      throw new DecoderUnavailableException("libcapstone " + version
          + ": only 4.x and 5.x are supported (their cs_insn layout is known)", null);
    }
    this.mnemonicOffset = INSN_SIZE_OFFSET + 2 + bytesLength;
    LongLongByReference h = new LongLongByReference();
    int err = lib.cs_open(CS_ARCH_X86, CS_MODE_64, h);
    if (err != 0) {
      throw new DecoderUnavailableException("libcapstone " + version + ": cs_open(x86, 64-bit) failed: "
          + lib.cs_strerror(err), null);
    }
    this.handle = h.getValue();
    this.insn = lib.cs_malloc(handle);
    if (insn == null) {
      throw new DecoderUnavailableException("libcapstone " + version + ": cs_malloc failed", null);
    }
  }

  /**
   * The process-wide decoder, loaded on first use (kept for the life of the process).
   *
   * @throws DecoderUnavailableException {@code libcapstone.so.5} / {@code libcapstone.so.4} cannot be
   *     loaded or is of an unknown version (the failure is remembered: later calls throw the same)
   */
  public static CapstoneDecoder get() throws DecoderUnavailableException {
    CapstoneDecoder d = instance;
    if (d != null) {
      return d;
    }
    synchronized (CapstoneDecoder.class) {
      if (instance == null && loadFailure == null) {
        try {
          instance = load();
        } catch (DecoderUnavailableException e) {
          loadFailure = e;
        }
      }
      if (instance == null) {
        throw loadFailure;
      }
      return instance;
    }
  }

  private static CapstoneDecoder load() throws DecoderUnavailableException {
    // jnr-ffi's proxy binding, as the sidecar's libbpf and libc (receiver's Libbpf#preferProxyBinding):
    // jnr-ffi reads jnr.ffi.asm.enabled once, at the first library it loads, which is this one when a
    // binary is read before the probes load; unless the command line chose
    if (System.getProperty("jnr.ffi.asm.enabled") == null) {
      System.setProperty("jnr.ffi.asm.enabled", "false");
    }
    Throwable last = null;
    for (String name : List.of("libcapstone.so.5", "libcapstone.so.4")) {
      Native lib;
      try {
        lib = LibraryLoader.create(Native.class).failImmediately().load(name);
      } catch (LinkageError | RuntimeException e) {
        last = e;
        continue;
      }
      IntByReference major = new IntByReference();
      IntByReference minor = new IntByReference();
      lib.cs_version(major, minor);
      return new CapstoneDecoder(lib, major.intValue(), minor.intValue());
    }
    throw new DecoderUnavailableException("cannot load the x86-64 decoder libcapstone (libcapstone.so.5 or"
        + " libcapstone.so.4): install the libcapstone5 or libcapstone4 package (Debian/Ubuntu): "
        + (last == null ? "" : last.getMessage()), last);
  }

  /** A second handle with operand details on, for {@link #decodeWithWrites}; created on first use. */
  private long detailHandle;
  private Pointer detailInsn;

  @Override
  public int decodeWithWrites(byte[] code, long address, int maxInstructions,
      java.util.function.BiConsumer<Instruction, java.util.Set<String>> sink) {
    if (code.length == 0 || maxInstructions <= 0) {
      return 0;
    }
    Pointer buf = Memory.allocateDirect(runtime, code.length);
    buf.put(0, code, 0, code.length);
    Pointer cells = Memory.allocateDirect(runtime, 24);
    cells.putAddress(0, buf.address());
    cells.putLong(8, code.length);
    cells.putLong(16, address);
    Pointer regs = Memory.allocateDirect(runtime, 2 * 64 * 2 + 2);
    try {
      synchronized (this) {
        if (detailInsn == null) {
          LongLongByReference h = new LongLongByReference();
          if (lib.cs_open(CS_ARCH_X86, CS_MODE_64, h) != 0) {
            return 0;
          }
          detailHandle = h.getValue();
          if (lib.cs_option(detailHandle, CS_OPT_DETAIL, CS_OPT_ON) != 0) {
            return 0;
          }
          detailInsn = lib.cs_malloc(detailHandle);
          if (detailInsn == null) {
            return 0;
          }
        }
        for (int count = 0; count < maxInstructions && cells.getLong(8) > 0; count++) {
          long at = cells.getLong(16);
          if (!lib.cs_disasm_iter(detailHandle, cells.slice(0, 8), cells.slice(8, 8), cells.slice(16, 8), detailInsn)) {
            break;
          }
          int length = detailInsn.getShort(INSN_SIZE_OFFSET) & 0xffff;
          if (length <= 0 || cells.getLong(16) != at + length) {
            break;
          }
          java.util.Set<String> writes = new java.util.LinkedHashSet<>();
          if (lib.cs_regs_access(detailHandle, detailInsn, regs.slice(0, 128), regs.slice(256, 1), regs.slice(128, 128),
              regs.slice(257, 1)) != 0) {
            break; // no register information: the caller sees the decoding stop here
          }
          int n = regs.getByte(257) & 0xff;
          for (int i = 0; i < n && i < 64; i++) {
            String name = lib.cs_reg_name(detailHandle, regs.getShort(128 + 2 * i) & 0xffff);
            if (name != null) {
              writes.add(name);
            }
          }
          sink.accept(new Instruction(at, length, cstring(detailInsn, mnemonicOffset, MNEMONIC_SIZE),
              cstring(detailInsn, mnemonicOffset + MNEMONIC_SIZE, OP_STR_SIZE)), writes);
        }
        return (int) (cells.getLong(16) - address);
      }
    } finally {
      java.lang.ref.Reference.reachabilityFence(buf);
      java.lang.ref.Reference.reachabilityFence(cells);
      java.lang.ref.Reference.reachabilityFence(regs);
    }
  }

  /** The library's version, e.g. {@code 4.0}. */
  public String version() {
    return version;
  }

  @Override
  public int decode(byte[] code, long address, int maxInstructions, Consumer<Instruction> sink) {
    if (code.length == 0 || maxInstructions <= 0) {
      return 0;
    }
    Pointer buf = Memory.allocateDirect(runtime, code.length);
    buf.put(0, code, 0, code.length);
    // The three in/out cells cs_disasm_iter advances: code pointer, bytes left, address.
    Pointer cells = Memory.allocateDirect(runtime, 24);
    cells.putAddress(0, buf.address());
    cells.putLong(8, code.length);
    cells.putLong(16, address);
    Pointer codeCell = cells.slice(0, 8);
    Pointer sizeCell = cells.slice(8, 8);
    Pointer addrCell = cells.slice(16, 8);
    try {
      synchronized (this) {
        for (int count = 0; count < maxInstructions && cells.getLong(8) > 0; count++) {
          long at = cells.getLong(16);
          if (!lib.cs_disasm_iter(handle, codeCell, sizeCell, addrCell, insn)) {
            break;
          }
          int length = insn.getShort(INSN_SIZE_OFFSET) & 0xffff;
          if (length <= 0 || cells.getLong(16) != at + length) {
            break; // never seen; guards the loop against a library that does not advance
          }
          sink.accept(new Instruction(at, length, cstring(insn, mnemonicOffset, MNEMONIC_SIZE),
              cstring(insn, mnemonicOffset + MNEMONIC_SIZE, OP_STR_SIZE)));
        }
        return (int) (cells.getLong(16) - address);
      }
    } finally {
      // The cells hold only buf's address: without this buf could be freed while capstone reads it.
      java.lang.ref.Reference.reachabilityFence(buf);
      java.lang.ref.Reference.reachabilityFence(cells);
    }
  }

  private static String cstring(Pointer p, int offset, int max) {
    byte[] b = new byte[max];
    p.get(offset, b, 0, max);
    int n = 0;
    while (n < max && b[n] != 0) {
      n++;
    }
    return new String(b, 0, n, StandardCharsets.US_ASCII);
  }
}
