package io.gospan.receiver.probe;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import io.gospan.receiver.event.StreamParent;
import io.gospan.receiver.event.StreamParentVia;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * Turns {@code struct header_event} ring buffer records into {@link HeaderEvent}s, and {@code
 * struct stream_parent_event} records into {@link StreamParent}s (the probe byte, at the same
 * place in both, tells which: {@link GrpcProbe#sendsStreamParents()}). A record that cannot be a
 * valid event (short, unknown probe or a probe that sends no records of its own, unknown side,
 * field id not given out, a packed field's or socket path's length running past the record's end, a
 * parent naming no stream) is counted and dropped, never thrown, and nothing past the record's end is
 * read.
 */
public final class HeaderEventDecoder {

  private static final int AF_UNIX = 1;
  private static final int AF_INET = 2;
  private static final int AF_INET6 = 10;

  /** Told, on the polling thread, the first time an event of a pid arrives (bounded memory). */
  public interface NewProcessListener {
    void firstEvent(int pid, ExeKey exe);
  }

  private static final int MAX_REMEMBERED_PIDS = 65536;

  private final HeaderNames names;
  private final LongAdder malformed = new LongAdder();
  private final NewProcessListener newProcesses;
  /** A pid's executable and when its latest record was written ({@code bpf_ktime_get_ns()}). */
  private static final class PidRecord {
    final ExeKey exe;
    long lastTs;

    PidRecord(ExeKey exe) {
      this.exe = exe;
    }
  }

  private final java.util.Map<Integer, PidRecord> seen =
      new java.util.LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<Integer, PidRecord> e) {
          if (size() > MAX_REMEMBERED_PIDS) {
            forgetPid(e.getKey());
            return true;
          }
          return false;
        }
      };

  public HeaderEventDecoder(HeaderNames names) {
    this(names, (pid, exe) -> { });
  }

  public HeaderEventDecoder(HeaderNames names, NewProcessListener newProcesses) {
    this.names = names;
    this.newProcesses = newProcesses;
  }

  /** Records dropped as malformed so far. */
  public long malformed() {
    return malformed.sum();
  }

  private static final int PROBE_BYTE = GrpcStructs.HeaderEvent.PROBE;

  static {
    if (GrpcStructs.StreamParentEvent.PROBE != PROBE_BYTE) {
      throw new AssertionError("struct stream_parent_event.probe is not where struct header_event.probe is");
    }
  }

  /**
   * Whether a record (little-endian, position 0) is a {@code struct stream_parent_event}: its
   * probe sends those ({@code GOSPAN_PARENTS}) and it is shorter than a {@code struct header_event}'s
   * fixed part (the NewStream probe sends both kinds in the streams set).
   */
  public static boolean isStreamParent(ByteBuffer b) {
    if (b.remaining() <= PROBE_BYTE) {
      return false;
    }
    GrpcProbe p = GrpcProbe.ofId(Byte.toUnsignedInt(b.get(PROBE_BYTE)));
    return p != null && p.sendsStreamParents() && (p.eventKind() == null || b.remaining() < EventRecord.FIXED_SIZE);
  }

  /**
   * Decodes one {@code struct stream_parent_event} record (little-endian, position 0): a client
   * stream's parent server stream in the same process.
   *
   * @return the event, or {@code null} when the record is malformed (counted): short, from a probe
   *     that sends no such records, an unknown {@code via}, or a zero connection or stream id
   */
  public StreamParent decodeStreamParent(ByteBuffer b) {
    if (!isStreamParent(b) || b.remaining() < GrpcStructs.StreamParentEvent.SIZE) {
      malformed.increment();
      return null;
    }
    int via = GrpcStructs.StreamParentEvent.via(b, 0);
    StreamParentVia v = StreamParentVia.of(via);
    long conn = GrpcStructs.StreamParentEvent.connId(b, 0);
    long parentConn = GrpcStructs.StreamParentEvent.parentConnId(b, 0);
    int stream = GrpcStructs.StreamParentEvent.streamId(b, 0);
    int parentStream = GrpcStructs.StreamParentEvent.parentStreamId(b, 0);
    if (v == null || conn == 0 || parentConn == 0 || stream == 0 || parentStream == 0) {
      malformed.increment();
      return null;
    }
    int pid = GrpcStructs.StreamParentEvent.pid(b, 0);
    long ts = GrpcStructs.StreamParentEvent.tsNs(b, 0);
    int exeAt = GrpcStructs.StreamParentEvent.EXE;
    exeOf(pid, GrpcStructs.ExeKey.dev(b, exeAt), GrpcStructs.ExeKey.ino(b, exeAt), ts);
    return new StreamParent(pid, GrpcStructs.StreamParentEvent.tid(b, 0), ts, conn, stream, parentConn, parentStream, v);
  }

  /**
   * Decodes one record (little-endian, position 0).
   *
   * @return the event, or {@code null} when the record is malformed (counted)
   */
  public HeaderEvent decode(ByteBuffer b) {
    lastProbe = null;
    lastExe = null;
    if (b.remaining() < EventRecord.FIXED_SIZE) {
      malformed.increment();
      return null;
    }
    // The fixed part is read in place (EventRecord.decode has the same reads, as a value).
    int probeId = GrpcStructs.HeaderEvent.probe(b, 0);
    int sideId = GrpcStructs.HeaderEvent.side(b, 0);
    int flags = GrpcStructs.HeaderEvent.flags(b, 0);
    int fieldCount = GrpcStructs.HeaderEvent.fieldCount(b, 0);
    GrpcProbe sender = GrpcProbe.ofId(probeId);
    ProbeKind probe = sender == null ? null : sender.eventKind();
    Side side = Side.of(sideId);
    boolean socketPath = (flags & GrpcConstants.EVENT_SOCKET_PATH) != 0;
    if (probe == null || side == null || fieldCount > GrpcLayouts.MAX_FIELDS) {
      malformed.increment();
      return null;
    }
    // the fields are packed (struct header_event): each entry's length gives where the next starts;
    // an entry running past the record's end makes the record malformed before anything is read
    int end = b.remaining();
    int at = GrpcStructs.HeaderEvent.FIELDS;
    HeaderField[] fields = scratchFields;
    for (int i = 0; i < fieldCount; i++) {
      if (at + GrpcStructs.HeaderField.VALUE > end) {
        malformed.increment();
        return null;
      }
      int nameId = GrpcStructs.HeaderField.nameId(b, at);
      String name = names.name(nameId);
      int len = GrpcStructs.HeaderField.valueLen(b, at);
      int next = at + entryBytes(len);
      if (name == null || len > GrpcLayouts.VALUE_LEN || next > end) {
        malformed.increment();
        return null;
      }
      boolean truncated = (GrpcStructs.HeaderField.flags(b, at) & GrpcConstants.FIELD_VALUE_TRUNCATED) != 0;
      fields[i] = fieldCache.field(b, at + GrpcStructs.HeaderField.VALUE, len, nameId, name, truncated);
      at = next;
    }
    int pathAt = socketPath ? at : -1;
    if (socketPath && (at + GrpcStructs.SocketPath.PATH > end || !pathFits(GrpcStructs.SocketPath.len(b, at), at, end))) {
      malformed.increment();
      return null;
    }
    int pid = GrpcStructs.HeaderEvent.pid(b, 0);
    long ts = GrpcStructs.HeaderEvent.tsNs(b, 0);
    int exeAt = GrpcStructs.HeaderEvent.EXE;
    ExeKey exe = exeOf(pid, GrpcStructs.ExeKey.dev(b, exeAt), GrpcStructs.ExeKey.ino(b, exeAt), ts);
    lastProbe = sender;
    lastExe = exe;
    return new HeaderEvent(
        pid,
        GrpcStructs.HeaderEvent.tid(b, 0),
        ts,
        probe,
        side,
        GrpcStructs.HeaderEvent.connId(b, 0),
        GrpcStructs.HeaderEvent.fd(b, 0),
        socketCache.sockets(b, pathAt),
        GrpcStructs.HeaderEvent.streamId(b, 0),
        (flags & GrpcConstants.EVENT_END_STREAM) != 0,
        fieldList(fields, fieldCount),
        (flags & GrpcConstants.EVENT_FIELDS_TRUNCATED) != 0,
        (flags & GrpcConstants.EVENT_CONN_UNKNOWN) == 0 ? null : socketUnknown(EventRecord.decode(b)));
  }

  /** Whether a packed socket path of {@code len} bytes at byte {@code at} ends by {@code end}. */
  private static boolean pathFits(int len, int at, int end) {
    return len <= GrpcStructs.SocketPath.PATH_COUNT && at + entryBytes(len) <= end;
  }

  /**
   * Bytes of a packed field entry (or socket path) whose value is {@code valueLen} bytes: its
   * name id, flags and length ({@code struct header_field} up to {@code value}, 4 bytes), the value,
   * zero padding to a multiple of {@code GOSPAN_FIELD_ALIGN} (8). bpf/headers.bpf.h {@code pack_event}.
   */
  static int entryBytes(int valueLen) {
    int align = GrpcLayouts.FIELD_ALIGN;
    return (GrpcStructs.HeaderField.VALUE + valueLen + align - 1) & -align;
  }

  /**
   * The probe that sent the record {@link #decode} last returned an event of ({@link
   * GrpcProbe#eventKind()} is the event's kind; {@link GrpcProbe#probe()} tells the HTTP/2 server copy
   * of a ServeHTTP-path record); {@code null} after a malformed one.
   */
  public GrpcProbe lastProbe() {
    return lastProbe;
  }

  /** The sending task's executable of the record {@link #decode} last returned an event of; {@code null} after a malformed one. */
  public ExeKey lastExe() {
    return lastExe;
  }

  // what decode read last, for the caller that needs more than the event (no object per record)
  private GrpcProbe lastProbe;
  private ExeKey lastExe;
  /** The fields of the record being decoded; copied into the event's list (one array per event, not two). */
  private final HeaderField[] scratchFields = new HeaderField[GrpcLayouts.MAX_FIELDS];

  /**
   * The first {@code n} of {@code f} as an immutable list: {@code List.of}'s fixed-arity forms take
   * their elements as they are ({@code List.of(E...)} would copy the array once more).
   */
  static List<HeaderField> fieldList(HeaderField[] f, int n) {
    return switch (n) {
      case 0 -> List.of();
      case 1 -> List.of(f[0]);
      case 2 -> List.of(f[0], f[1]);
      case 3 -> List.of(f[0], f[1], f[2]);
      case 4 -> List.of(f[0], f[1], f[2], f[3]);
      case 5 -> List.of(f[0], f[1], f[2], f[3], f[4]);
      case 6 -> List.of(f[0], f[1], f[2], f[3], f[4], f[5]);
      case 7 -> List.of(f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
      case 8 -> List.of(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
      case 9 -> List.of(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]);
      case 10 -> List.of(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]);
      default -> List.of(java.util.Arrays.copyOf(f, n));
    };
  }

  // The pid -> executable check of every record, without a map operation or an ExeKey per record:
  // a direct-mapped cache by pid in front of `seen` (a slot is cleared when `seen` forgets its pid).
  private static final int PID_SLOTS = 4096;
  private final int[] slotPid = new int[PID_SLOTS];
  private final PidRecord[] slotRecord = new PidRecord[PID_SLOTS];

  /**
   * The executable of a record of {@code pid} written at {@code ts}; tells the listener when it is new
   * for the pid.
   */
  private ExeKey exeOf(int pid, long dev, long ino, long ts) {
    int slot = pid & (PID_SLOTS - 1);
    PidRecord cached = slotRecord[slot];
    if (cached != null && slotPid[slot] == pid && cached.exe.dev() == dev && cached.exe.ino() == ino) {
      cached.lastTs = Math.max(cached.lastTs, ts);
      return cached.exe;
    }
    ExeKey exe = new ExeKey(dev, ino);
    PidRecord r = seen.get(pid);
    if (r == null || !r.exe.equals(exe)) {
      r = new PidRecord(exe);
      seen.put(pid, r);
      newProcesses.firstEvent(pid, exe); // a new pid, or a pid reused by another binary
    }
    r.lastTs = Math.max(r.lastTs, ts);
    slotPid[slot] = pid;
    slotRecord[slot] = r;
    return exe;
  }

  /**
   * When the latest record of {@code pid} was written ({@code bpf_ktime_get_ns()}), 0 when none is
   * remembered (the most recent {@value #MAX_REMEMBERED_PIDS} pids are). The polling thread.
   */
  public long lastRecordNanos(int pid) {
    PidRecord r = seen.get(pid);
    return r == null ? 0 : r.lastTs;
  }

  private void forgetPid(int pid) {
    int slot = pid & (PID_SLOTS - 1);
    if (slotPid[slot] == pid) {
      slotRecord[slot] = null;
    }
  }

  private final FieldCache fieldCache = new FieldCache();
  private final SocketCache socketCache = new SocketCache();

  /**
   * Decoded header fields by (name id, truncated, value bytes), direct-mapped: a value seen before
   * (a method's {@code :path}, an {@code :authority}, {@code grpc-status} 0) is decoded once, not
   * into a new {@code String} and {@link HeaderField} per record. A slot holds the last field that
   * hashed to it, so unique values ({@code traceparent}) only replace each other.
   */
  static final class FieldCache {
    private static final int SLOTS = 1024;
    private final byte[][] bytes = new byte[SLOTS][];
    private final int[] ids = new int[SLOTS]; // name id << 1 | truncated
    private final HeaderField[] fields = new HeaderField[SLOTS];

    HeaderField field(ByteBuffer b, int at, int len, int nameId, String name, boolean truncated) {
      int id = nameId << 1 | (truncated ? 1 : 0);
      // eight bytes at a time (a :path or traceparent is 30-55 bytes), in the buffer's byte order;
      // the same bytes always hash alike within one buffer order, which is all a slot needs
      long h = id * 31L + len;
      int i = 0;
      for (; i + 8 <= len; i += 8) {
        h = (h ^ b.getLong(at + i)) * 0x9E3779B97F4A7C15L;
      }
      for (; i < len; i++) {
        h = h * 31 + b.get(at + i);
      }
      h ^= h >>> 32;
      int slot = (int) (h ^ (h >>> 16)) & (SLOTS - 1);
      byte[] known = bytes[slot];
      if (known != null && ids[slot] == id && known.length == len && equal(b, at, known)) {
        return fields[slot];
      }
      byte[] value = new byte[len];
      b.get(at, value, 0, len);
      HeaderField f = new HeaderField(name, new String(value, StandardCharsets.UTF_8), truncated);
      bytes[slot] = value;
      ids[slot] = id;
      fields[slot] = f;
      return f;
    }

    private static final VarHandle LE_LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle BE_LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private static boolean equal(ByteBuffer b, int at, byte[] known) {
      // each VarHandle used as the constant it is: the JIT inlines a constant one, not one read from a variable
      boolean little = b.order() == ByteOrder.LITTLE_ENDIAN;
      int i = 0;
      for (; i + 8 <= known.length; i += 8) {
        long k = little ? (long) LE_LONGS.get(known, i) : (long) BE_LONGS.get(known, i);
        if (b.getLong(at + i) != k) {
          return false;
        }
      }
      for (; i < known.length; i++) {
        if (b.get(at + i) != known[i]) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * Decoded TCP 4-tuples by their record bytes (family, ports, addresses), direct-mapped: a stream's
   * start on a connection seen before reuses its {@link SocketPair} instead of two {@code
   * InetAddress}es and two {@code InetSocketAddress}es per start. Unix domain sockets' ends are
   * decoded each time ({@link HeaderEventDecoder#sockets}).
   */
  static final class SocketCache {
    private static final int SLOTS = 256;
    private final long[][] keys = new long[SLOTS][];
    private final SocketPair[] pairs = new SocketPair[SLOTS];

    SocketPair sockets(ByteBuffer b, int pathAt) {
      int family = GrpcStructs.HeaderEvent.family(b, 0);
      if ((family != AF_INET && family != AF_INET6)
          || (GrpcStructs.HeaderEvent.flags(b, 0) & GrpcConstants.EVENT_CONN_UNKNOWN) != 0) {
        return HeaderEventDecoder.sockets(b, pathAt);
      }
      long k0 = ((long) family << 32) | ((long) GrpcStructs.HeaderEvent.localPort(b, 0) << 16)
          | GrpcStructs.HeaderEvent.remotePort(b, 0);
      long k1 = b.getLong(GrpcStructs.HeaderEvent.LOCAL_ADDR);
      long k2 = b.getLong(GrpcStructs.HeaderEvent.LOCAL_ADDR + 8);
      long k3 = b.getLong(GrpcStructs.HeaderEvent.REMOTE_ADDR);
      long k4 = b.getLong(GrpcStructs.HeaderEvent.REMOTE_ADDR + 8);
      long h = (((k0 * 31 + k1) * 31 + k2) * 31 + k3) * 31 + k4;
      int slot = (int) (h ^ (h >>> 32) ^ (h >>> 16)) & (SLOTS - 1);
      long[] k = keys[slot];
      if (k != null && k[0] == k0 && k[1] == k1 && k[2] == k2 && k[3] == k3 && k[4] == k4) {
        return pairs[slot];
      }
      SocketPair p = HeaderEventDecoder.sockets(b, pathAt);
      // the two ends as objects seen before: a client's pair and its server's mirrored pair then
      // hold the same two objects, and the flow keys that link them compare by identity first
      p = new SocketPair(endpoint(p.local()), endpoint(p.remote()));
      keys[slot] = new long[] {k0, k1, k2, k3, k4};
      pairs[slot] = p;
      return p;
    }

    private final SocketPair.Endpoint[] endpoints = new SocketPair.Endpoint[SLOTS];

    private SocketPair.Endpoint endpoint(SocketPair.Endpoint a) {
      int slot = (a.hashCode() * 0x9E3779B9 >>> 24) & (SLOTS - 1);
      SocketPair.Endpoint known = endpoints[slot];
      if (a.equals(known)) {
        return known;
      }
      endpoints[slot] = a;
      return a;
    }
  }

  /**
   * Why a stream's start has no socket, as {@code gospan.connection.unidentified} says it: the name of its
   * {@code enum conn_status} value in lower case ({@link ConnStatus}: {@code unknown_type}); null when it
   * has one or was not asked for one.
   */
  static String socketUnknown(EventRecord r) {
    if ((r.flags() & GrpcConstants.EVENT_CONN_UNKNOWN) == 0) {
      return null;
    }
    ConnStatus s = ConnStatus.of(r.connStatus());
    if (s == ConnStatus.OK) {
      return r.connId() == 0 ? "no_connection" : null;
    }
    return s == null ? "status_" + r.connStatus() : s.name().toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * The connection's ends the BPF program read from the kernel socket, or null when it could not: a TCP
   * 4-tuple, or a unix domain socket's inodes (and path: the packed {@code struct socket_path} at byte
   * {@code pathAt} of the record, behind its fields; -1 when the record has none).
   */
  static SocketPair sockets(ByteBuffer b, int pathAt) {
    int family = GrpcStructs.HeaderEvent.family(b, 0);
    if ((GrpcStructs.HeaderEvent.flags(b, 0) & GrpcConstants.EVENT_CONN_UNKNOWN) != 0) {
      return null;
    }
    if (family == AF_UNIX) {
      long local = b.getLong(GrpcStructs.HeaderEvent.LOCAL_ADDR);
      long remote = b.getLong(GrpcStructs.HeaderEvent.REMOTE_ADDR);
      String path = "";
      boolean peer = false;
      if (pathAt >= 0) { // decode checked that the path fits the record
        peer = GrpcStructs.SocketPath.peer(b, pathAt) != 0;
        int len = GrpcStructs.SocketPath.len(b, pathAt);
        byte[] raw = new byte[len];
        b.get(pathAt + GrpcStructs.SocketPath.PATH, raw, 0, len);
        path = unixPath(raw);
      }
      return new SocketPair(new SocketPair.Unix(local, peer ? "" : path), new SocketPair.Unix(remote, peer ? path : ""));
    }
    int addrLen = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
    if (addrLen == 0) {
      return null;
    }
    byte[] local = new byte[addrLen];
    byte[] remote = new byte[addrLen];
    b.get(GrpcStructs.HeaderEvent.LOCAL_ADDR, local, 0, addrLen);
    b.get(GrpcStructs.HeaderEvent.REMOTE_ADDR, remote, 0, addrLen);
    try {
      return new SocketPair(
          new InetSocketAddress(InetAddress.getByAddress(local), GrpcStructs.HeaderEvent.localPort(b, 0)),
          new InetSocketAddress(InetAddress.getByAddress(remote), GrpcStructs.HeaderEvent.remotePort(b, 0)));
    } catch (UnknownHostException e) {
      throw new AssertionError("4 or 16 address bytes are always valid", e);
    }
  }

  /**
   * A {@code sun_path} as {@code ss} prints it: a pathname up to its first NUL; an abstract name (first
   * byte NUL) as {@code @} and the rest; non-printable characters escaped ({@link
   * io.gospan.offsets.buildinfo.Printable}).
   */
  static String unixPath(byte[] raw) {
    if (raw.length == 0) {
      return "";
    }
    if (raw[0] == 0) {
      return "@" + io.gospan.offsets.buildinfo.Printable.escape(new String(raw, 1, raw.length - 1, StandardCharsets.UTF_8));
    }
    int n = 0;
    while (n < raw.length && raw[n] != 0) {
      n++;
    }
    return io.gospan.offsets.buildinfo.Printable.escape(new String(raw, 0, n, StandardCharsets.UTF_8));
  }
}
