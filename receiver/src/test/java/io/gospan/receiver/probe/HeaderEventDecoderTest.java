package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Records are variable-sized: the fixed part and the fields in use (grpc.bpf.c {@code send}). */
class HeaderEventDecoderTest {

  final HeaderNames names = HeaderNames.defaults();
  final HeaderEventDecoder decoder = new HeaderEventDecoder(names, (pid, exe) -> { });

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
    for (int i = 0; i < nameValues.length / 2; i++) {
      int at = EventRecord.FIXED_SIZE + i * GrpcLayouts.HEADER_FIELD.size();
      b.put(at + GrpcLayouts.HEADER_FIELD.offset("name_id"), (byte) names.names().indexOf(nameValues[2 * i]));
      byte[] v = nameValues[2 * i + 1].getBytes(StandardCharsets.UTF_8);
      b.putShort(at + GrpcLayouts.HEADER_FIELD.offset("value_len"), (short) v.length);
      b.put(at + GrpcLayouts.HEADER_FIELD.offset("value"), v);
    }
    return b;
  }

  @Test
  void aRecordOfTheFixedPartAndItsFieldsDecodes() {
    int size = EventRecord.FIXED_SIZE + 2 * GrpcLayouts.HEADER_FIELD.size();
    assertThat(size).isEqualTo(352).isLessThan(GrpcLayouts.HEADER_EVENT.size());
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

  @Test
  void aRecordShorterThanItsFieldCountSaysIsMalformed() {
    assertThat(decoder.decode(record(3, EventRecord.FIXED_SIZE + 2 * GrpcLayouts.HEADER_FIELD.size(), ":path", "/a.B/C"))).isNull();
    assertThat(decoder.decode(record(0, EventRecord.FIXED_SIZE - 1))).isNull();
    assertThat(decoder.malformed()).isEqualTo(2);
  }

  @Test
  void eachServerCopysProbeDecodesToItsKindAndSaysWhichCopySentIt() {
    for (GrpcProbe p : java.util.List.of(GrpcProbe.XNET_PROCESS_HEADERS, GrpcProbe.NETHTTP_PROCESS_HEADERS)) {
      ByteBuffer b = record(0, EventRecord.FIXED_SIZE);
      b.put(GrpcLayouts.HEADER_EVENT.offset("probe"), (byte) p.id());
      b.putLong(GrpcLayouts.HEADER_EVENT.offset("exe") + GrpcLayouts.EXE_KEY.offset("ino"), 77);
      HeaderEventDecoder.Decoded d = decoder.decodeRecord(b);
      assertThat(d.probe()).isSameAs(p);
      assertThat(d.event().probe()).isEqualTo(ProbeKind.HTTP2_SERVER_PROCESS_HEADERS);
      assertThat(d.exe().ino()).isEqualTo(77);
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
}
