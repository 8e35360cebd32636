package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.probe.ExeKey;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class PortWaitListTest {
  static final ExeKey A = new ExeKey(1, 100);
  static final ExeKey B = new ExeKey(1, 200);

  static ProcessEntry process(int pid, ExeKey key) {
    return new ProcessEntry(pid, Path.of("/proc/" + pid + "/exe"), "/bin/server", key, "server");
  }

  @Test
  void aWaitingProcessIsDueAtEveryScanInItsFirstSecondsThenEveryListingInterval() {
    PortWaitList w = new PortWaitList();
    long t0 = 1_000_000_000L;
    w.await(process(7, A), t0);
    assertThat(w.waits(7, A)).isTrue();
    assertThat(w.waits(7, B)).as("another program under that pid").isFalse();
    assertThat(w.anyEager(t0)).isTrue();
    assertThat(w.due(t0)).containsExactly(new PortWaitList.Due(7, A));

    long late = t0 + PortWaitList.AWAIT_PORT_EAGER_NANOS;
    w.await(process(7, A), late); // judged again, still waiting: since t0 is kept
    assertThat(w.anyEager(late)).isFalse();
    assertThat(w.due(late)).isEmpty();
    assertThat(w.due(late + ScanCadence.LISTING_INTERVAL_NANOS)).containsExactly(new PortWaitList.Due(7, A));

    w.remove(7);
    assertThat(w.pids()).isEmpty();
  }

  @Test
  void beyondTheBoundTheLongestWaitingIsGivenUp() {
    PortWaitList w = new PortWaitList();
    for (int pid = 1; pid <= PortWaitList.MAX_AWAITING_PORT + 1; pid++) {
      w.await(process(pid, A), 0);
    }
    assertThat(w.pids()).hasSize(PortWaitList.MAX_AWAITING_PORT).doesNotContain(1).contains(2);
  }
}
