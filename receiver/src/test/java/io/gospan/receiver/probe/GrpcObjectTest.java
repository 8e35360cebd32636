package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.receiver.probe.GrpcObject.Setting;
import org.junit.jupiter.api.Test;

/** The generated names and sizes of grpc.bpf.o's settings: their bytes as the globals hold them. */
class GrpcObjectTest {

  @Test
  void aSettingIsWrittenInItsWidthLittleEndian() {
    assertThat(Setting.WAKEUP_BYTES.size()).isEqualTo(8);
    assertThat(Setting.WAKEUP_BYTES.bytes(0x0102L)).containsExactly(2, 1, 0, 0, 0, 0, 0, 0);
    assertThat(Setting.REQUEST_NAME_LENGTHS.bytes(0x80000001)).containsExactly(1, 0, 0, 0x80); // an int mask, sign bit set
    assertThat(Setting.PIDNS_INUM.bytes(0xeffffffcL)).containsExactly(0xfc, 0xff, 0xff, 0xef);
    assertThat(Setting.CONTENT_TYPE_ID.bytes(-1)).containsExactly(0xff); // a name not captured: id 255
    assertThat(Setting.CONTENT_TYPE_ID.bytes(200)).containsExactly(200);
    assertThatThrownBy(() -> Setting.CONTENT_TYPE_ID.bytes(256)).hasMessageContaining("content_type_id: 256 does not fit in 1 bytes");
  }
}
