package io.gospan.receiver.discovery;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread ({@code gospan-discovery}, a single-threaded scheduled executor) and the state it
 * owns: {@code S} is reached only inside the tasks given here, which all run on that thread, so
 * state confined to it needs no lock. Other threads hand it work: queued and bounded ({@link
 * #offer}), or waited for ({@link #call}).
 *
 * @param <S> the state the thread owns
 */
final class DiscoveryThread<S> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Tracer.class); // discovery's log lines, as ever

  private final S state;
  private final int maxQueued;
  private final ScheduledThreadPoolExecutor executor;
  private final AtomicInteger queued = new AtomicInteger();
  private volatile Thread thread;

  /** @param maxQueued tasks {@link #offer} queues at most */
  DiscoveryThread(S state, int maxQueued) {
    this.state = state;
    this.maxQueued = maxQueued;
    this.executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "gospan-discovery");
      t.setDaemon(true);
      thread = t;
      return t;
    });
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    executor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
  }

  /**
   * Queues {@code task} unless {@code maxQueued} tasks wait already or the thread is closed; a
   * {@code RuntimeException} from it is logged ({@code what} failed) and the thread goes on. Any
   * thread; never waits.
   *
   * @return whether it was queued
   */
  boolean offer(String what, Consumer<S> task) {
    if (queued.incrementAndGet() > maxQueued) {
      queued.decrementAndGet();
      return false;
    }
    try {
      executor.execute(() -> {
        queued.decrementAndGet();
        guarded(what, task);
      });
      return true;
    } catch (RejectedExecutionException e) {
      queued.decrementAndGet();
      return false; // closed
    }
  }

  /** Runs {@code task} after {@code delayNanos} (0: as soon as the thread is free), unbounded; nothing once closed. */
  void schedule(Consumer<S> task, long delayNanos) {
    try {
      executor.schedule(() -> task.accept(state), delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closed) {
      // closed
    }
  }

  /**
   * Runs {@code task} on the thread and waits for its result: at once when called on the thread
   * itself. A {@code RuntimeException} from it is thrown here.
   *
   * @return its result, or {@code null} when the thread is closed or the caller was interrupted
   */
  <T> T call(Function<S, T> task) {
    if (Thread.currentThread() == thread) {
      return task.apply(state);
    }
    try {
      return executor.submit(() -> task.apply(state)).get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RejectedExecutionException e) {
      // closed
    }
    return null;
  }

  /** As {@link #call}, for a task without a result. */
  void run(Consumer<S> task) {
    call(s -> {
      task.accept(s);
      return null;
    });
  }

  /** Runs {@code task} with the state, logging a {@code RuntimeException} ({@code what} failed) instead of throwing it. */
  void guarded(String what, Consumer<S> task) {
    try {
      task.accept(state);
    } catch (RuntimeException e) {
      LOG.error("{} failed; continuing", what, e);
    }
  }

  /** Stops the thread: queued tasks are dropped, a task under way ends first (waited for up to 10 s). */
  @Override
  public void close() {
    executor.shutdown(); // cancels scheduled tasks
    executor.getQueue().clear(); // queued tasks: moot now
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("the discovery thread did not stop within 10 s; detaching anyway");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
