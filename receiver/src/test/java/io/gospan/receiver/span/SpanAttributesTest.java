package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.grpc.Status;
import io.opentelemetry.api.common.Attributes;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SpanAttributesTest {
  final SpanAttributes attributes = new SpanAttributes(RpcSemconv.of(RpcSemconv.Mode.STABLE), Set.of("x-request-id", "authorization"));

  static TracedStream stream(HeaderEvent e) {
    StreamKey key = StreamKey.of(e);
    return new TracedStream(key, e, Long.MAX_VALUE, null, new SpanIdentity(key, "00f067aa0ba902b7", e.monotonicNs()));
  }

  /** A server stream started by {@code e}, its request headers captured as the assembler does. */
  TracedStream started(HeaderEvent e) {
    TracedStream s = stream(e);
    for (HeaderField f : e.fields()) {
      attributes.capture(s, true, f);
    }
    return s;
  }

  @Test
  void pathAndAuthorityParsing() { // moved from SpanAssemblerTest with the methods it tests
    assertThat(SpanAttributes.fullMethod("/a.B/C")).isEqualTo("a.B/C");
    assertThat(SpanAttributes.fullMethod("/B/C")).isEqualTo("B/C");
    assertThat(SpanAttributes.fullMethod("a.B/C")).isNull();
    assertThat(SpanAttributes.fullMethod("/a.B/C/D")).isNull();
    assertThat(SpanAttributes.fullMethod("//C")).isNull();
    assertThat(SpanAttributes.fullMethod("/a.B/")).isNull();
    assertThat(SpanAttributes.splitAuthority("h:1")).containsExactly("h", "1");
    assertThat(SpanAttributes.splitAuthority("h")).containsExactly("h", null);
    assertThat(SpanAttributes.splitAuthority("[::1]:443")).containsExactly("::1", "443");
    assertThat(SpanAttributes.splitAuthority("h:99999")).containsExactly("h", null);
    assertThat(SpanAttributes.splitAuthority("")).isNull();
  }

  @Test
  void capturesOnlyAllowedHeadersThatAreNoCredential() {
    Events conn = new Events(40000).path(Events.PATH)
        .withRequestHeader("x-request-id", "r1").withRequestHeader("authorization", "Bearer s3cret")
        .withRequestHeader("x-other", "o");
    TracedStream s = started(conn.serverStart(1, 1000));
    assertThat(s.requestMetadata).containsOnlyKeys("x-request-id");
    assertThat(s.requestMetadata.get("x-request-id")).containsExactly("r1");
    assertThat(s.responseMetadata).isEmpty();
  }

  @Test
  void spansWithNothingOfTheirOwnShareOneAttributeSet() {
    Events conn = new Events(40000).path(Events.PATH);
    Attributes a = attributes.of(started(conn.serverStart(1, 1000)), Status.Code.OK, null);
    Attributes b = attributes.of(started(conn.serverStart(3, 2000)), Status.Code.OK, null);
    assertThat(b).isSameAs(a);
    assertThat(a.get(RpcAttributes.RPC_METHOD)).isEqualTo("helloworld.Greeter/SayHello");
    assertThat(a.get(RpcAttributes.SERVER_ADDRESS)).isEqualTo("greeter.example");
    assertThat(a.get(RpcAttributes.SERVER_PORT)).isEqualTo(50051L);
    assertThat(a.get(RpcAttributes.NETWORK_PEER_PORT)).isEqualTo(40000L);
    assertThat(a.get(RpcAttributes.CLIENT_PORT)).isEqualTo(40000L);
    assertThat(a.get(RpcAttributes.NETWORK_TRANSPORT)).isEqualTo("tcp");
    assertThat(attributes.of(started(conn.serverStart(5, 3000)), Status.Code.INTERNAL, null)).isNotSameAs(a);
  }

  @Test
  void incompleteTruncatedAndMetadataSpansGetTheirOwn() {
    Events conn = new Events(40000).path(Events.PATH);
    Attributes plain = attributes.of(started(conn.serverStart(1, 1000)), null, null);
    Attributes incomplete = attributes.of(started(conn.serverStart(1, 1000)), null, "timeout");
    assertThat(incomplete).isNotSameAs(plain);
    assertThat(incomplete.get(RpcAttributes.GOSPAN_INCOMPLETE)).isTrue();
    assertThat(incomplete.get(RpcAttributes.GOSPAN_INCOMPLETE_REASON)).isEqualTo("timeout");
    assertThat(plain.get(RpcAttributes.GOSPAN_INCOMPLETE)).isNull();

    TracedStream truncated = started(conn.serverStart(3, 2000));
    truncated.truncated = true;
    assertThat(attributes.of(truncated, null, null).get(RpcAttributes.GOSPAN_HEADERS_TRUNCATED)).isTrue();

    TracedStream withMetadata = started(new Events(40000).path(Events.PATH).withRequestHeader("x-request-id", "r9")
        .serverStart(5, 3000));
    assertThat(attributes.of(withMetadata, null, null).asMap().keySet())
        .anyMatch(k -> k.getKey().endsWith("metadata.x-request-id"));
  }

  @Test
  void unixSocketEndsAreAddressesByTheirPath() {
    Events conn = Events.unix(11, 12, "/run/app.sock").path(Events.PATH);
    HeaderEvent start = Events.ev(Events.SERVER_PID, 1000, io.gospan.receiver.event.ProbeKind.HTTP2_SERVER_OPERATE_HEADERS,
        io.gospan.receiver.event.Side.SERVER, 0xc000_2000L, conn.serverStart(1, 1000).sockets(), 1, false,
        List.of(HeaderField.of(":path", Events.PATH)));
    Attributes a = attributes.of(started(start), Status.Code.OK, null);
    assertThat(a.get(RpcAttributes.NETWORK_TRANSPORT)).isEqualTo("unix");
    assertThat(a.get(RpcAttributes.SERVER_ADDRESS)).isEqualTo("/run/app.sock");
    assertThat(a.get(RpcAttributes.NETWORK_PEER_PORT)).isNull();
  }
}
