package io.gospan.receiver.bpf;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import jnr.constants.platform.Errno;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * One map of a {@link BpfObject}. Keys and values are raw bytes in the C layout (see
 * {@link StructLayout}). For per-CPU maps a value is {@code possibleCpus} slots of
 * {@code valueSize} rounded up to 8 bytes, as the kernel returns them.
 */
public final class BpfMap {

  /** enum bpf_map_type values (include/uapi/linux/bpf.h). */
  static final int BPF_MAP_TYPE_PERCPU_HASH = 5;
  static final int BPF_MAP_TYPE_PERCPU_ARRAY = 6;
  static final int BPF_MAP_TYPE_LRU_PERCPU_HASH = 10;
  static final int BPF_MAP_TYPE_RINGBUF = 27;

  /** Update flags (include/uapi/linux/bpf.h). */
  public static final long BPF_ANY = 0;
  public static final long BPF_NOEXIST = 1;
  public static final long BPF_EXIST = 2;

  private final BpfObject object;
  private final Pointer map;
  private final String name;

  BpfMap(BpfObject object, Pointer map, String name) {
    this.object = object;
    this.map = map;
    this.name = name;
  }

  public String name() {
    return name;
  }

  /** The map's fd; valid once the object is loaded. */
  public int fd() {
    object.ensureLoaded();
    return lib().bpf_map__fd(map);
  }

  public int type() {
    return lib().bpf_map__type(map);
  }

  /** Key size, bytes. */
  public int keySize() {
    return lib().bpf_map__key_size(map);
  }

  /** Value size of one slot, bytes, as declared in C. */
  public int valueSize() {
    return lib().bpf_map__value_size(map);
  }

  public int maxEntries() {
    return lib().bpf_map__max_entries(map);
  }

  public boolean isPerCpu() {
    int t = type();
    return t == BPF_MAP_TYPE_PERCPU_HASH
        || t == BPF_MAP_TYPE_PERCPU_ARRAY
        || t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
  }

  /** Bytes of a whole value as {@link #lookup} returns it: one slot, or one per possible CPU. */
  public int fullValueSize() {
    if (!isPerCpu()) {
      return valueSize();
    }
    return ((valueSize() + 7) & ~7) * object.libbpf().possibleCpus();
  }

  /**
   * Sets the entry count (for a ring buffer: its size in bytes, a power of two multiple of
   * the page size). Only before {@link BpfObject#load()}.
   *
   * @throws BpfException when libbpf refuses (object already loaded)
   */
  public void setMaxEntries(int maxEntries) {
    object.ensureOpen();
    int err = lib().bpf_map__set_max_entries(map, maxEntries);
    if (err < 0) {
      throw BpfException.of("setting max_entries of map " + name + " to " + maxEntries, -err, null);
    }
  }

  /**
   * Creates or replaces an element.
   *
   * @param flags {@link #BPF_ANY}, {@link #BPF_NOEXIST} or {@link #BPF_EXIST}
   * @throws BpfException e.g. E2BIG when the map is full, EEXIST with BPF_NOEXIST
   */
  public void update(byte[] key, byte[] value, long flags) {
    checkKey(key);
    if (value.length != fullValueSize()) {
      throw new IllegalArgumentException(
          "map " + name + " values are " + fullValueSize() + " bytes, got " + value.length);
    }
    Pointer k = direct(key);
    Pointer v = direct(value);
    int err = lib().bpf_map__update_elem(map, k, key.length, v, value.length, flags);
    if (err < 0) {
      throw BpfException.of("updating an element of map " + name, object.libbpf().lastErrno(), null);
    }
  }

  /**
   * The value of a key, or empty when the key is absent.
   *
   * @throws BpfException on any error but ENOENT
   */
  public Optional<byte[]> lookup(byte[] key) {
    checkKey(key);
    int size = fullValueSize();
    Pointer k = direct(key);
    Pointer v = Memory.allocateDirect(object.libbpf().runtime, size, true);
    int err = lib().bpf_map__lookup_elem(map, k, key.length, v, size, 0);
    if (err < 0) {
      int errno = object.libbpf().lastErrno();
      if (errno == Errno.ENOENT.intValue()) {
        return Optional.empty();
      }
      throw BpfException.of("looking up an element of map " + name, errno, null);
    }
    byte[] out = new byte[size];
    v.get(0, out, 0, size);
    return Optional.of(out);
  }

  /**
   * Deletes a key. Returns whether it was present.
   *
   * @throws BpfException on any error but ENOENT
   */
  public boolean delete(byte[] key) {
    checkKey(key);
    int err = lib().bpf_map__delete_elem(map, direct(key), key.length, 0);
    if (err < 0) {
      int errno = object.libbpf().lastErrno();
      if (errno == Errno.ENOENT.intValue()) {
        return false;
      }
      throw BpfException.of("deleting an element of map " + name, errno, null);
    }
    return true;
  }

  /** Every key currently in the map (a hash map's iteration order). */
  public List<byte[]> keys() {
    object.ensureLoaded();
    int ks = keySize();
    List<byte[]> keys = new ArrayList<>();
    Pointer cur = null;
    Pointer next = Memory.allocateDirect(object.libbpf().runtime, ks, true);
    while (lib().bpf_map__get_next_key(map, cur, next, ks) == 0) {
      byte[] k = new byte[ks];
      next.get(0, k, 0, ks);
      keys.add(k);
      if (cur == null) {
        cur = Memory.allocateDirect(object.libbpf().runtime, ks, true);
      }
      cur.put(0, k, 0, ks);
    }
    return keys;
  }

  private void checkKey(byte[] key) {
    object.ensureLoaded();
    if (key.length != keySize()) {
      throw new IllegalArgumentException(
          "map " + name + " keys are " + keySize() + " bytes, got " + key.length);
    }
  }

  private Pointer direct(byte[] bytes) {
    Pointer p = Memory.allocateDirect(object.libbpf().runtime, bytes.length);
    p.put(0, bytes, 0, bytes.length);
    return p;
  }

  private LibbpfNative lib() {
    return object.libbpf().lib;
  }

  BpfObject object() {
    return object;
  }
}
