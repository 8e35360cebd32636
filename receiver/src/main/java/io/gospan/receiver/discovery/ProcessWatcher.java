package io.gospan.receiver.discovery;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Which processes started and exited since the last look: a {@code /proc} listing, each pid
 * known by its start time (a pid reused by a new process has another one). Knows nothing of
 * binaries: the pids it is told to {@link #follow} (the traced ones) are checked for exit or
 * reuse on every scan; the others only while exec notices do not arrive (an exec is what makes a
 * reused pid interesting: a fork without exec runs its parent's binary).
 *
 * <p>Not thread-safe: the discovery thread only, except {@link #execNoticesOn()} and {@link
 * #execNoticeLost()}.
 */
final class ProcessWatcher {

  /**
   * What one scan found.
   *
   * @param exited followed pids that exited (or whose pid now names another process)
   * @param started pids not seen before, or reused (an ignored pid's new process), to look at
   */
  record Changes(List<Integer> exited, List<Integer> started) {}

  private final ProcFs procFs;
  private final int self = (int) ProcessHandle.current().pid();
  /** Start time of each pid seen (-1: already gone when read). */
  private final Map<Integer, Long> startTimes = new HashMap<>();
  private final Set<Integer> followed = new HashSet<>();
  private volatile boolean execNotices;
  private final AtomicBoolean execNoticeLost = new AtomicBoolean();

  ProcessWatcher(ProcFs procFs) {
    this.procFs = procFs;
  }

  /** Exec notices arrive: scans need not re-check the start time of every pid not followed. */
  void execNoticesOn() {
    execNotices = true;
  }

  /** An exec notice was lost: the next scan re-checks every pid's start time. Any thread. */
  void execNoticeLost() {
    execNoticeLost.set(true);
  }

  /**
   * Whether a scan must list {@code /proc} to find new processes: exec notices do not arrive, or
   * one was lost since the last listing. Otherwise every new program announced itself by its
   * exec, and only the followed pids need a look ({@link #scanFollowed}).
   */
  boolean listingNeeded() {
    return !execNotices || execNoticeLost.get();
  }

  /**
   * Checks only the followed pids for exit or reuse (one {@code /proc/<pid>/stat} read each), without
   * listing {@code /proc}: nothing is reported started.
   */
  Changes scanFollowed() {
    List<Integer> exited = new ArrayList<>();
    for (Integer pid : followed) {
      long t = procFs.startTime(pid);
      if (t < 0 || t != startTimes.getOrDefault(pid, -1L)) {
        exited.add(pid); // exited, or exited and the pid now names another process
      }
    }
    exited.forEach(this::forget);
    return new Changes(exited, List.of());
  }

  /** Lists {@code /proc} once; the pids reported started are known from now on. */
  Changes scan() {
    Set<Integer> now = procFs.pids();
    List<Integer> exited = new ArrayList<>();
    for (Integer pid : followed) {
      if (!now.contains(pid) || procFs.startTime(pid) != startTimes.getOrDefault(pid, -1L)) {
        exited.add(pid); // exited, or exited and the pid now names another process
      }
    }
    exited.forEach(this::forget);
    startTimes.keySet().retainAll(now);
    List<Integer> started = new ArrayList<>();
    // A reused pid of an ignored process: without exec notices, only its start time tells.
    // With them, the new process's exec already made discovery look at it again (a fork
    // without exec runs its parent's binary), so the ~270 stat reads per scan are saved.
    if (!execNotices || execNoticeLost.getAndSet(false)) {
      for (Map.Entry<Integer, Long> e : startTimes.entrySet()) {
        if (!followed.contains(e.getKey())) {
          long t = procFs.startTime(e.getKey());
          if (t != e.getValue()) {
            e.setValue(t);
            started.add(e.getKey());
          }
        }
      }
    }
    for (int pid : now) {
      if (pid != self && !startTimes.containsKey(pid)) {
        startTimes.put(pid, procFs.startTime(pid));
        started.add(pid);
      }
    }
    return new Changes(exited, started);
  }

  /**
   * {@code pid} exec'd (or is to be looked at again for another reason): its start time is read
   * again; it is known from now on. Returns false for gospan itself.
   */
  boolean seenAgain(int pid) {
    if (pid == self) {
      return false;
    }
    startTimes.put(pid, procFs.startTime(pid));
    return true;
  }

  /** Checks {@code pid} for exit on every scan (it is traced). */
  void follow(int pid) {
    followed.add(pid);
  }

  /** {@code pid} is no longer followed nor known (it exited, or became another program). */
  void forget(int pid) {
    followed.remove(pid);
    startTimes.remove(pid);
  }
}
