package io.gospan.receiver.probe;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import io.gospan.receiver.event.StreamParent;
import io.gospan.receiver.event.StreamParentVia;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * Turns {@code struct header_event} ring buffer records into {@link HeaderEvent}s, and {@code
 * struct stream_parent_event} records into {@link StreamParent}s (the probe byte, at the same
 * place in both, tells which: {@link GrpcProbe#sendsStreamParents()}). A record that cannot be a
 * valid event (short, unknown probe or a probe that sends no records of its own, unknown side,
 * field id not given out, a parent naming no stream) is counted and dropped, never thrown.
 */
public final class HeaderEventDecoder {

  private static final int AF_UNIX = 1;
  private static final int AF_INET = 2;
  private static final int AF_INET6 = 10;

  private static final StructLayoutOffsets E = new StructLayoutOffsets();

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

  /**
   * A decoded record: the event, and what user space needs beyond it.
   *
   * @param probe the probe that sent the record (its {@link GrpcProbe#eventKind()} is the event's
   *     kind; {@link GrpcProbe#probe()} tells the HTTP/2 server copy of a ServeHTTP-path record)
   * @param exe the sending task's executable
   * @param event the event
   */
  public record Decoded(GrpcProbe probe, ExeKey exe, HeaderEvent event) {}

  private static final int PROBE_BYTE = GrpcLayouts.HEADER_EVENT.offset("probe");

  static {
    if (GrpcLayouts.STREAM_PARENT_EVENT.offset("probe") != PROBE_BYTE) {
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
    StructLayoutOffsets.Parent o = StructLayoutOffsets.PARENT;
    if (!isStreamParent(b) || b.remaining() < GrpcLayouts.STREAM_PARENT_EVENT.size()) {
      malformed.increment();
      return null;
    }
    int via = Byte.toUnsignedInt(b.get(o.via));
    StreamParentVia v = StreamParentVia.of(via);
    long conn = b.getLong(o.connId);
    long parentConn = b.getLong(o.parentConnId);
    int stream = b.getInt(o.streamId);
    int parentStream = b.getInt(o.parentStreamId);
    if (v == null || conn == 0 || parentConn == 0 || stream == 0 || parentStream == 0) {
      malformed.increment();
      return null;
    }
    int pid = b.getInt(o.pid);
    long ts = b.getLong(o.ts);
    exeOf(pid, b.getLong(o.exe + GrpcLayouts.EXE_KEY.offset("dev")), b.getLong(o.exe + GrpcLayouts.EXE_KEY.offset("ino")), ts);
    return new StreamParent(pid, b.getInt(o.tid), ts, conn, stream, parentConn, parentStream, v);
  }

  /**
   * Decodes one record (little-endian, position 0).
   *
   * @return the event, or {@code null} when the record is malformed (counted)
   */
  public HeaderEvent decode(ByteBuffer b) {
    Decoded d = decodeRecord(b);
    return d == null ? null : d.event();
  }

  /**
   * Decodes one record (little-endian, position 0), with the probe that sent it.
   *
   * @return the record, or {@code null} when it is malformed (counted)
   */
  public Decoded decodeRecord(ByteBuffer b) {
    if (b.remaining() < EventRecord.FIXED_SIZE) {
      malformed.increment();
      return null;
    }
    // The fixed part is read in place (EventRecord.decode has the same reads, as a value).
    int probeId = Byte.toUnsignedInt(b.get(E.probe));
    int sideId = Byte.toUnsignedInt(b.get(E.side));
    int flags = Byte.toUnsignedInt(b.get(E.flags));
    int fieldCount = Byte.toUnsignedInt(b.get(E.fieldCount));
    GrpcProbe sender = GrpcProbe.ofId(probeId);
    ProbeKind probe = sender == null ? null : sender.eventKind();
    Side side = Side.of(sideId);
    boolean socketPath = (flags & GrpcConstants.EVENT_SOCKET_PATH) != 0;
    if (probe == null || side == null || fieldCount > GrpcLayouts.MAX_FIELDS
        || b.remaining() < EventRecord.FIXED_SIZE + (fieldCount + (socketPath ? 1 : 0)) * GrpcLayouts.HEADER_FIELD.size()) {
      malformed.increment();
      return null;
    }
    int pid = b.getInt(E.pid);
    long ts = b.getLong(E.ts);
    ExeKey exe = exeOf(pid, b.getLong(E.exeDev), b.getLong(E.exeIno), ts);
    HeaderField[] fields = new HeaderField[fieldCount];
    for (int i = 0; i < fieldCount; i++) {
      int at = E.fields + i * GrpcLayouts.HEADER_FIELD.size();
      int nameId = Byte.toUnsignedInt(b.get(at + E.nameId));
      String name = names.name(nameId);
      int len = Short.toUnsignedInt(b.getShort(at + E.valueLen));
      if (name == null || len > GrpcLayouts.VALUE_LEN) {
        malformed.increment();
        return null;
      }
      boolean truncated = (b.get(at + E.fieldFlags) & GrpcConstants.FIELD_VALUE_TRUNCATED) != 0;
      fields[i] = fieldCache.field(b, at + E.value, len, nameId, name, truncated);
    }
    return new Decoded(sender, exe, new HeaderEvent(
        pid,
        b.getInt(E.tid),
        ts,
        probe,
        side,
        b.getLong(E.connId),
        b.getInt(E.fd),
        socketCache.sockets(b, fieldCount),
        b.getInt(E.streamId),
        (flags & GrpcConstants.EVENT_END_STREAM) != 0,
        List.of(fields),
        (flags & GrpcConstants.EVENT_FIELDS_TRUNCATED) != 0,
        (flags & GrpcConstants.EVENT_CONN_UNKNOWN) == 0 ? null : socketUnknown(EventRecord.decode(b))));
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
      int h = id * 31 + len;
      for (int i = 0; i < len; i++) {
        h = h * 31 + b.get(at + i);
      }
      int slot = (h ^ (h >>> 16)) & (SLOTS - 1);
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

    private static boolean equal(ByteBuffer b, int at, byte[] known) {
      for (int i = 0; i < known.length; i++) {
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

    SocketPair sockets(ByteBuffer b, int fieldCount) {
      int family = Short.toUnsignedInt(b.getShort(E.family));
      if ((family != AF_INET && family != AF_INET6) || (b.get(E.flags) & GrpcConstants.EVENT_CONN_UNKNOWN) != 0) {
        return HeaderEventDecoder.sockets(b, fieldCount);
      }
      long k0 = ((long) family << 32) | ((long) Short.toUnsignedInt(b.getShort(E.localPort)) << 16)
          | Short.toUnsignedInt(b.getShort(E.remotePort));
      long k1 = b.getLong(E.localAddr);
      long k2 = b.getLong(E.localAddr + 8);
      long k3 = b.getLong(E.remoteAddr);
      long k4 = b.getLong(E.remoteAddr + 8);
      long h = (((k0 * 31 + k1) * 31 + k2) * 31 + k3) * 31 + k4;
      int slot = (int) (h ^ (h >>> 32) ^ (h >>> 16)) & (SLOTS - 1);
      long[] k = keys[slot];
      if (k != null && k[0] == k0 && k[1] == k1 && k[2] == k2 && k[3] == k3 && k[4] == k4) {
        return pairs[slot];
      }
      SocketPair p = HeaderEventDecoder.sockets(b, fieldCount);
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
   * 4-tuple, or a unix domain socket's inodes (and path: the {@code struct socket_path} behind the
   * record's {@code fieldCount} fields).
   */
  static SocketPair sockets(ByteBuffer b, int fieldCount) {
    int family = Short.toUnsignedInt(b.getShort(E.family));
    if ((b.get(E.flags) & GrpcConstants.EVENT_CONN_UNKNOWN) != 0) {
      return null;
    }
    if (family == AF_UNIX) {
      long local = b.getLong(E.localAddr);
      long remote = b.getLong(E.remoteAddr);
      String path = "";
      boolean peer = false;
      if ((b.get(E.flags) & GrpcConstants.EVENT_SOCKET_PATH) != 0) {
        int at = E.fields + fieldCount * GrpcLayouts.HEADER_FIELD.size();
        peer = b.get(at + E.pathPeer) != 0;
        int len = Math.min(Short.toUnsignedInt(b.getShort(at + E.pathLen)), E.pathMax);
        byte[] raw = new byte[len];
        b.get(at + E.path, raw, 0, len);
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
    b.get(E.localAddr, local, 0, addrLen);
    b.get(E.remoteAddr, remote, 0, addrLen);
    try {
      return new SocketPair(
          new InetSocketAddress(InetAddress.getByAddress(local), Short.toUnsignedInt(b.getShort(E.localPort))),
          new InetSocketAddress(InetAddress.getByAddress(remote), Short.toUnsignedInt(b.getShort(E.remotePort))));
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

  /** Offsets into the record, looked up once. */
  private static final class StructLayoutOffsets {
    final int ts = GrpcLayouts.HEADER_EVENT.offset("ts_ns");
    final int pid = GrpcLayouts.HEADER_EVENT.offset("pid");
    final int tid = GrpcLayouts.HEADER_EVENT.offset("tid");
    final int connId = GrpcLayouts.HEADER_EVENT.offset("conn_id");
    final int streamId = GrpcLayouts.HEADER_EVENT.offset("stream_id");
    final int probe = GrpcLayouts.HEADER_EVENT.offset("probe");
    final int side = GrpcLayouts.HEADER_EVENT.offset("side");
    final int fieldCount = GrpcLayouts.HEADER_EVENT.offset("field_count");
    final int fd = GrpcLayouts.HEADER_EVENT.offset("fd");
    final int exeDev = GrpcLayouts.HEADER_EVENT.offset("exe") + GrpcLayouts.EXE_KEY.offset("dev");
    final int exeIno = GrpcLayouts.HEADER_EVENT.offset("exe") + GrpcLayouts.EXE_KEY.offset("ino");
    final int flags = GrpcLayouts.HEADER_EVENT.offset("flags");
    final int family = GrpcLayouts.HEADER_EVENT.offset("family");
    final int localPort = GrpcLayouts.HEADER_EVENT.offset("local_port");
    final int remotePort = GrpcLayouts.HEADER_EVENT.offset("remote_port");
    final int localAddr = GrpcLayouts.HEADER_EVENT.offset("local_addr");
    final int remoteAddr = GrpcLayouts.HEADER_EVENT.offset("remote_addr");
    final int fields = GrpcLayouts.HEADER_EVENT.offset("fields");
    final int nameId = GrpcLayouts.HEADER_FIELD.offset("name_id");
    final int fieldFlags = GrpcLayouts.HEADER_FIELD.offset("flags");
    final int valueLen = GrpcLayouts.HEADER_FIELD.offset("value_len");
    final int value = GrpcLayouts.HEADER_FIELD.offset("value");
    final int pathPeer = GrpcLayouts.SOCKET_PATH.offset("peer");
    final int pathLen = GrpcLayouts.SOCKET_PATH.offset("len");
    final int path = GrpcLayouts.SOCKET_PATH.offset("path");
    final int pathMax = GrpcLayouts.SOCKET_PATH.field("path").size();

    static final Parent PARENT = new Parent();

    /** Offsets into a {@code struct stream_parent_event}. */
    static final class Parent {
      final int ts = GrpcLayouts.STREAM_PARENT_EVENT.offset("ts_ns");
      final int pid = GrpcLayouts.STREAM_PARENT_EVENT.offset("pid");
      final int tid = GrpcLayouts.STREAM_PARENT_EVENT.offset("tid");
      final int connId = GrpcLayouts.STREAM_PARENT_EVENT.offset("conn_id");
      final int streamId = GrpcLayouts.STREAM_PARENT_EVENT.offset("stream_id");
      final int via = GrpcLayouts.STREAM_PARENT_EVENT.offset("via");
      final int parentConnId = GrpcLayouts.STREAM_PARENT_EVENT.offset("parent_conn_id");
      final int parentStreamId = GrpcLayouts.STREAM_PARENT_EVENT.offset("parent_stream_id");
      final int exe = GrpcLayouts.STREAM_PARENT_EVENT.offset("exe");
    }
  }
}
