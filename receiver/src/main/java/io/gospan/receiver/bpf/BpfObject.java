package io.gospan.receiver.bpf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import jnr.constants.platform.Errno;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * A BPF object (an ELF {@code .bpf.o}) opened through libbpf: {@code bpf_object__open_mem},
 * then {@link #load()}, then programs and maps by name. Closing it ({@code bpf_object__close})
 * destroys its maps and programs; links must be closed first (links keep programs alive in
 * the kernel). Not thread-safe: one owner opens, loads and closes it.
 */
public final class BpfObject implements AutoCloseable {

  /** Class-path folder of the objects built from {@code bpf/} and packaged in the receiver jar. */
  public static final String RESOURCE_DIR = "/io/gospan/bpf/";

  private final Libbpf libbpf;
  private final String name;
  /** libbpf reads the ELF from this buffer during open and load; kept until close. */
  private final Pointer elf;
  private Pointer obj;
  private boolean loaded;
  private final List<BpfLink> links = new ArrayList<>();

  private BpfObject(Libbpf libbpf, String name, byte[] bytes) {
    this.libbpf = libbpf;
    this.name = name;
    this.elf = Memory.allocateDirect(libbpf.runtime, bytes.length);
    elf.put(0, bytes, 0, bytes.length);
    // struct bpf_object_open_opts (libbpf src/libbpf.h): sz@0, object_name@8; later fields
    // are zero by sz. The name appears in libbpf's messages and as the object's name.
    byte[] nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    Pointer objectName = Memory.allocateDirect(libbpf.runtime, nameBytes.length + 1, true);
    objectName.put(0, nameBytes, 0, nameBytes.length);
    Pointer opts = Memory.allocateDirect(libbpf.runtime, 16, true);
    opts.putLong(0, 16);
    opts.putPointer(8, objectName);
    try (Libbpf.LogCapture log = Libbpf.captureLog()) {
      Pointer o = libbpf.lib.bpf_object__open_mem(elf, bytes.length, opts);
      if (o == null) {
        throw BpfException.of("opening BPF object " + name, libbpf.lastErrno(), log.text());
      }
      this.obj = o;
    } finally {
      java.lang.ref.Reference.reachabilityFence(objectName);
    }
  }

  /**
   * Opens an object from its ELF bytes.
   *
   * @param name a name for messages, e.g. {@code grpc.bpf.o}
   * @throws BpfException when libbpf cannot parse it (not a BPF ELF, bad BTF, ...)
   */
  public static BpfObject open(String name, byte[] elfBytes) {
    return new BpfObject(Libbpf.get(), name, Objects.requireNonNull(elfBytes, "elfBytes"));
  }

  /**
   * Opens an object file.
   *
   * @throws BpfException when the file cannot be read or parsed
   */
  public static BpfObject open(Path file) {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new BpfException("reading BPF object " + file + " failed: " + e, 0);
    }
    return open(file.getFileName().toString(), bytes);
  }

  /**
   * Opens an object packaged as a class-path resource under {@link #RESOURCE_DIR}.
   *
   * @param fileName e.g. {@code grpc.bpf.o}
   * @throws BpfException when the resource is missing (the build did not compile {@code bpf/})
   */
  public static BpfObject openResource(String fileName) {
    String resource = RESOURCE_DIR + fileName;
    try (InputStream in = BpfObject.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new BpfException(
            "BPF object " + resource + " is not on the class path: the receiver build compiles"
                + " bpf/*.bpf.c (make -C bpf) and packages the objects there",
            0);
      }
      return open(fileName, in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + resource, e);
    }
  }

  /** The name given at open. */
  public String name() {
    return name;
  }

  /**
   * Loads every program and creates every map in the kernel ({@code bpf_object__load}).
   * Map sizes and initial values must be set before.
   *
   * @throws BpfException with the verifier log when a program is rejected, with a privilege
   *     hint on EPERM
   */
  public BpfObject load() {
    ensureOpen();
    if (loaded) {
      throw new IllegalStateException(name + " is already loaded");
    }
    try (Libbpf.LogCapture log = Libbpf.captureLog()) {
      int err = libbpf.lib.bpf_object__load(obj);
      if (err < 0) {
        String text = log.text();
        String action = "loading BPF object " + name;
        int rejected = text.indexOf("-- BEGIN PROG LOAD LOG --");
        if (rejected >= 0) {
          action += " (the verifier rejected a program; its log is below)";
        }
        throw BpfException.of(action, -err, text);
      }
    }
    loaded = true;
    return this;
  }

  /**
   * A program by its C function name.
   *
   * @throws BpfException when the object has no such program
   */
  public BpfProgram program(String programName) {
    ensureOpen();
    Pointer p = libbpf.lib.bpf_object__find_program_by_name(obj, programName);
    if (p == null) {
      throw new BpfException(
          "BPF object " + name + " has no program '" + programName + "' (it has " + programNames() + ")",
          2);
    }
    return new BpfProgram(this, p, programName);
  }

  /**
   * A map by its C name.
   *
   * @throws BpfException when the object has no such map
   */
  public BpfMap map(String mapName) {
    ensureOpen();
    Pointer m = libbpf.lib.bpf_object__find_map_by_name(obj, mapName);
    if (m == null) {
      throw new BpfException("BPF object " + name + " has no map '" + mapName + "'", Errno.ENOENT.intValue());
    }
    return new BpfMap(this, m, mapName);
  }

  /** BTF_KIND_DATASEC (include/uapi/linux/btf.h). */
  private static final int BTF_KIND_DATASEC = 15;

  /** sizeof(struct btf_type): name_off, info, size/type. */
  private static final int BTF_TYPE_SIZE = 12;

  /** sizeof(struct btf_var_secinfo): type, offset, size. */
  private static final int BTF_VAR_SECINFO_SIZE = 12;

  /**
   * Sets the initial value of a global variable of the object, e.g. a {@code const volatile}
   * setting in {@code .rodata}, before {@link #load()} (the verifier then treats it as a
   * constant). The variable is found through the object's BTF (its DATASEC entry).
   *
   * @param value exactly the variable's bytes, little-endian
   * @throws BpfException when the object has no such global
   * @throws IllegalStateException when already loaded
   * @throws IllegalArgumentException when the size differs from the variable's
   */
  public void setGlobal(String variable, byte[] value) {
    ensureOpen();
    if (loaded) {
      throw new IllegalStateException("globals of " + name + " are frozen once it is loaded");
    }
    Pointer btf = libbpf.lib.bpf_object__btf(obj);
    if (btf == null) {
      throw new BpfException("BPF object " + name + " has no BTF: build it with clang -g", Errno.EINVAL.intValue());
    }
    for (String section : new String[] {".rodata", ".data", ".bss"}) {
      int id = libbpf.lib.btf__find_by_name_kind(btf, section, BTF_KIND_DATASEC);
      if (id <= 0) {
        continue;
      }
      Pointer datasec = libbpf.lib.btf__type_by_id(btf, id);
      int vlen = datasec.getInt(4) & 0xffff;
      for (int i = 0; i < vlen; i++) {
        long at = BTF_TYPE_SIZE + (long) i * BTF_VAR_SECINFO_SIZE;
        int varType = datasec.getInt(at);
        int varOffset = datasec.getInt(at + 4);
        int varSize = datasec.getInt(at + 8);
        Pointer var = libbpf.lib.btf__type_by_id(btf, varType);
        if (!variable.equals(libbpf.lib.btf__name_by_offset(btf, var.getInt(0)))) {
          continue;
        }
        if (value.length != varSize) {
          throw new IllegalArgumentException(
              variable + " is " + varSize + " bytes, got " + value.length);
        }
        Pointer map = internalMap(section);
        Pointer size = Memory.allocateDirect(libbpf.runtime, 8, true);
        Pointer data = libbpf.lib.bpf_map__initial_value(map, size);
        if (data == null || size.getLong(0) < varOffset + varSize) {
          throw new BpfException("cannot reach the " + section + " data of " + name, Errno.EINVAL.intValue());
        }
        data.put(varOffset, value, 0, value.length);
        return;
      }
    }
    throw new BpfException("BPF object " + name + " has no global variable '" + variable + "'", Errno.ENOENT.intValue());
  }

  /** The libbpf-internal map holding a data section ({@code <obj>.rodata} etc.). */
  private Pointer internalMap(String section) {
    for (Pointer m = libbpf.lib.bpf_object__next_map(obj, null);
        m != null;
        m = libbpf.lib.bpf_object__next_map(obj, m)) {
      if (libbpf.lib.bpf_map__name(m).endsWith(section)) {
        return m;
      }
    }
    throw new BpfException("BPF object " + name + " has no " + section + " map", Errno.ENOENT.intValue());
  }

  /** Names of the object's programs, in ELF order. */
  public List<String> programNames() {
    ensureOpen();
    List<String> names = new ArrayList<>();
    for (Pointer p = libbpf.lib.bpf_object__next_program(obj, null);
        p != null;
        p = libbpf.lib.bpf_object__next_program(obj, p)) {
      names.add(libbpf.lib.bpf_program__name(p));
    }
    return names;
  }

  /** Whether {@link #load()} succeeded. */
  public boolean isLoaded() {
    return loaded;
  }

  Libbpf libbpf() {
    return libbpf;
  }

  synchronized void track(BpfLink link) {
    links.add(link);
  }

  synchronized void untrack(BpfLink link) {
    links.remove(link);
  }

  void ensureOpen() {
    if (obj == null) {
      throw new IllegalStateException("BPF object " + name + " is closed");
    }
  }

  void ensureLoaded() {
    ensureOpen();
    if (!loaded) {
      throw new IllegalStateException("BPF object " + name + " is not loaded yet");
    }
  }

  /** Destroys the links still open, then the object's programs and maps. Idempotent. */
  @Override
  public void close() {
    if (obj == null) {
      return;
    }
    List<BpfLink> open;
    synchronized (this) {
      open = new ArrayList<>(links);
    }
    for (BpfLink link : open) {
      link.close();
    }
    libbpf.lib.bpf_object__close(obj);
    obj = null;
  }
}
