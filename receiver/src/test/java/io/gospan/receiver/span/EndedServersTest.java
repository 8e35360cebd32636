package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.TraceId;
import org.junit.jupiter.api.Test;

class EndedServersTest {
  static final long LINK_WAIT = 1_000;
  final Events conn = new Events(40000).path(Events.PATH);

  @Test
  void findsAnEndedServerByKeyForLinkWait() {
    EndedServers servers = new EndedServers(LINK_WAIT, 10);
    TracedStream s = PartsFixture.stream(conn.serverStart(1, 100));
    servers.ended(s, 300, 5_000);
    EndedServers.ServerRecord found = servers.find(s.key);
    assertThat(found.node()).isSameAs(s.node); // undecided: its node
    assertThat(found.linkTarget()).isSameAs(s.node);
    assertThat(found.covers(100)).isTrue();
    assertThat(found.covers(300)).isTrue();
    assertThat(found.covers(99)).isFalse();
    assertThat(found.covers(301)).isFalse();
    assertThat(servers.find(PartsFixture.stream(conn.serverStart(3, 100)).key)).isNull();
    servers.expire(5_000 + LINK_WAIT - 1);
    assertThat(servers.find(s.key)).isNotNull();
    servers.expire(5_000 + LINK_WAIT);
    assertThat(servers.find(s.key)).isNull();
  }

  @Test
  void keepsADecidedServerAsItsIds() {
    EndedServers servers = new EndedServers(LINK_WAIT, 10);
    TracedStream s = PartsFixture.stream(conn.serverStart(1, 100));
    s.node.traceId(TraceId.fromLongs(1, 2), null);
    servers.ended(s, 300, 5_000);
    EndedServers.ServerRecord found = servers.find(s.key);
    assertThat(found.node()).isNull();
    assertThat(found.linkTarget().traceId).isEqualTo(s.node.traceId);
    assertThat(found.linkTarget().spanId).isEqualTo(s.node.spanId);
    servers.clear();
    assertThat(servers.find(s.key)).isNull();
  }

  @Test
  void theKeyTellsProcessesAndStreamsApart() {
    EndedServers servers = new EndedServers(LINK_WAIT, 10);
    TracedStream s = PartsFixture.stream(conn.serverStart(1, 100));
    servers.ended(s, 300, 5_000);
    StreamKey otherPid = new StreamKey(s.key.pid() + 1, s.key.connection(), s.key.streamId(), s.key.side());
    StreamKey otherConnection = new StreamKey(s.key.pid(), s.key.connection() + 8, s.key.streamId(), s.key.side());
    assertThat(servers.find(otherPid)).isNull();
    assertThat(servers.find(otherConnection)).isNull();
    assertThat(s.key.pidAndStreamId()).isEqualTo(((long) s.key.pid() << 32) | 1);
  }

  @Test
  void keepsNothingWhenLinkingIsOff() {
    EndedServers servers = new EndedServers(0, 10);
    TracedStream s = PartsFixture.stream(conn.serverStart(1, 100));
    servers.ended(s, 300, 5_000);
    assertThat(servers.find(s.key)).isNull();
  }
}
