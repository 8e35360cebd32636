package io.gospan.receiver.probe;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import io.gospan.receiver.event.StreamParent;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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
  private final java.util.Map<Integer, ExeKey> seen =
      new java.util.LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<Integer, ExeKey> e) {
          return size() > MAX_REMEMBERED_PIDS;
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
   * probe sends those ({@code GOSPAN_PARENTS}).
   */
  public static boolean isStreamParent(ByteBuffer b) {
    if (b.remaining() <= PROBE_BYTE) {
      return false;
    }
    GrpcProbe p = GrpcProbe.ofId(Byte.toUnsignedInt(b.get(PROBE_BYTE)));
    return p != null && p.sendsStreamParents();
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
    StreamParent.Via v = via == GrpcConstants.VIA_GOROUTINE ? StreamParent.Via.GOROUTINE
        : via == GrpcConstants.VIA_CONTEXT ? StreamParent.Via.CONTEXT
        : via == GrpcConstants.VIA_PARENT_GOROUTINE ? StreamParent.Via.PARENT_GOROUTINE : null;
    long conn = b.getLong(o.connId);
    long parentConn = b.getLong(o.parentConnId);
    int stream = b.getInt(o.streamId);
    int parentStream = b.getInt(o.parentStreamId);
    if (v == null || conn == 0 || parentConn == 0 || stream == 0 || parentStream == 0) {
      malformed.increment();
      return null;
    }
    int pid = b.getInt(o.pid);
    ExeKey exe = new ExeKey(b.getLong(o.exe + GrpcLayouts.EXE_KEY.offset("dev")), b.getLong(o.exe + GrpcLayouts.EXE_KEY.offset("ino")));
    if (!exe.equals(seen.put(pid, exe))) {
      newProcesses.firstEvent(pid, exe);
    }
    return new StreamParent(pid, b.getInt(o.tid), b.getLong(o.ts), conn, stream, parentConn, parentStream, v);
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
    EventRecord r = EventRecord.decode(b);
    GrpcProbe sender = GrpcProbe.ofId(r.probe());
    ProbeKind probe = sender == null ? null : sender.eventKind();
    Side side = r.side() == GrpcConstants.SIDE_CLIENT ? Side.CLIENT : r.side() == GrpcConstants.SIDE_SERVER ? Side.SERVER : null;
    boolean socketPath = (r.flags() & GrpcConstants.EVENT_SOCKET_PATH) != 0;
    if (probe == null || side == null || r.fieldCount() > GrpcLayouts.MAX_FIELDS
        || b.remaining() < EventRecord.FIXED_SIZE + (r.fieldCount() + (socketPath ? 1 : 0)) * GrpcLayouts.HEADER_FIELD.size()) {
      malformed.increment();
      return null;
    }
    if (!r.exe().equals(seen.put(r.pid(), r.exe()))) {
      newProcesses.firstEvent(r.pid(), r.exe()); // a new pid, or a pid reused by another binary
    }
    List<HeaderField> fields = new ArrayList<>(r.fieldCount());
    for (int i = 0; i < r.fieldCount(); i++) {
      int at = E.fields + i * GrpcLayouts.HEADER_FIELD.size();
      String name = names.name(Byte.toUnsignedInt(b.get(at + E.nameId)));
      int len = Short.toUnsignedInt(b.getShort(at + E.valueLen));
      if (name == null || len > GrpcLayouts.VALUE_LEN) {
        malformed.increment();
        return null;
      }
      boolean truncated = (b.get(at + E.fieldFlags) & GrpcConstants.FIELD_VALUE_TRUNCATED) != 0;
      byte[] value = new byte[len];
      b.get(at + E.value, value, 0, len);
      fields.add(new HeaderField(name, new String(value, StandardCharsets.UTF_8), truncated));
    }
    return new Decoded(sender, r.exe(), new HeaderEvent(
        r.pid(),
        r.tid(),
        r.tsNs(),
        probe,
        side,
        r.connId(),
        r.fd(),
        sockets(b, r.fieldCount()),
        (int) r.streamId(),
        r.endStream(),
        fields,
        (r.flags() & GrpcConstants.EVENT_FIELDS_TRUNCATED) != 0,
        socketUnknown(r)));
  }

  /**
   * Why a stream's start has no socket, as {@code gospan.connection.unidentified} says it ({@code enum
   * conn_status}); null when it has one or was not asked for one.
   */
  static String socketUnknown(EventRecord r) {
    if ((r.flags() & GrpcConstants.EVENT_CONN_UNKNOWN) == 0) {
      return null;
    }
    int s = r.connStatus();
    if (s == GrpcConstants.CONN_OK) {
      return r.connId() == 0 ? "no_connection" : null;
    }
    return s == GrpcConstants.CONN_NO_TYPES ? "no_type_information"
        : s == GrpcConstants.CONN_UNKNOWN_TYPE ? "unknown_type"
        : s == GrpcConstants.CONN_TOO_DEEP ? "too_many_wrappers"
        : s == GrpcConstants.CONN_READ_FAILED ? "read_failed"
        : s == GrpcConstants.CONN_NOT_SOCKET ? "not_a_socket"
        : s == GrpcConstants.CONN_OTHER_FAMILY ? "other_address_family"
        : s == GrpcConstants.CONN_NO_LOAD_BIAS ? "no_load_bias"
        : "status_" + s;
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
