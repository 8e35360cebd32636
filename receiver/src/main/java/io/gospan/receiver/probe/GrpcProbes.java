package io.gospan.receiver.probe;

import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.code.FunctionCode;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.bpf.BpfLink;
import io.gospan.receiver.bpf.BpfMap;
import io.gospan.receiver.bpf.BpfObject;
import io.gospan.receiver.bpf.BpfProgram;
import io.gospan.receiver.bpf.RingBuffer;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.ProbeEvent;
import io.gospan.receiver.event.ProbeEventSink;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.probe.GrpcObject.MapName;
import io.gospan.receiver.probe.GrpcObject.Setting;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loaded {@code grpc.bpf.o}: per-binary offsets, attached uprobes, the {@code events} ring
 * buffer decoded into {@link HeaderEvent}s and {@link io.gospan.receiver.event.StreamParent}s, and
 * the BPF counters. One thread polls; the other
 * methods may be called from any thread.
 */
public final class GrpcProbes implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GrpcProbes.class);

  /** The object's file name under {@link BpfObject#RESOURCE_DIR}. */
  public static final String OBJECT = "grpc.bpf.o";

  private final BpfObject object;
  private final BpfMap binaries;
  private final BpfMap slotByExe;
  private final BpfMap binaryExecs;
  /** The attach cookie of each binary that has a slot in {@code binaries}; guarded by itself. */
  private final Map<ExeKey, Long> cookies = new HashMap<>();
  private final BitSet usedSlots = new BitSet(GrpcLayouts.BINARY_SLOTS);
  private long generation;
  private final BpfMap counters;
  private final HeaderEventDecoder decoder;
  private final RingBuffer ringBuffer;
  private volatile RingBuffer execs;
  private volatile ServeHttpListener serveHttp;
  private final java.util.concurrent.atomic.LongAdder malformedNotices = new java.util.concurrent.atomic.LongAdder();

  /**
   * The most events handed to the sink in one run: a poll at 20,000 spans/s reads ~1,600 (four events
   * a span, a poll every 20 ms), handed over in runs of this many, each within ~0.3 ms of its first
   * record's read; the run holds span assembly's lock for as long.
   */
  static final int BATCH_EVENTS = 256;

  private final ProbeEventSink sink;
  /** The events decoded and not yet handed to the sink; the polling thread only. */
  private final ProbeEvent[] batch = new ProbeEvent[BATCH_EVENTS];
  private int batched;
  private long sinkFailures;

  /** Told of gRPC requests received through an HTTP/2 server's ServeHTTP path. */
  @FunctionalInterface
  public interface ServeHttpListener {
    /**
     * A process of binary {@code exe} received a gRPC request through HTTP/2 server copy
     * {@code server}; called on the polling thread for every such request: return quickly.
     */
    void grpcServed(ExeKey exe, Probe.HttpServer server, int pid);
  }

  /**
   * How to load the probes (as cilium/ebpf's {@code UprobeOptions}: one value, defaults for what
   * is not set).
   *
   * @param object the object's file name under {@link BpfObject#RESOURCE_DIR}: {@link #OBJECT}, or
   *     another build of grpc.bpf.c (a benchmark's baseline, {@code test/grpc_compat.bpf.o})
   * @param headerNames the header names to capture
   * @param ringBufferBytes size of the events ring buffer, bytes: a power of 2, multiple of the
   *     page size
   * @param sink receives every decoded event, on the polling thread, within the {@link #poll} that
   *     read it; a {@link ProbeEventSink} is handed them in runs ({@link ProbeEventSink#acceptAll}: up
   *     to {@link #BATCH_EVENTS} events, in the ring buffer's order)
   * @param newProcesses told the executable of each pid the first time one of its events arrives
   *     (on the polling thread, before the event)
   * @param rawTap handed each raw record before it is decoded (tests); null: none
   */
  public record Options(
      String object,
      HeaderNames headerNames,
      int ringBufferBytes,
      Consumer<ProbeEvent> sink,
      HeaderEventDecoder.NewProcessListener newProcesses,
      RingBuffer.RecordHandler rawTap) {

    public Options {
      java.util.Objects.requireNonNull(object, "object");
      java.util.Objects.requireNonNull(headerNames, "headerNames");
      java.util.Objects.requireNonNull(sink, "sink");
      java.util.Objects.requireNonNull(newProcesses, "newProcesses");
    }

    /** grpc.bpf.o, no new-process listener, no raw tap. */
    public static Options of(HeaderNames headerNames, int ringBufferBytes, Consumer<ProbeEvent> sink) {
      return new Options(OBJECT, headerNames, ringBufferBytes, sink, (pid, exe) -> { }, null);
    }

    public Options withObject(String object) {
      return new Options(object, headerNames, ringBufferBytes, sink, newProcesses, rawTap);
    }

    public Options withNewProcesses(HeaderEventDecoder.NewProcessListener newProcesses) {
      return new Options(object, headerNames, ringBufferBytes, sink, newProcesses, rawTap);
    }

    public Options withRawTap(RingBuffer.RecordHandler rawTap) {
      return new Options(object, headerNames, ringBufferBytes, sink, newProcesses, rawTap);
    }
  }

  private GrpcProbes(BpfObject object, Options options) {
    this.object = object;
    this.binaries = object.map(MapName.BINARIES.cName());
    this.slotByExe = object.map(MapName.SLOT_BY_EXE.cName());
    this.binaryExecs = object.map(MapName.BINARY_EXECS.cName());
    this.counters = object.map(MapName.PROBE_COUNTERS.cName());
    HeaderNames names = options.headerNames();
    this.decoder = new HeaderEventDecoder(names, options.newProcesses());
    BpfMap nameMap = object.map(MapName.HEADER_NAMES.cName());
    for (int id = 0; id < names.names().size(); id++) {
      nameMap.update(HeaderNames.key(names.name(id)), new byte[] {(byte) id}, BpfMap.BPF_ANY);
    }
    RingBuffer.RecordHandler rawTap = options.rawTap();
    this.sink = ProbeEventSink.of(options.sink());
    this.ringBuffer =
        RingBuffer.open(
            object.map(MapName.EVENTS.cName()),
            record -> {
              if (rawTap != null) {
                rawTap.onRecord(record.duplicate());
              }
              if (HeaderEventDecoder.isStreamParent(record)) {
                io.gospan.receiver.event.StreamParent p = decoder.decodeStreamParent(record);
                if (p != null) {
                  add(p);
                }
                return;
              }
              HeaderEvent e = decoder.decode(record); // no Decoded per record: the probe and exe on the decoder
              if (e != null) {
                if (e.probe() == ProbeKind.HTTP2_SERVER_PROCESS_HEADERS) {
                  notifyServeHttp(decoder.lastProbe(), decoder.lastExe(), e);
                }
                add(e);
              }
            });
  }

  /** Queues a decoded event for the sink; a full run is handed over at once. The polling thread. */
  private void add(ProbeEvent e) {
    batch[batched++] = e;
    if (batched == BATCH_EVENTS) {
      handOver();
    }
  }

  /**
   * Hands the queued events to the sink, and forgets them (no reference kept past the run). A sink
   * that throws loses only the events it threw for (the {@link ProbeEventSink#acceptAll} contract): counted
   * and logged, as the ring buffer does for a record whose handler throws. The polling thread.
   */
  private void handOver() {
    int n = batched;
    if (n == 0) {
      return;
    }
    batched = 0;
    try {
      sink.acceptAll(batch, 0, n);
    } catch (RuntimeException e) {
      sinkFailures++;
      if (Long.bitCount(sinkFailures) == 1) {
        LOG.warn("the event sink failed on a run of events ({} run(s) so far)", sinkFailures, e);
      }
    } finally {
      java.util.Arrays.fill(batch, 0, n, null);
    }
  }

  /** gospan's own PID namespace (a symbolic link whose target reads {@code pid:[<inode number>]}). */
  static final Path OWN_PID_NAMESPACE = Path.of("/proc/self/ns/pid");

  /** The initial PID namespace's inode number ({@code PROC_PID_INIT_INO}, include/linux/proc_ns.h). */
  static final long INITIAL_PID_NAMESPACE = 0xEFFFFFFCL;

  /**
   * The inode number of the PID namespace {@code link} names ({@code /proc/self/ns/pid}), or 0 for
   * the initial namespace (the kernel's own process ids need no translation) or when it cannot be
   * read (then ids are the initial namespace's, as before namespaces were looked at).
   */
  static long pidNamespaceInum(Path link) {
    String target;
    try {
      target = Files.readSymbolicLink(link).toString();
    } catch (IOException | UnsupportedOperationException e) {
      LOG.warn("cannot read {} ({}): process ids are the initial PID namespace's", link, e.getMessage());
      return 0;
    }
    if (!target.startsWith("pid:[") || !target.endsWith("]")) {
      LOG.warn("{} names {}, not a PID namespace: process ids are the initial PID namespace's", link, Printable.escape(target));
      return 0;
    }
    long inum;
    try {
      inum = Long.parseLong(target, 5, target.length() - 1, 10);
    } catch (NumberFormatException e) {
      LOG.warn("{} names {}, not a PID namespace: process ids are the initial PID namespace's", link, Printable.escape(target));
      return 0;
    }
    return inum == INITIAL_PID_NAMESPACE || inum > 0xFFFFFFFFL ? 0 : inum;
  }

  /**
   * Loads the probes.
   *
   * @throws io.gospan.receiver.bpf.BpfException when loading fails (privileges, verifier)
   */
  public static GrpcProbes open(Options options) {
    HeaderNames names = options.headerNames();
    int ringBufferBytes = options.ringBufferBytes();
    BpfObject obj = BpfObject.openResource(options.object());
    try {
      obj.map(MapName.EVENTS.cName()).setMaxEntries(ringBufferBytes);
      set(obj, Setting.REQUEST_NAME_LENGTHS, names.requestLengthMask());
      set(obj, Setting.RESPONSE_NAME_LENGTHS, names.responseLengthMask());
      // Records wake the reader only once a quarter of the buffer waits; otherwise the reader
      // drains on its own timer (see poll): a wakeup per record costs the traced program more
      // than the rest of the probe.
      set(obj, Setting.WAKEUP_BYTES, ringBufferBytes / 4);
      // Response headers before the trailers matter only for extra (allow-listed) metadata.
      set(obj, Setting.CAPTURE_RESPONSE_HEADERS, names.capturesResponses() ? 1 : 0);
      // An HTTP/2 server's requests are recorded only when their content-type is gRPC's.
      set(obj, Setting.CONTENT_TYPE_ID, names.names().indexOf("content-type"));
      // The streams set's records carry the method and the status in these fields.
      set(obj, Setting.PATH_ID, names.names().indexOf(":path"));
      set(obj, Setting.GRPC_STATUS_ID, names.names().indexOf("grpc-status"));
      set(obj, Setting.GRPC_MESSAGE_ID, names.names().indexOf("grpc-message"));
      // Records and exec notices carry process ids as gospan's /proc shows them.
      set(obj, Setting.PIDNS_INUM, pidNamespaceInum(OWN_PID_NAMESPACE));
      obj.load();
      return new GrpcProbes(obj, options);
    } catch (RuntimeException e) {
      obj.close();
      throw e;
    }
  }

  /** Sets a {@code const volatile} global of the object, in its width (before loading). */
  private static void set(BpfObject obj, Setting setting, long value) {
    obj.setGlobal(setting.cName(), setting.bytes(value));
  }

  /**
   * Reports every exec (raw tracepoint {@code sched_process_exec}) to {@code listener}, on the
   * polling thread, within one {@link #poll} of the exec: the process, its new executable and that
   * file's path ({@link ExecNotice}). Discovery uses it to look again at a process it saw before its
   * exec, and to learn the binary of a process gone before it looks. A record that cannot be decoded
   * is counted ({@link #malformedRecords()}) and dropped. Call once.
   *
   * @throws ProbeException when the kernel refuses the tracepoint
   */
  public void watchExecs(java.util.function.Consumer<ExecNotice> listener) {
    if (execs != null) {
      throw new IllegalStateException("already watching execs");
    }
    try {
      object.program("raw_tp_sched_process_exec").attachRawTracepoint("sched_process_exec");
    } catch (io.gospan.receiver.bpf.BpfException e) {
      throw new ProbeException(e);
    }
    execs = RingBuffer.open(object.map(MapName.EXECS.cName()), record -> {
      ExecNotice n;
      try {
        n = ExecNotice.decode(record);
      } catch (IllegalArgumentException e) {
        malformedNotices.increment();
        return;
      }
      listener.accept(n);
    });
  }

  /** Tells {@code listener} of every gRPC request received through a ServeHTTP path. */
  public void onServeHttpGrpc(ServeHttpListener listener) {
    this.serveHttp = listener;
  }

  private void notifyServeHttp(GrpcProbe probe, ExeKey exe, HeaderEvent e) {
    ServeHttpListener l = serveHttp;
    if (l != null && e.grpcContentType()) {
      l.grpcServed(exe, probe.probe().server(), e.pid());
    }
  }

  /**
   * Makes the programs trace processes running the binary {@code key}, with these offsets: in a
   * slot of {@code binaries}, which the probes {@link #attach} then attaches find through their
   * cookie (and others through {@code slot_by_exe}, by the executable). Putting a binary again
   * rewrites its slot; its probes keep working.
   *
   * @param layout the binary's read-only data (header names there are then recognised by address), load
   *     bias and connection types (without them no stream carries its socket)
   * @throws IllegalStateException when every slot (GrpcLayouts.BINARY_SLOTS) is taken
   */
  public void putBinary(ExeKey key, GoOffsets goOffsets, BinaryLayout layout) {
    putBinary(key, goOffsets, layout, Probe.ProbeSet.HEADERS);
  }

  /**
   * As {@link #putBinary(ExeKey, GoOffsets, BinaryLayout)}, for a binary with probe set {@code set}: in
   * the streams set its NewStream probe starts client streams.
   */
  public void putBinary(ExeKey key, GoOffsets goOffsets, BinaryLayout layout, Probe.ProbeSet set) {
    byte[] offsetBytes = goOffsets.toBytes();
    synchronized (cookies) {
      Long cookie = cookies.get(key);
      if (cookie == null) {
        int slot = usedSlots.nextClearBit(0);
        if (slot >= GrpcLayouts.BINARY_SLOTS) {
          throw new IllegalStateException(
              "cannot trace " + key + ": " + GrpcLayouts.BINARY_SLOTS + " binaries are traced already");
        }
        usedSlots.set(slot);
        generation = generation == 0xffffffffL ? 1 : generation + 1;
        cookie = (generation << 32) | (slot + 1);
        cookies.put(key, cookie);
      }
      ByteBuffer b = GrpcLayouts.BINARY.allocate();
      b.put(GrpcStructs.Binary.EXE, key.toBytes());
      GrpcStructs.Binary.generation(b, 0, cookie >>> 32);
      GrpcStructs.Binary.flags(b, 0, set == Probe.ProbeSet.STREAMS ? GrpcConstants.BINARY_STREAMS_SET : 0);
      // the offsets first: the layout's runtime-type netFD.pfd.Sysfd fills the offsets' only where they have none
      b.put(GrpcStructs.Binary.OFFSETS, offsetBytes);
      layout.writeTo(b);
      // An array slot is written in place: it is complete before anything can find it (probes
      // attach with its cookie after this returns; slot_by_exe is written after it).
      binaries.update(slotKey(cookie), b.array(), BpfMap.BPF_ANY);
      binaryExecs.update(slotKey(cookie), new byte[8], BpfMap.BPF_ANY); // no run of this binary yet
      slotByExe.update(key.toBytes(), slotKey(cookie), BpfMap.BPF_ANY);
    }
  }

  /** Forgets a binary's offsets; returns whether it was known. */
  public boolean removeBinary(ExeKey key) {
    synchronized (cookies) {
      Long cookie = cookies.remove(key);
      if (cookie == null) {
        return false;
      }
      slotByExe.delete(key.toBytes());
      // generation 0: a probe still attached with this cookie finds no offsets
      binaries.update(slotKey(cookie), GrpcLayouts.BINARY.allocate().array(), BpfMap.BPF_ANY);
      usedSlots.clear((int) (cookie & 0xffffffffL) - 1);
      return true;
    }
  }

  /**
   * When a process last exec'd binary {@code key} ({@code bpf_ktime_get_ns()}, {@link System#nanoTime()}'s
   * clock: CLOCK_MONOTONIC), as the exec tracepoint stamped it since the binary was put; 0 when none
   * did, or the binary has no slot. Needs {@link #watchExecs} (the tracepoint). One map lookup.
   */
  public long lastExecNanos(ExeKey key) {
    byte[] slot;
    synchronized (cookies) {
      Long cookie = cookies.get(key);
      if (cookie == null) {
        return 0;
      }
      slot = slotKey(cookie);
    }
    return binaryExecs.lookup(slot).map(v -> ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong()).orElse(0L);
  }

  /**
   * The name cache of {@code key}'s slot (grpc.bpf.c {@code name_cache_entry}): entries {@code
   * (address << 13) | (length << 8) | id}, 0 unused; empty when the binary has no slot. For tests.
   */
  long[] nameCache(ExeKey key) {
    byte[] value;
    synchronized (cookies) {
      Long cookie = cookies.get(key);
      if (cookie == null) {
        return new long[0];
      }
      value = binaries.lookup(slotKey(cookie)).orElseThrow();
    }
    ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
    long[] out = new long[GrpcStructs.Binary.NAME_CACHE_COUNT];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getLong(GrpcStructs.Binary.NAME_CACHE + 8 * i);
    }
    return out;
  }

  private static byte[] slotKey(long cookie) {
    int slot = (int) (cookie & 0xffffffffL) - 1;
    return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(slot).array();
  }

  /**
   * Attaches a probe to every process that runs {@code binary}, on the function whose first
   * instruction is at {@code entryFileOffset}: placed after its stack-check prologue (see
   * {@link StackCheckPrologue}) so a call that grows the goroutine stack is seen once; or on the
   * prologue's {@code jbe} when the instruction after it is one the kernel would single-step (Go
   * 1.17–1.20's {@code sub rsp}: {@link FunctionCode#entryPlace}), with {@code COOKIE_AT_STACK_CHECK}
   * in the cookie so that the program skips the hit whose jump grows the stack (only where programs
   * read attach cookies: {@link io.gospan.receiver.bpf.Libbpf#attachCookies()}).
   *
   * The probe finds the offsets {@link #putBinary} stored for {@code key} through its attach
   * cookie.
   *
   * @throws ProbeException when the binary cannot be read or the kernel refuses
   */
  public ProbeLink attach(GrpcProbe probe, ExeKey key, Path binary, long entryFileOffset) {
    long cookie;
    synchronized (cookies) {
      cookie = cookies.getOrDefault(key, 0L);
    }
    try {
      FunctionCode.EntryPlace place = entryPlace(binary, entryFileOffset);
      long offset = entryFileOffset + place.offset();
      if (place.atStackCheck() && (cookie == 0 || !io.gospan.receiver.bpf.Libbpf.get().attachCookies())) {
        offset = probeFileOffset(binary, entryFileOffset); // the program could not tell the growing hit
      } else if (place.atStackCheck()) {
        cookie |= GrpcConstants.COOKIE_AT_STACK_CHECK;
      }
      return new ProbeLink(object.program(probe.program()).attachUprobe(binary, offset, BpfProgram.ALL_PIDS, cookie));
    } catch (io.gospan.receiver.bpf.BpfException e) {
      throw new ProbeException(e);
    }
  }

  /**
   * Attaches a probe at each of {@code fileOffsets} as they are (no prologue is skipped): the
   * {@code RET} instructions of its function, for a probe that reads the function's results
   * ({@code GOSPAN_AT_RETURNS}; plain uprobes, never uretprobes: Go moves goroutine stacks). One
   * link holds them all, with the cookie of {@code key}'s slot, as {@link #attach}.
   *
   * @throws ProbeException when the kernel refuses one (those attached already are detached)
   * @throws IllegalArgumentException when {@code fileOffsets} is empty
   */
  public ProbeLink attachAt(GrpcProbe probe, ExeKey key, Path binary, java.util.List<Long> fileOffsets) {
    if (fileOffsets.isEmpty()) {
      throw new IllegalArgumentException(probe + ": no address to attach to");
    }
    long cookie;
    synchronized (cookies) {
      cookie = cookies.getOrDefault(key, 0L);
    }
    java.util.List<BpfLink> links = new java.util.ArrayList<>();
    try {
      BpfProgram program = object.program(probe.program());
      for (long offset : fileOffsets) {
        links.add(program.attachUprobe(binary, offset, BpfProgram.ALL_PIDS, cookie));
      }
      return new ProbeLink(links);
    } catch (io.gospan.receiver.bpf.BpfException e) {
      links.forEach(BpfLink::close);
      throw new ProbeException(e);
    }
  }

  /**
   * Where an entry probe goes in the function at {@code entryFileOffset} ({@link FunctionCode#entryPlace}:
   * an offset from that entry).
   *
   * @throws io.gospan.receiver.bpf.BpfException when the binary cannot be read there or libcapstone cannot be loaded
   */
  public static FunctionCode.EntryPlace entryPlace(Path binary, long entryFileOffset) {
    try {
      return FunctionCode.entryPlace(firstBytes(binary, entryFileOffset, 48), io.gospan.offsets.code.CapstoneDecoder.get());
    } catch (io.gospan.offsets.code.DecoderUnavailableException e) {
      throw new io.gospan.receiver.bpf.BpfException("cannot place probes after the stack-check prologue: " + e.getMessage(), 0);
    }
  }

  /**
   * The file offset to attach a uprobe to for the function at {@code entryFileOffset}: past
   * its stack-check prologue, or the entry when none is recognized.
   *
   * @throws io.gospan.receiver.bpf.BpfException when the binary cannot be read there
   */
  public static long probeFileOffset(Path binary, long entryFileOffset) {
    return entryFileOffset + StackCheckPrologue.length(firstBytes(binary, entryFileOffset, 32));
  }

  /** Up to {@code n} bytes of the file from {@code entryFileOffset}. */
  private static byte[] firstBytes(Path binary, long entryFileOffset, int n) {
    ByteBuffer code = ByteBuffer.allocate(n);
    try (FileChannel ch = FileChannel.open(binary, StandardOpenOption.READ)) {
      while (code.hasRemaining() && ch.read(code, entryFileOffset + code.position()) > 0) {
        // read up to n bytes of the function's first instructions
      }
    } catch (IOException e) {
      throw new io.gospan.receiver.bpf.BpfException("reading the code at 0x" + Long.toHexString(entryFileOffset) + " of " + binary + " failed: " + e, jnr.constants.platform.Errno.EIO.intValue());
    }
    byte[] bytes = new byte[code.position()];
    code.flip().get(bytes);
    return bytes;
  }

  /**
   * Waits up to {@code timeoutMs} for a wakeup (sent only once a quarter of the ring buffer is
   * used), then hands every record available to the sink, woken or not; returns records read.
   * Call it in a loop with a short timeout (the longest time an event may wait). Returns the
   * records read, exec notices included.
   */
  public int poll(int timeoutMs) {
    int n;
    try {
      n = ringBuffer.poll(timeoutMs) + ringBuffer.consume();
    } finally {
      handOver(); // every event read reaches the sink before poll returns (and before the exec notices)
    }
    RingBuffer x = execs;
    if (x != null) {
      n += x.consume();
    }
    return n;
  }

  /**
   * Exec notices the kernel dropped because their ring buffer was full (bpf/process.bpf.h {@code
   * execs_lost}): 0 until {@link #watchExecs}. One {@code bpf(MAP_LOOKUP_ELEM)}.
   */
  public long execNoticesLost() {
    if (execs == null) {
      return 0;
    }
    byte[] key = new byte[4];
    return object.map(MapName.EXECS_LOST.cName()).lookup(key)
        .map(v -> ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong())
        .orElse(0L);
  }

  /**
   * When the latest record of {@code pid} was written ({@code bpf_ktime_get_ns()}, as {@link
   * ExecNotice#tsNanos()}), 0 when none is remembered. The polling thread.
   */
  public long lastRecordNanos(int pid) {
    return decoder.lastRecordNanos(pid);
  }

  /** Records dropped because they could not be decoded (events and exec notices). */
  public long malformedRecords() {
    return decoder.malformed() + malformedNotices.sum();
  }

  /** The BPF counters of every probe, summed over CPUs. */
  public Map<GrpcProbe, ProbeCounters> counters() {
    Map<GrpcProbe, ProbeCounters> out = new EnumMap<>(GrpcProbe.class);
    for (GrpcProbe p : GrpcProbe.values()) {
      long[] c = new long[GrpcConstants.COUNTER_COUNT];
      for (int i = 0; i < c.length; i++) {
        byte[] key = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(ProbeCounters.key(p.id(), i)).array();
        ByteBuffer v = ByteBuffer.wrap(counters.lookup(key).orElseThrow()).order(ByteOrder.LITTLE_ENDIAN);
        while (v.remaining() >= 8) {
          c[i] += v.getLong();
        }
      }
      out.put(p, ProbeCounters.of(c));
    }
    return out;
  }

  /** Detaches every probe and frees the maps. */
  @Override
  public void close() {
    ringBuffer.close();
    if (execs != null) {
      execs.close();
    }
    object.close();
  }
}
