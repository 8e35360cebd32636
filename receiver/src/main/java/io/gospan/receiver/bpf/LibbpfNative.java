package io.gospan.receiver.bpf;

import jnr.ffi.Pointer;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.size_t;

/**
 * The subset of libbpf 1.x's C API gospan calls (libbpf src/libbpf.h, src/bpf.h, v1.1).
 * Public only because jnr-ffi generates its implementation in another class loader; not
 * part of gospan's API. Functions returning a pointer return NULL and set errno on failure; functions
 * returning int return a negative errno.
 */
public interface LibbpfNative {

  /** {@code libbpf_print_fn_t}: (enum libbpf_print_level, const char *fmt, va_list). */
  interface PrintFn {
    @Delegate
    int print(int level, Pointer format, Pointer vaList);
  }

  /** {@code ring_buffer_sample_fn}: (void *ctx, void *data, size_t size). */
  interface SampleFn {
    @Delegate
    int sample(Pointer ctx, Pointer data, @size_t long size);
  }

  Pointer libbpf_set_print(PrintFn fn);

  /** 1 when programs of {@code progType} may call helper {@code helperId} on this kernel, 0 when not, &lt; 0 on error. */
  int libbpf_probe_bpf_helper(int progType, int helperId, Pointer opts);

  @SaveError
  Pointer bpf_object__open_mem(Pointer objBuf, @size_t long objBufSize, Pointer opts);

  @SaveError
  Pointer bpf_object__open_file(String path, Pointer opts);

  @SaveError
  int bpf_object__load(Pointer obj);

  void bpf_object__close(Pointer obj);

  String bpf_object__name(Pointer obj);

  Pointer bpf_object__find_program_by_name(Pointer obj, String name);

  Pointer bpf_object__find_map_by_name(Pointer obj, String name);

  Pointer bpf_object__next_program(Pointer obj, Pointer prev);

  Pointer bpf_object__next_map(Pointer obj, Pointer prev);

  String bpf_program__name(Pointer prog);

  int bpf_program__fd(Pointer prog);

  int bpf_program__set_autoload(Pointer prog, boolean autoload);

  @SaveError
  Pointer bpf_program__attach_uprobe_opts(
      Pointer prog, int pid, String binaryPath, @size_t long funcOffset, Pointer opts);

  @SaveError
  Pointer bpf_program__attach_raw_tracepoint(Pointer prog, String tracepointName);

  int bpf_link__destroy(Pointer link);

  int bpf_link__fd(Pointer link);

  String bpf_map__name(Pointer map);

  int bpf_map__fd(Pointer map);

  int bpf_map__type(Pointer map);

  int bpf_map__key_size(Pointer map);

  int bpf_map__value_size(Pointer map);

  int bpf_map__max_entries(Pointer map);

  int bpf_map__set_max_entries(Pointer map, int maxEntries);

  Pointer bpf_map__initial_value(Pointer map, Pointer psize);

  int bpf_map__set_initial_value(Pointer map, Pointer data, @size_t long size);

  @SaveError
  int bpf_map__update_elem(
      Pointer map, Pointer key, @size_t long keySize, Pointer value, @size_t long valueSize, long flags);

  @SaveError
  int bpf_map__lookup_elem(
      Pointer map, Pointer key, @size_t long keySize, Pointer value, @size_t long valueSize, long flags);

  @SaveError
  int bpf_map__delete_elem(Pointer map, Pointer key, @size_t long keySize, long flags);

  @SaveError
  int bpf_map__get_next_key(Pointer map, Pointer curKey, Pointer nextKey, @size_t long keySize);

  @SaveError
  Pointer ring_buffer__new(int mapFd, SampleFn sampleCb, Pointer ctx, Pointer opts);

  int ring_buffer__poll(Pointer rb, int timeoutMs);

  int ring_buffer__consume(Pointer rb);

  void ring_buffer__free(Pointer rb);

  Pointer bpf_object__btf(Pointer obj);

  int btf__find_by_name_kind(Pointer btf, String typeName, int kind);

  Pointer btf__type_by_id(Pointer btf, int id);

  String btf__name_by_offset(Pointer btf, int offset);

  int libbpf_num_possible_cpus();

  int libbpf_strerror(int err, Pointer buf, @size_t long size);
}
