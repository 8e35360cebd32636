package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.Side;
import org.junit.jupiter.api.Test;

class StreamKeyTest {
  @Test
  void aStreamIsItsProcessConnectionStreamIdAndSide() {
    StreamKey k = new StreamKey(100, 0xc000_1000L, 3, Side.CLIENT);
    assertThat(new StreamKey(100, 0xc000_1000L, 3, Side.CLIENT)).isEqualTo(k).hasSameHashCodeAs(k);
    assertThat(new StreamKey(100, 0xc000_1000L, 3, Side.SERVER)).isNotEqualTo(k);
    assertThat(new StreamKey(101, 0xc000_1000L, 3, Side.CLIENT)).isNotEqualTo(k);
    assertThat(new StreamKey(100, 0xc000_1008L, 3, Side.CLIENT)).isNotEqualTo(k);
    assertThat(new StreamKey(100, 0xc000_1000L, 5, Side.CLIENT)).isNotEqualTo(k);
    io.gospan.receiver.event.HeaderEvent e = new Events(40000).path(Events.PATH).clientStart(3, 10);
    assertThat(StreamKey.of(e)).isEqualTo(new StreamKey(Events.CLIENT_PID, e.connectionId(), 3, Side.CLIENT));
  }

  @Test
  void pidAndStreamIdKeepsBothWhole() {
    StreamKey k = new StreamKey(0x7fff_fffe, 1, 0x7fff_ffff, Side.SERVER);
    assertThat(k.pidAndStreamId() >>> 32).isEqualTo(0x7fff_fffeL);
    assertThat(k.pidAndStreamId() & 0xFFFF_FFFFL).isEqualTo(0x7fff_ffffL);
  }
}
