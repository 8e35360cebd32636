package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DiscoveryThreadTest {

  @Test
  void everyTaskRunsOnTheOneThreadWithItsState() throws Exception {
    List<String> state = new ArrayList<>(); // not thread-safe: confined to the thread
    try (DiscoveryThread<List<String>> t = new DiscoveryThread<>(state, 8)) {
      assertThat(t.offer("a", s -> s.add(Thread.currentThread().getName()))).isTrue();
      t.schedule(s -> s.add(Thread.currentThread().getName()), 0);
      List<String> seen = t.call(List::copyOf);
      assertThat(seen).containsExactly("gospan-discovery", "gospan-discovery");
      int size = t.call(s -> t.call(List::size));
      assertThat(size).as("a call from the thread itself runs at once").isEqualTo(2);
    }
  }

  @Test
  void offersBeyondTheBoundAreRefusedAndAFailingTaskDoesNotStopTheThread() throws Exception {
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    try (DiscoveryThread<int[]> t = new DiscoveryThread<>(new int[1], 2)) {
      assertThat(t.offer("block", s -> {
        running.countDown();
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      })).isTrue();
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue(); // no longer queued
      assertThat(t.offer("fails", s -> {
        throw new IllegalStateException("test");
      })).isTrue();
      assertThat(t.offer("counts", s -> s[0]++)).isTrue();
      assertThat(t.offer("one too many", s -> s[0] += 100)).isFalse();
      release.countDown();
      int first = t.call(s -> s[0]); // runs after what was queued: the queue is empty again
      assertThat(first).isEqualTo(1);
      assertThat(t.offer("counts again", s -> s[0]++)).isTrue();
      int counted = t.call(s -> s[0]);
      assertThat(counted).isEqualTo(2);
      assertThatThrownBy(() -> t.call(s -> {
        throw new IllegalArgumentException("thrown to the caller");
      })).isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void afterCloseNothingRuns() {
    DiscoveryThread<int[]> t = new DiscoveryThread<>(new int[1], 8);
    t.close();
    assertThat(t.offer("late", s -> s[0]++)).isFalse();
    Integer after = t.call(s -> s[0]);
    assertThat(after).isNull();
  }
}
