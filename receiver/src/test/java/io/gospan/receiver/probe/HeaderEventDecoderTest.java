package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Records are variable-sized: the fixed part and the fields in use, packed (bpf/headers.bpf.h {@code
 * pack_event}): each field its name id, flags, length and value, padded to 8 bytes.
 */
class HeaderEventDecoderTest {

  final HeaderNames names = HeaderNames.defaults();
  final HeaderEventDecoder decoder = new HeaderEventDecoder(names, (pid, exe) -> { });

  /** Bytes of a packed field entry of a {@code len}-byte value, as pack_event lays it out (not the decoder's arithmetic). */
  static int entry(int len) {
    int used = GrpcLayouts.HEADER_FIELD.offset("value") + len;
    return used % 8 == 0 ? used : used + 8 - used % 8;
  }

  /** Bytes of a record of these fields (name, value, ...), packed. */
  static int packed(String... nameValues) {
    int size = EventRecord.FIXED_SIZE;
    for (int i = 1; i < nameValues.length; i += 2) {
      size += entry(nameValues[i].getBytes(StandardCharsets.UTF_8).length);
    }
    return size;
  }

  /** A record of {@code bytes} bytes claiming {@code fieldCount} fields, holding these (name, value, ...), packed. */
  ByteBuffer record(int fieldCount, int bytes, String... nameValues) {
    ByteBuffer b = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(GrpcLayouts.HEADER_EVENT.offset("ts_ns"), 1_000);
    b.putInt(GrpcLayouts.HEADER_EVENT.offset("pid"), 42);
    b.putInt(GrpcLayouts.HEADER_EVENT.offset("stream_id"), 3);
    b.put(GrpcLayouts.HEADER_EVENT.offset("probe"), (byte) GrpcProbe.HTTP2_SERVER_OPERATE_HEADERS.id());
    b.put(GrpcLayouts.HEADER_EVENT.offset("side"), (byte) GrpcConstants.SIDE_SERVER);
    b.put(GrpcLayouts.HEADER_EVENT.offset("flags"), (byte) GrpcConstants.EVENT_CONN_UNKNOWN);
    b.put(GrpcLayouts.HEADER_EVENT.offset("field_count"), (byte) fieldCount);
    b.putInt(GrpcLayouts.HEADER_EVENT.offset("fd"), -1);
    int at = EventRecord.FIXED_SIZE;
    for (int i = 0; i < nameValues.length / 2; i++) {
      b.put(at + GrpcLayouts.HEADER_FIELD.offset("name_id"), (byte) names.names().indexOf(nameValues[2 * i]));
      byte[] v = nameValues[2 * i + 1].getBytes(StandardCharsets.UTF_8);
      b.putShort(at + GrpcLayouts.HEADER_FIELD.offset("value_len"), (short) v.length);
      b.put(at + GrpcLayouts.HEADER_FIELD.offset("value"), v);
      at += entry(v.length);
    }
    return b;
  }

  @Test
  void aRecordOfTheFixedPartAndItsFieldsDecodes() {
    int size = packed(":path", "/a.B/C", "content-type", "application/grpc");
    assertThat(size).as("96 + (4 + 6, padded) + (4 + 16, padded)").isEqualTo(96 + 16 + 24);
    HeaderEvent e = decoder.decode(record(2, size, ":path", "/a.B/C", "content-type", "application/grpc"));
    assertThat(e).isNotNull();
    assertThat(e.probe()).isEqualTo(ProbeKind.HTTP2_SERVER_OPERATE_HEADERS);
    assertThat(e.side()).isEqualTo(Side.SERVER);
    assertThat(e.streamId()).isEqualTo(3);
    assertThat(e.header(":path")).isEqualTo("/a.B/C");
    assertThat(e.grpcContentType()).isTrue();
    assertThat(decoder.decode(record(0, EventRecord.FIXED_SIZE)).fields()).isEmpty();
    assertThat(decoder.malformed()).isZero();
  }

  /**
   * Every field count up to the most a record holds gives its fields in wire order, each record its
   * own (the decoder builds each event's list from a buffer it reuses), and the probe and executable
   * of the record decoded last.
   */
  @Test
  void everyFieldCountDecodesInWireOrderIntoItsOwnList() {
    java.util.List<String> allowed = names.names();
    java.util.List<HeaderEvent> events = new java.util.ArrayList<>();
    for (int n = 0; n <= GrpcLayouts.MAX_FIELDS; n++) {
      String[] nameValues = new String[2 * n];
      for (int i = 0; i < n; i++) {
        nameValues[2 * i] = allowed.get(i % allowed.size());
        nameValues[2 * i + 1] = "v" + n + "." + i + "-0123456789abcdef"; // longer than 8 bytes: the word-wise hash
      }
      events.add(decoder.decode(withExe(record(n, packed(nameValues), nameValues), 42, 70 + n)));
      assertThat(decoder.lastProbe()).isSameAs(GrpcProbe.HTTP2_SERVER_OPERATE_HEADERS);
      assertThat(decoder.lastExe().ino()).isEqualTo(70 + n);
    }
    for (int n = 0; n <= GrpcLayouts.MAX_FIELDS; n++) {
      java.util.List<io.gospan.receiver.event.HeaderField> fields = events.get(n).fields();
      assertThat(fields).hasSize(n);
      for (int i = 0; i < n; i++) {
        assertThat(fields.get(i).name()).isEqualTo(allowed.get(i % allowed.size()));
        assertThat(fields.get(i).value()).isEqualTo("v" + n + "." + i + "-0123456789abcdef");
      }
    }
    assertThat(decoder.decode(record(0, EventRecord.FIXED_SIZE - 1))).isNull();
    assertThat(decoder.lastProbe()).isNull();
    assertThat(decoder.lastExe()).isNull();
  }

  /** A unix domain socket's start: inodes in the address fields, the path block behind the fields. */
  ByteBuffer unixRecord(int fieldCount, boolean peerPath, byte[] path, String... nameValues) {
    int size = packed(nameValues) + entry(path.length);
    ByteBuffer b = record(fieldCount, size, nameValues);
    b.put(GrpcLayouts.HEADER_EVENT.offset("flags"), (byte) GrpcConstants.EVENT_SOCKET_PATH);
    b.putShort(GrpcLayouts.HEADER_EVENT.offset("family"), (short) 1);
    b.putLong(GrpcLayouts.HEADER_EVENT.offset("local_addr"), 4_026_532_001L);
    b.putLong(GrpcLayouts.HEADER_EVENT.offset("remote_addr"), 4_026_532_002L);
    b.putInt(GrpcLayouts.HEADER_EVENT.offset("fd"), 7);
    int at = packed(nameValues);
    b.put(at + GrpcLayouts.SOCKET_PATH.offset("peer"), (byte) (peerPath ? 1 : 0));
    b.putShort(at + GrpcLayouts.SOCKET_PATH.offset("len"), (short) path.length);
    b.put(at + GrpcLayouts.SOCKET_PATH.offset("path"), path);
    return b;
  }

  @Test
  void aUnixSocketsInodesAndPathDecode() {
    // a pathname as the kernel keeps it (with its NUL), behind the fields, from the server's own end
    HeaderEvent server = decoder.decode(unixRecord(1, false, "/run/containerd/containerd.sock\0".getBytes(StandardCharsets.UTF_8),
        ":path", "/a.B/C"));
    assertThat(server.sockets().unix()).isTrue();
    assertThat(server.sockets().local()).isEqualTo(new SocketPair.Unix(4_026_532_001L, ""));
    assertThat(((SocketPair.Unix) server.sockets().local()).path()).isEqualTo("/run/containerd/containerd.sock");
    assertThat(((SocketPair.Unix) server.sockets().remote()).path()).isEmpty();
    assertThat(((SocketPair.Unix) server.sockets().remote()).inode()).isEqualTo(4_026_532_002L);
    assertThat(server.header(":path")).isEqualTo("/a.B/C");
    assertThat(server.socketUnknown()).isNull();
    // an abstract name read from the peer (a client's unnamed end), no fields
    byte[] abstractName = {0, 'c', 't', 'r', 0x1b};
    HeaderEvent client = decoder.decode(unixRecord(0, true, abstractName));
    assertThat(((SocketPair.Unix) client.sockets().remote()).path()).isEqualTo("@ctr\\x1b");
    assertThat(((SocketPair.Unix) client.sockets().local()).path()).isEmpty();
    assertThat(decoder.malformed()).isZero();
    // the path block missing: malformed
    ByteBuffer cut = unixRecord(1, false, new byte[] {'/'}, ":path", "/a.B/C");
    assertThat(decoder.decode(ByteBuffer.wrap(cut.array(), 0, cut.capacity() - 1).slice().order(ByteOrder.LITTLE_ENDIAN))).isNull();
    assertThat(decoder.malformed()).isEqualTo(1);
  }

  @Test
  void aStartWithoutItsSocketSaysWhy() {
    ByteBuffer b = record(0, EventRecord.FIXED_SIZE);
    b.putLong(GrpcLayouts.HEADER_EVENT.offset("conn_id"), 0xc000123L);
    b.put(GrpcLayouts.HEADER_EVENT.offset("conn_status"), (byte) GrpcConstants.CONN_UNKNOWN_TYPE);
    HeaderEvent e = decoder.decode(b);
    assertThat(e.sockets()).isNull();
    assertThat(e.socketUnknown()).isEqualTo("unknown_type");
    b.put(GrpcLayouts.HEADER_EVENT.offset("conn_status"), (byte) GrpcConstants.CONN_NO_LOAD_BIAS);
    assertThat(decoder.decode(b).socketUnknown()).isEqualTo("no_load_bias");
    // not a start (no socket asked for): nothing to say
    b.put(GrpcLayouts.HEADER_EVENT.offset("flags"), (byte) 0);
    b.put(GrpcLayouts.HEADER_EVENT.offset("conn_status"), (byte) GrpcConstants.CONN_OK);
    assertThat(decoder.decode(b).socketUnknown()).isNull();
  }

  @Test
  void everyConnStatusIsTheAttributeValueItsCNameSays() {
    ByteBuffer b = record(0, EventRecord.FIXED_SIZE);
    b.putLong(GrpcLayouts.HEADER_EVENT.offset("conn_id"), 0xc000123L);
    java.util.Map<ConnStatus, String> said = new java.util.EnumMap<>(ConnStatus.class);
    for (ConnStatus s : ConnStatus.values()) {
      b.put(GrpcLayouts.HEADER_EVENT.offset("conn_status"), (byte) s.value());
      said.put(s, decoder.decode(b).socketUnknown());
    }
    // the values the span attribute has always had, now spelled in C (enum conn_status)
    java.util.Map<ConnStatus, String> expected = new java.util.EnumMap<>(ConnStatus.class);
    expected.put(ConnStatus.NO_TYPE_INFORMATION, "no_type_information");
    expected.put(ConnStatus.UNKNOWN_TYPE, "unknown_type");
    expected.put(ConnStatus.TOO_MANY_WRAPPERS, "too_many_wrappers");
    expected.put(ConnStatus.READ_FAILED, "read_failed");
    expected.put(ConnStatus.NOT_A_SOCKET, "not_a_socket");
    expected.put(ConnStatus.OTHER_ADDRESS_FAMILY, "other_address_family");
    expected.put(ConnStatus.NO_LOAD_BIAS, "no_load_bias");
    java.util.Map<ConnStatus, String> added = new java.util.EnumMap<>(ConnStatus.class);
    said.forEach((s, v) -> {
      if (s != ConnStatus.OK && !expected.containsKey(s)) {
        added.put(s, s.name().toLowerCase(java.util.Locale.ROOT)); // a value added in C since
      }
    });
    expected.putAll(added);
    expected.put(ConnStatus.OK, null);
    assertThat(said).isEqualTo(expected);
    b.put(GrpcLayouts.HEADER_EVENT.offset("conn_status"), (byte) 200);
    assertThat(decoder.decode(b).socketUnknown()).isEqualTo("status_200");
  }

  @Test
  void aRecordShorterThanItsFieldCountSaysIsMalformed() {
    assertThat(decoder.decode(record(3, packed(":path", "/a.B/C", ":authority", "x:1"), ":path", "/a.B/C", ":authority", "x:1"))).isNull();
    assertThat(decoder.decode(record(0, EventRecord.FIXED_SIZE - 1))).isNull();
    assertThat(decoder.malformed()).isEqualTo(2);
  }

  /** Every value length a probe sends (0 to GOSPAN_VALUE_LEN), each padding, then the next field where it was packed. */
  @Test
  void everyValueLengthIsFollowedByTheNextFieldWhereItWasPacked() {
    for (int len = 0; len <= GrpcLayouts.VALUE_LEN; len++) {
      String path = ("/" + "p".repeat(GrpcLayouts.VALUE_LEN)).substring(0, len);
      String authority = "a".repeat(GrpcLayouts.VALUE_LEN - len);
      String[] nameValues = {":path", path, ":authority", authority, "grpc-status", "0"};
      HeaderEvent e = decoder.decode(record(3, packed(nameValues), nameValues));
      assertThat(e).as("value length %d", len).isNotNull();
      assertThat(e.fields()).extracting(io.gospan.receiver.event.HeaderField::value).containsExactly(path, authority, "0");
    }
    assertThat(decoder.malformed()).isZero();
  }

  /**
   * A field's or the socket path's length running past the record's end, or a field header cut by it:
   * counted as malformed and dropped, nothing read outside the record (the record is a slice of a
   * larger buffer whose bytes beyond it hold a readable, wrong value).
   */
  @Test
  void lengthsRunningPastTheRecordsEndAreMalformedAndNothingIsReadBeyondIt() {
    int size = packed(":path", "/a.B/C", ":authority", "x:1");
    java.util.function.Function<ByteBuffer, ByteBuffer> inLargerBuffer = r -> {
      ByteBuffer big = ByteBuffer.allocate(r.capacity() + 256).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = r.capacity(); i < big.capacity(); i++) {
        big.put(i, (byte) 'x');
      }
      big.put(0, r, 0, r.capacity());
      return big.slice(0, r.capacity()).order(ByteOrder.LITTLE_ENDIAN);
    };
    // the well-formed record decodes, also as a slice
    assertThat(decoder.decode(inLargerBuffer.apply(record(2, size, ":path", "/a.B/C", ":authority", "x:1"))).header(":authority"))
        .isEqualTo("x:1");
    // the second field's value_len reaching past the end (its bytes would be the 'x's behind the record)
    ByteBuffer longValue = record(2, size, ":path", "/a.B/C", ":authority", "x:1");
    longValue.putShort(EventRecord.FIXED_SIZE + entry(6) + GrpcLayouts.HEADER_FIELD.offset("value_len"), (short) 20);
    assertThat(decoder.decode(inLargerBuffer.apply(longValue))).isNull();
    // the first field's value_len moving the second field's header past the end
    ByteBuffer shifted = record(2, size, ":path", "/a.B/C", ":authority", "x:1");
    shifted.putShort(EventRecord.FIXED_SIZE + GrpcLayouts.HEADER_FIELD.offset("value_len"), (short) 14);
    assertThat(decoder.decode(inLargerBuffer.apply(shifted))).isNull();
    // a value_len above GOSPAN_VALUE_LEN, the record long enough to hold it
    ByteBuffer tooLong = record(1, EventRecord.FIXED_SIZE + entry(GrpcLayouts.VALUE_LEN + 8), ":path", "/a.B/C");
    tooLong.putShort(EventRecord.FIXED_SIZE + GrpcLayouts.HEADER_FIELD.offset("value_len"), (short) (GrpcLayouts.VALUE_LEN + 1));
    assertThat(decoder.decode(tooLong)).isNull();
    // the last entry's padding cut off: the record is not what pack_event sends
    ByteBuffer unpadded = record(1, EventRecord.FIXED_SIZE + 4 + 6, ":path", "/a.B/C");
    assertThat(decoder.decode(unpadded)).isNull();
    // the socket path's len past the end, and its header cut by it
    ByteBuffer path = unixRecord(1, false, "/run/x.sock".getBytes(StandardCharsets.UTF_8), ":path", "/a.B/C");
    path.putShort(packed(":path", "/a.B/C") + GrpcLayouts.SOCKET_PATH.offset("len"), (short) 40);
    assertThat(decoder.decode(inLargerBuffer.apply(path))).isNull();
    ByteBuffer noPath = record(1, packed(":path", "/a.B/C") + 2, ":path", "/a.B/C");
    noPath.put(GrpcLayouts.HEADER_EVENT.offset("flags"), (byte) GrpcConstants.EVENT_SOCKET_PATH);
    noPath.putShort(GrpcLayouts.HEADER_EVENT.offset("family"), (short) 1);
    assertThat(decoder.decode(noPath)).isNull();
    assertThat(decoder.malformed()).isEqualTo(6);
  }

  @Test
  void eachServerCopysProbeDecodesToItsKindAndSaysWhichCopySentIt() {
    for (GrpcProbe p : java.util.List.of(GrpcProbe.XNET_PROCESS_HEADERS, GrpcProbe.NETHTTP_PROCESS_HEADERS)) {
      ByteBuffer b = record(0, EventRecord.FIXED_SIZE);
      b.put(GrpcLayouts.HEADER_EVENT.offset("probe"), (byte) p.id());
      b.putLong(GrpcLayouts.HEADER_EVENT.offset("exe") + GrpcLayouts.EXE_KEY.offset("ino"), 77);
      HeaderEvent e = decoder.decode(b);
      assertThat(decoder.lastProbe()).isSameAs(p);
      assertThat(e.probe()).isEqualTo(ProbeKind.HTTP2_SERVER_PROCESS_HEADERS);
      assertThat(decoder.lastExe().ino()).isEqualTo(77);
    }
    assertThat(GrpcProbe.NETHTTP_PROCESS_HEADERS.probe().server()).isNotEqualTo(GrpcProbe.XNET_PROCESS_HEADERS.probe().server());
  }

  @Test
  void aRecordOfAProbeThatSendsNoneOfItsOwnOrOfNoProbeIsMalformed() {
    ByteBuffer b = record(0, EventRecord.FIXED_SIZE);
    b.put(GrpcLayouts.HEADER_EVENT.offset("probe"), (byte) GrpcProbe.XNET_HPACK_WRITE_FIELD.id());
    assertThat(decoder.decode(b)).isNull();
    b.put(GrpcLayouts.HEADER_EVENT.offset("probe"), (byte) GrpcProbe.values().length);
    assertThat(decoder.decode(b)).isNull();
    assertThat(decoder.malformed()).isEqualTo(2);
  }

  ByteBuffer parentRecord(int via, long conn, int stream, long parentConn, int parentStream) {
    ByteBuffer b = ByteBuffer.allocate(GrpcLayouts.STREAM_PARENT_EVENT.size()).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(at("ts_ns"), 5_000);
    b.putInt(at("pid"), 42);
    b.putInt(at("tid"), 43);
    b.putLong(at("conn_id"), conn);
    b.putInt(at("stream_id"), stream);
    b.put(at("probe"), (byte) GrpcProbe.HTTP2_CLIENT_NEW_STREAM.id());
    b.put(at("side"), (byte) GrpcConstants.SIDE_CLIENT);
    b.put(at("via"), (byte) via);
    b.putLong(at("parent_conn_id"), parentConn);
    b.putInt(at("parent_stream_id"), parentStream);
    b.putLong(at("exe") + GrpcLayouts.EXE_KEY.offset("ino"), 77);
    return b;
  }

  static int at(String field) {
    return GrpcLayouts.STREAM_PARENT_EVENT.offset(field);
  }

  @Test
  void aStreamParentRecordIsToldByItsProbeAndDecodes() {
    java.util.List<Integer> firstEvents = new java.util.ArrayList<>();
    HeaderEventDecoder d = new HeaderEventDecoder(names, (pid, exe) -> firstEvents.add(pid));
    ByteBuffer b = parentRecord(GrpcConstants.VIA_CONTEXT, 0x1000, 5, 0x2000, 7);
    assertThat(HeaderEventDecoder.isStreamParent(b)).isTrue();
    assertThat(HeaderEventDecoder.isStreamParent(record(0, EventRecord.FIXED_SIZE))).isFalse();
    assertThat(d.decodeStreamParent(b)).isEqualTo(new io.gospan.receiver.event.StreamParent(
        42, 43, 5_000, 0x1000, 5, 0x2000, 7, io.gospan.receiver.event.StreamParentVia.CONTEXT));
    assertThat(d.decodeStreamParent(parentRecord(GrpcConstants.VIA_GOROUTINE, 1, 1, 2, 3)).via())
        .isEqualTo(io.gospan.receiver.event.StreamParentVia.GOROUTINE);
    assertThat(d.decodeStreamParent(parentRecord(GrpcConstants.VIA_PARENT_GOROUTINE, 1, 1, 2, 3)).via())
        .isEqualTo(io.gospan.receiver.event.StreamParentVia.PARENT_GOROUTINE);
    assertThat(firstEvents).containsExactly(42);
    assertThat(d.malformed()).isZero();
  }

  @Test
  void newStreamSendsBothKindsOfRecordToldApartByTheirSize() {
    // the streams set: NewStream's start record (a header event with :path), then the StreamParent
    ByteBuffer start = record(1, packed(":path", "/a.B/C"), ":path", "/a.B/C");
    start.put(GrpcLayouts.HEADER_EVENT.offset("probe"), (byte) GrpcProbe.HTTP2_CLIENT_NEW_STREAM.id());
    start.put(GrpcLayouts.HEADER_EVENT.offset("side"), (byte) GrpcConstants.SIDE_CLIENT);
    assertThat(HeaderEventDecoder.isStreamParent(start)).isFalse();
    HeaderEvent e = decoder.decode(start);
    assertThat(e.probe()).isEqualTo(io.gospan.receiver.event.ProbeKind.HTTP2_CLIENT_NEW_STREAM);
    assertThat(e.header(":path")).isEqualTo("/a.B/C");
    ByteBuffer parent = parentRecord(GrpcConstants.VIA_GOROUTINE, 1, 1, 2, 3);
    assertThat(parent.get(at("probe"))).isEqualTo((byte) GrpcProbe.HTTP2_CLIENT_NEW_STREAM.id());
    assertThat(HeaderEventDecoder.isStreamParent(parent)).isTrue();
  }

  @Test
  void aStreamParentRecordThatNamesNoStreamIsMalformed() {
    assertThat(decoder.decodeStreamParent(parentRecord(9, 1, 1, 2, 3))).as("unknown via").isNull();
    assertThat(decoder.decodeStreamParent(parentRecord(0, 0, 1, 2, 3))).as("no connection").isNull();
    assertThat(decoder.decodeStreamParent(parentRecord(0, 1, 1, 2, 0))).as("no parent stream").isNull();
    ByteBuffer shortRecord = ByteBuffer.allocate(GrpcLayouts.STREAM_PARENT_EVENT.size() - 1).order(ByteOrder.LITTLE_ENDIAN);
    shortRecord.put(parentRecord(0, 1, 1, 2, 3).limit(shortRecord.capacity()));
    assertThat(decoder.decodeStreamParent(shortRecord.flip())).as("short").isNull();
    assertThat(decoder.decodeStreamParent(record(0, EventRecord.FIXED_SIZE))).as("a header event").isNull();
    assertThat(decoder.malformed()).isEqualTo(5);
  }

  /** The decoder reuses decoded values (a cache by bytes): a reused value must never be another one's. */
  @Test
  void repeatedValuesAreDecodedOnceAndDifferentValuesNeverMixUp() {
    int size = EventRecord.FIXED_SIZE + 2 * GrpcLayouts.HEADER_FIELD.size(); // room for any two fields, packed or not
    HeaderEvent a = decoder.decode(record(2, size, ":path", "/a.B/C", ":authority", "x:1"));
    HeaderEvent again = decoder.decode(record(2, size, ":path", "/a.B/C", ":authority", "x:1"));
    assertThat(again.fields()).isEqualTo(a.fields());
    assertThat(again.field(":path")).isSameAs(a.field(":path"));
    // many values, each decoded right whatever else shares its cache slot
    for (int i = 0; i < 5000; i++) {
      String path = "/p" + i + ".S/M";
      HeaderEvent e = decoder.decode(record(2, size, ":path", path, ":authority", "h" + (i % 7) + ":1"));
      assertThat(e.header(":path")).isEqualTo(path);
      assertThat(e.header(":authority")).isEqualTo("h" + (i % 7) + ":1");
    }
    // the same bytes under another name are another field
    HeaderEvent other = decoder.decode(record(1, size, ":authority", "/a.B/C"));
    assertThat(other.field(":authority").value()).isEqualTo("/a.B/C");
    assertThat(other.field(":path")).isNull();
    // a value of the same bytes, truncated, keeps its flag
    ByteBuffer t = record(1, size, ":path", "/a.B/C");
    t.put(EventRecord.FIXED_SIZE + GrpcLayouts.HEADER_FIELD.offset("flags"), (byte) GrpcConstants.FIELD_VALUE_TRUNCATED);
    assertThat(decoder.decode(t).field(":path").truncated()).isTrue();
    assertThat(decoder.decode(record(1, size, ":path", "/a.B/C")).field(":path").truncated()).isFalse();
    assertThat(decoder.malformed()).isZero();
  }

  @Test
  void theListenerHearsOfAPidOnceAndAgainWhenItRunsAnotherBinary() {
    java.util.List<String> heard = new java.util.ArrayList<>();
    HeaderEventDecoder d = new HeaderEventDecoder(names, (pid, exe) -> heard.add(pid + ":" + exe.ino()));
    for (int i = 0; i < 3; i++) {
      d.decode(withExe(record(0, EventRecord.FIXED_SIZE), 42, 7));
      d.decode(withExe(record(0, EventRecord.FIXED_SIZE), 42 + 4096, 8)); // the same slot of the pid cache
    }
    d.decode(withExe(record(0, EventRecord.FIXED_SIZE), 42, 9)); // pid reused by another binary
    assertThat(heard).containsExactly("42:7", "4138:8", "42:9");
  }

  @Test
  void theSameSocketBytesGiveEqualPairsAndOthersTheirOwn() {
    ByteBuffer a = withSocket(record(0, EventRecord.FIXED_SIZE), new byte[] {127, 0, 0, 1}, 5000, new byte[] {127, 0, 0, 2}, 6000);
    ByteBuffer b = withSocket(record(0, EventRecord.FIXED_SIZE), new byte[] {127, 0, 0, 1}, 5000, new byte[] {127, 0, 0, 2}, 6001);
    HeaderEvent ea = decoder.decode(a);
    assertThat(ea.sockets().localIp().getPort()).isEqualTo(5000);
    assertThat(ea.sockets().remoteIp().getPort()).isEqualTo(6000);
    assertThat(decoder.decode(a.duplicate().order(ByteOrder.LITTLE_ENDIAN)).sockets()).isEqualTo(ea.sockets());
    assertThat(decoder.decode(b).sockets().remoteIp().getPort()).isEqualTo(6001);
    assertThat(decoder.decode(a).sockets().remoteIp().getAddress().getHostAddress()).isEqualTo("127.0.0.2");
  }

  static ByteBuffer withExe(ByteBuffer b, int pid, long ino) {
    b.putInt(GrpcLayouts.HEADER_EVENT.offset("pid"), pid);
    b.putLong(GrpcLayouts.HEADER_EVENT.offset("exe") + GrpcLayouts.EXE_KEY.offset("ino"), ino);
    return b;
  }

  static ByteBuffer withSocket(ByteBuffer b, byte[] local, int localPort, byte[] remote, int remotePort) {
    b.put(GrpcLayouts.HEADER_EVENT.offset("flags"), (byte) 0);
    b.putShort(GrpcLayouts.HEADER_EVENT.offset("family"), (short) 2);
    b.putShort(GrpcLayouts.HEADER_EVENT.offset("local_port"), (short) localPort);
    b.putShort(GrpcLayouts.HEADER_EVENT.offset("remote_port"), (short) remotePort);
    b.put(GrpcLayouts.HEADER_EVENT.offset("local_addr"), local);
    b.put(GrpcLayouts.HEADER_EVENT.offset("remote_addr"), remote);
    return b;
  }
}
