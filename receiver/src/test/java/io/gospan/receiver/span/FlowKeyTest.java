package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import org.junit.jupiter.api.Test;

class FlowKeyTest {
  @Test
  void bothEndsOfACallSeeTheSameFlowEvenThroughADnat() {
    SocketPair client = new SocketPair(new SocketPair.Ip(Events.addr("10.0.0.1", 40000)),
        new SocketPair.Ip(Events.addr("10.96.0.10", 443))); // a ClusterIP
    SocketPair server = new SocketPair(new SocketPair.Ip(Events.addr("10.0.0.2", 50051)),
        new SocketPair.Ip(Events.addr("10.0.0.1", 40000)));
    FlowKey c = FlowKey.of(Side.CLIENT, client, 7);
    assertThat(FlowKey.of(Side.SERVER, server, 7)).isEqualTo(c).hasSameHashCodeAs(c);
    assertThat(FlowKey.of(Side.SERVER, server, 9)).isNotEqualTo(c);
    assertThat(FlowKey.of(new ClientFlow(Events.addr("10.0.0.1", 40000), 7))).isEqualTo(c);
    assertThat(FlowKey.of(Side.CLIENT, null, 7)).isNull();
  }
}
