package io.gospan.receiver.discovery;

import io.gospan.offsets.buildinfo.Printable;
import io.gospan.receiver.probe.ExeKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds each exec of a binary gospan has not judged yet until it has, so that even the first run of a
 * command-line client is traced from its first call ({@code discovery.hold_new_binaries}): fanotify's
 * {@code FAN_OPEN_EXEC_PERM} on the file systems gospan sees (fanotify(7), as malware scanners use it),
 * answered by one thread ({@code gospan-exec-hold}).
 *
 * <ul>
 *   <li>An exec of a binary already judged (traced, or found not to be traceable), of one the selectors
 *       do not want, or of a file the exec'ing process does not name as gospan does (a lower layer's file
 *       opened for an overlay, whose device is not the one the process will be known by) is allowed at
 *       once; so is the dynamic loader, opened for exec by the kernel for every dynamically linked
 *       program (a binary like any other, judged once).
 *   <li>Any other is handed to discovery ({@link Judge#judge}: inspected, attached) and allowed when that
 *       is done, or when {@code limit} has passed, whichever comes first: an exec is never held longer.
 *   <li>The kernel itself never times out a held exec. If the answering thread stalls (an event unanswered
 *       {@link #WATCHDOG_SLACK_NANOS} past {@code limit}), a watchdog thread releases every held exec by
 *       replacing the fanotify descriptor (the kernel allows what its group held when the group goes) and
 *       holding stops for the rest of the run; likewise at {@link #close()}, and when gospan exits.
 * </ul>
 *
 * <p>Never a signal to the process, never a write into it: an exec is only delayed, never refused.
 * Needs {@code CAP_SYS_ADMIN} (fanotify permission events, file system marks).
 *
 * <p>A process that holds a copy of the fanotify descriptor keeps the group alive: a child of gospan's
 * own process between its fork and its exec ({@code FAN_CLOEXEC} closes the copy only once the exec
 * is done), whose exec the stalled group would hold, could not be released by the watchdog. gospan
 * never starts a process; an embedder that does from the same JVM takes that risk ({@link
 * ExecHoldIT}'s stall test runs the hold in a process of its own for this reason).
 */
public final class ExecHold implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ExecHold.class);

  // sys/fanotify.h, fcntl.h, poll.h (x86-64)
  static final int FAN_CLOEXEC = 0x1;
  static final int FAN_NONBLOCK = 0x2;
  static final int FAN_CLASS_CONTENT = 0x4;
  static final int FAN_MARK_ADD = 0x1;
  static final int FAN_MARK_FILESYSTEM = 0x100;
  static final long FAN_OPEN_EXEC_PERM = 0x40000L;
  static final long FAN_Q_OVERFLOW = 0x4000L;
  static final int FAN_ALLOW = 0x1;
  static final int FAN_NOFD = -1;
  static final int O_RDONLY = 0;
  static final int O_LARGEFILE = 0x8000;
  static final int O_CLOEXEC = 0x80000;
  static final int AT_FDCWD = -100;
  static final short POLLIN = 1;
  static final int EFD_NONBLOCK = 0x800;
  static final int EFD_CLOEXEC = 0x80000;
  /** {@code struct fanotify_event_metadata}: event_len u32, vers u8, reserved u8, metadata_len u16, mask u64, fd s32, pid s32. */
  static final int METADATA_BYTES = 24;
  static final int FANOTIFY_METADATA_VERSION = 3;
  /** {@code struct fanotify_response}: fd s32, response u32. */
  static final int RESPONSE_BYTES = 8;

  /**
   * File system types whose files are marked: local disk and memory file systems, overlays, network
   * and virtual machine shares. Not the kernel's pseudo file systems (proc, sysfs, cgroup, ...), where
   * nothing is exec'd, nor FUSE (its daemon could be the one held).
   */
  static final Set<String> MARKED_TYPES = Set.of("ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "jfs", "reiserfs",
      "tmpfs", "ramfs", "overlay", "squashfs", "erofs", "iso9660", "vfat", "exfat", "ntfs3", "nfs", "nfs4", "cifs",
      "smb3", "9p", "virtiofs", "ceph");

  /** How long past its limit an unanswered event means the answering thread stalled (ns). */
  static final long WATCHDOG_SLACK_NANOS = 50_000_000L;

  /** What discovery says of a held exec. */
  public interface Judge {
    /** Quick, on the answering thread: whether the exec can be allowed at once. */
    enum Verdict {
      /** Judged already, not wanted by the selectors, or the selectors need the live process: allow at once. */
      ALLOW,
      /** A binary to judge: hold the exec until {@link #judge} is done or the limit passed. */
      HOLD
    }

    /** Quickest, on the answering thread: whether the binary {@code key} was judged already (traced, or not traceable). */
    boolean judged(ExeKey key);

    /**
     * Quick, on the answering thread, for a binary not judged yet: whether to hold its exec.
     *
     * @param key the file's device and inode (as {@code stat(2)} through the path the process uses)
     * @param path the file's path as gospan names it
     */
    Verdict quick(ExeKey key, String path);

    /**
     * Inspects and attaches the binary opened as {@code file} (discovery's thread; {@code file} is the
     * judge's to close); completes when done, whatever the outcome.
     */
    CompletableFuture<?> judge(PinnedFile file, String path, int pid);
  }

  private final Libc libc;
  private final Judge judge;
  private final long limitNanos;
  /** The fanotify descriptor; replaced by /dev/null once released (its number stays ours). */
  private final int fd;
  /** An eventfd the judgements' completions write to: the answering thread's poll wakes at once. */
  private final int wake;
  private final AtomicBoolean released = new AtomicBoolean();
  /** {@link #fd} was closed (a release that could not replace it): never closed again. */
  private volatile boolean fdClosed;
  private volatile boolean running = true;
  private final Thread answering;
  private final Thread watchdog;
  /** {@link System#nanoTime()} when the oldest event read and not answered yet was read; 0: none. */
  private final AtomicLong oldestUnanswered = new AtomicLong();
  /** Mount points marked, as gospan names them ({@code /proc/<pid>/root/...} for another mount namespace's). */
  private final List<String> marked = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** The devices (major:minor, from mountinfo) whose file systems are marked. */
  private final Set<String> markedDevices = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** The mount namespaces whose file systems were looked at (bounded: oldest forgotten). */
  private final Set<Long> namespacesSeen = java.util.Collections.newSetFromMap(
      java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<Long, Boolean> e) {
          return size() > 4096;
        }
      }));

  private final LongAdder held = new LongAdder();
  private final LongAdder heldNanos = new LongAdder();
  private final LongAdder allowedAtOnce = new LongAdder();
  private final LongAdder heldToLimit = new LongAdder();
  private final LongAdder watchdogReleases = new LongAdder();

  /**
   * Tests: the answering thread stops (a stalled thread) on the first event whose path this accepts,
   * until {@link #close()}.
   */
  volatile java.util.function.Predicate<String> stallForTests;

  private final CountDownLatch closing = new CountDownLatch(1);

  /** An exec held: its event's descriptor, when it was read, and discovery's judgement. */
  private record Held(int eventFd, long sinceNanos, CompletableFuture<?> judged, String path) {}

  private ExecHold(Libc libc, Judge judge, Duration limit, int fd, int wake) {
    this.libc = libc;
    this.judge = judge;
    this.limitNanos = limit.toNanos();
    this.fd = fd;
    this.wake = wake;
    this.answering = new Thread(this::answerLoop, "gospan-exec-hold");
    this.answering.setDaemon(true);
    this.watchdog = new Thread(this::watch, "gospan-exec-hold-watchdog");
    this.watchdog.setDaemon(true);
  }

  /**
   * Starts holding: a fanotify group marking every file system of an allowed type in {@code
   * mountInfo} (gospan's {@code /proc/self/mountinfo}), one mark per file system.
   *
   * @param limit the longest an exec is held (answered then whatever discovery says)
   * @throws IOException when fanotify is refused (no {@code CAP_SYS_ADMIN}, a kernel without {@code
   *     CONFIG_FANOTIFY_ACCESS_PERMISSIONS}) or no file system could be marked; the message says why
   */
  public static ExecHold start(Judge judge, Duration limit, Path mountInfo) throws IOException {
    if (limit.isNegative() || limit.isZero()) {
      throw new IllegalArgumentException("the hold's limit must be positive: " + limit);
    }
    Libc libc = Libc.get();
    int fd = libc.lib.fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
    if (fd < 0) {
      throw new IOException("fanotify_init(FAN_CLASS_CONTENT) failed: " + Libc.describe(libc.errno())
          + " (needs CAP_SYS_ADMIN and a kernel with CONFIG_FANOTIFY_ACCESS_PERMISSIONS)");
    }
    int wake = libc.lib.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake < 0) {
      libc.lib.close(fd);
      throw new IOException("eventfd failed: " + Libc.describe(libc.errno()));
    }
    ExecHold h = new ExecHold(libc, judge, limit, fd, wake);
    List<String> failed = h.mark(Files.readAllLines(mountInfo), "");
    if (h.marked.isEmpty()) {
      libc.lib.close(fd);
      libc.lib.close(wake);
      throw new IOException("no file system could be marked for FAN_OPEN_EXEC_PERM: " + failed);
    }
    if (!failed.isEmpty()) {
      LOG.debug("file systems not marked for the exec hold: {}", failed);
    }
    h.answering.start();
    h.watchdog.start();
    LOG.info("holding execs of binaries not judged yet (discovery.hold_new_binaries), each at most {} ms; file systems"
        + " marked: {}", limit.toMillis(), h.marked);
    return h;
  }

  /** A mount: its device (major:minor) and mount point. */
  record Mount(String device, String point) {}

  /**
   * One mount per file system of an allowed type ({@link #MARKED_TYPES}) in {@code mountinfo} lines
   * (proc(5): field 3 major:minor, field 5 the mount point, after " - " the type), the first mount of
   * each device; octal escapes ({@code \040}) decoded.
   */
  static List<Mount> mounts(List<String> mountinfo) {
    List<Mount> mounts = new ArrayList<>();
    Set<String> devices = new HashSet<>();
    for (String line : mountinfo) {
      String[] f = line.split(" ");
      int dash = List.of(f).indexOf("-");
      if (f.length < 5 || dash < 0 || dash + 1 >= f.length) {
        continue;
      }
      if (MARKED_TYPES.contains(f[dash + 1]) && devices.add(f[2])) {
        mounts.add(new Mount(f[2], unescape(f[4])));
      }
    }
    return mounts;
  }

  /** The mount points of {@link #mounts}. */
  static List<String> mountPoints(List<String> mountinfo) {
    return mounts(mountinfo).stream().map(Mount::point).toList();
  }

  /**
   * Marks the file systems of {@code mountinfo} not marked yet, each reached as {@code prefix} + its
   * mount point; returns the ones that failed, with why.
   */
  private List<String> mark(List<String> mountinfo, String prefix) {
    List<String> failed = new ArrayList<>();
    for (Mount m : mounts(mountinfo)) {
      if (markedDevices.contains(m.device())) {
        continue;
      }
      String path = prefix + m.point();
      if (libc.lib.fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN_EXEC_PERM, AT_FDCWD, path) == 0) {
        markedDevices.add(m.device());
        marked.add(path);
      } else {
        failed.add(path + ": " + Libc.describe(libc.errno()));
      }
    }
    return failed;
  }

  /**
   * A process runs in mount namespace {@code mountNamespace} (its exec notice said so; any thread): when
   * the namespace is new, the file systems it sees and gospan's do not (a container's image, an overlay
   * of its own) are marked too, reached through {@code /proc/<pid>/root}, so that execs in it are held
   * from now on (not the first of the namespace's: it made the namespace known).
   */
  public void noticed(int pid, long mountNamespace) {
    if (mountNamespace == 0 || released.get() || !namespacesSeen.add(mountNamespace)) {
      return;
    }
    List<String> mountinfo;
    try {
      mountinfo = Files.readAllLines(Path.of("/proc/" + pid + "/mountinfo"));
    } catch (IOException | RuntimeException e) {
      namespacesSeen.remove(mountNamespace); // gone: the next process of the namespace will do
      return;
    }
    int before = marked.size();
    List<String> failed = mark(mountinfo, "/proc/" + pid + "/root");
    if (marked.size() > before) {
      LOG.debug("exec hold: marked the file systems of mount namespace {} (pid {}): {}", mountNamespace, pid,
          marked.subList(before, marked.size()));
    }
    if (!failed.isEmpty()) {
      LOG.debug("exec hold: not marked in mount namespace {}: {}", mountNamespace, failed);
    }
  }

  static String unescape(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 3 < s.length() && s.substring(i + 1, i + 4).matches("[0-7]{3}")) {
        b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  /** The mount points marked ({@code /proc/<pid>/root/...} for another mount namespace's). */
  public List<String> marked() {
    return List.copyOf(marked);
  }

  // ---- the answering thread

  private void answerLoop() {
    Pointer buf = Memory.allocateDirect(libc.runtime, 64 * 1024);
    Pointer pollFd = Memory.allocateDirect(libc.runtime, 16);
    Pointer counter = Memory.allocateDirect(libc.runtime, 8);
    Pointer response = Memory.allocateDirect(libc.runtime, RESPONSE_BYTES);
    ArrayDeque<Held> pending = new ArrayDeque<>(); // oldest first: all wait the same limit
    try {
      answerEvents(buf, pollFd, counter, response, pending);
    } finally {
      if (running) {
        stalled(); // an Error ended the thread: nothing would answer any more
      }
      // what is still held is released with the descriptor
      for (Held h : pending) {
        libc.lib.close(h.eventFd());
      }
    }
  }

  private void answerEvents(Pointer buf, Pointer pollFd, Pointer counter, Pointer response, ArrayDeque<Held> pending) {
    while (running && !released.get()) {
      try {
        long now = System.nanoTime();
        answerDue(pending, now, response);
        // at most 50 ms in poll: a release (dup2 over fd) must not wait for a syscall holding the group
        int timeout = 50;
        if (!pending.isEmpty()) {
          long left = pending.peekFirst().sinceNanos() + limitNanos - now;
          timeout = (int) Math.max(1, Math.min(timeout, left / 1_000_000L + 1));
        }
        pollFd.putInt(0, fd);
        pollFd.putShort(4, POLLIN);
        pollFd.putShort(6, (short) 0);
        pollFd.putInt(8, wake);
        pollFd.putShort(12, POLLIN);
        pollFd.putShort(14, (short) 0);
        int ready = libc.lib.poll(pollFd, 2, timeout);
        if (ready <= 0 || released.get()) {
          continue;
        }
        if ((pollFd.getShort(14) & POLLIN) != 0) {
          libc.lib.read(wake, counter, 8); // a judgement is done: answered at the loop's start
        }
        if ((pollFd.getShort(6) & POLLIN) == 0) {
          continue;
        }
        long n = libc.lib.read(fd, buf, 64 * 1024);
        if (n <= 0) {
          continue; // EAGAIN, or released meanwhile
        }
        long readAt = System.nanoTime();
        oldestUnanswered.compareAndSet(0, readAt);
        for (int off = 0; off + METADATA_BYTES <= n; ) {
          int len = buf.getInt(off);
          int vers = buf.getByte(off + 4) & 0xff;
          long mask = buf.getLong(off + 8);
          int eventFd = buf.getInt(off + 16);
          int pid = buf.getInt(off + 20);
          if (len < METADATA_BYTES || vers != FANOTIFY_METADATA_VERSION) {
            break;
          }
          off += len;
          if (eventFd == FAN_NOFD || (mask & FAN_OPEN_EXEC_PERM) == 0) {
            if ((mask & FAN_Q_OVERFLOW) != 0) {
              LOG.debug("fanotify queue overflow: execs beyond it were not held");
            }
            continue;
          }
          Held h = consider(eventFd, pid, readAt);
          if (h == null) {
            answer(eventFd, response);
            allowedAtOnce.increment();
          } else {
            pending.addLast(h);
          }
        }
        if (pending.isEmpty()) {
          oldestUnanswered.set(0);
        } else {
          oldestUnanswered.set(pending.peekFirst().sinceNanos());
        }
      } catch (RuntimeException e) {
        LOG.error("the exec hold's answering thread failed; continuing", e);
      }
    }
  }

  /** Whether an exec is to be held (a judgement started), or null to allow it at once. */
  private Held consider(int eventFd, int pid, long readAt) {
    Path file = Path.of("/proc/self/fd/" + eventFd);
    ExeKey key;
    String path;
    try {
      key = ExeKey.of(file); // one fstat of the open file, through its /proc/self/fd link
      if (judge.judged(key)) {
        return null; // the common case: a binary seen before, allowed after one stat and two map lookups
      }
      path = Files.readSymbolicLink(file).toString();
    } catch (IOException | RuntimeException e) {
      return null;
    }
    java.util.function.Predicate<String> stall = stallForTests;
    if (stall != null && stall.test(path)) {
      try {
        closing.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (judge.quick(key, path) == Judge.Verdict.ALLOW || !namesAsProcessDoes(path, key, pid)) {
      return null;
    }
    PinnedFile own;
    try {
      own = PinnedFile.open(file); // discovery's own descriptor: it may read on after the exec is answered
    } catch (IOException e) {
      return null;
    }
    CompletableFuture<?> judged;
    try {
      judged = judge.judge(own, path, pid);
    } catch (RuntimeException e) {
      own.close();
      return null;
    }
    judged.whenComplete((r, e) -> wake());
    return new Held(eventFd, readAt, judged, path);
  }

  /** Wakes the answering thread (any thread). */
  private void wake() {
    Pointer one = Memory.allocateDirect(libc.runtime, 8);
    one.putLong(0, 1);
    libc.lib.write(wake, one, 8);
  }

  /**
   * Whether the event's file is the one the exec'ing process will be known by: reached by its path in
   * gospan's mount namespace, or under the process's root, with the same device and inode. A lower
   * layer's file an overlay opens on the process's behalf is not (its device is the lower file
   * system's, the process's executable the overlay's): that exec is not held, the process is found
   * as any other.
   */
  private static boolean namesAsProcessDoes(String path, ExeKey key, int pid) {
    if (!path.startsWith("/")) {
      return false;
    }
    try {
      if (ExeKey.of(Path.of(path)).equals(key)) {
        return true;
      }
    } catch (IOException | RuntimeException e) {
      // not there in gospan's mount namespace
    }
    if (pid <= 0) {
      return false;
    }
    try {
      return ExeKey.of(Path.of("/proc/" + pid + "/root" + path)).equals(key);
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** Answers the held execs whose judgement is done or whose limit passed. */
  private void answerDue(ArrayDeque<Held> pending, long now, Pointer response) {
    if (pending.isEmpty()) {
      return;
    }
    List<Held> done = new ArrayList<>();
    for (Held h : pending) {
      boolean late = now - h.sinceNanos() >= limitNanos;
      if (h.judged().isDone() || late) {
        done.add(h);
        if (late && !h.judged().isDone()) {
          heldToLimit.increment();
          LOG.debug("allowed the exec of {} after {} ms, before discovery had judged it", Printable.escape(h.path()),
              limitNanos / 1_000_000);
        }
      }
    }
    for (Held h : done) {
      pending.remove(h);
      answer(h.eventFd(), response);
      held.increment();
      heldNanos.add(System.nanoTime() - h.sinceNanos());
    }
    oldestUnanswered.set(pending.isEmpty() ? 0 : pending.peekFirst().sinceNanos());
  }

  /** Allows the exec of event {@code eventFd} and closes the event's descriptor. */
  private void answer(int eventFd, Pointer response) {
    response.putInt(0, eventFd);
    response.putInt(4, FAN_ALLOW);
    if (!fdClosed) {
      libc.lib.write(fd, response, RESPONSE_BYTES); // after a release: written to /dev/null
    }
    libc.lib.close(eventFd);
  }

  // ---- the watchdog

  private void watch() {
    Pointer pollFd = Memory.allocateDirect(libc.runtime, 8);
    long unreadSince = 0;
    while (running && !released.get()) {
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        return;
      }
      long now = System.nanoTime();
      // events waiting unread (the answering thread not reading at all) count as much as events read and unanswered
      pollFd.putInt(0, fd);
      pollFd.putShort(4, POLLIN);
      pollFd.putShort(6, (short) 0);
      boolean unread = !released.get() && libc.lib.poll(pollFd, 1, 0) > 0 && (pollFd.getShort(6) & POLLIN) != 0;
      unreadSince = unread ? (unreadSince == 0 ? now : unreadSince) : 0;
      long since = oldestUnanswered.get();
      long oldest = since == 0 ? unreadSince : unreadSince == 0 ? since : Math.min(since, unreadSince);
      if (oldest != 0 && now - oldest > limitNanos + WATCHDOG_SLACK_NANOS) {
        stalled();
        return;
      }
    }
  }

  /** The answering thread stalled, or ended: every held exec released, holding stops (said once). */
  private void stalled() {
    if (released.get()) {
      return;
    }
    watchdogReleases.increment();
    release();
    LOG.error("the exec hold's answering thread did not answer within {} ms: every held exec is released and execs are no"
        + " longer held (new binaries' first runs are traced from their second run on)", (limitNanos + WATCHDOG_SLACK_NANOS) / 1_000_000);
  }

  /**
   * Releases every held exec and stops holding: the fanotify descriptor's number is made to name
   * {@code /dev/null} (dup2), so the group's last reference goes and the kernel allows what it held;
   * the number stays gospan's, so a late answer cannot reach another file.
   */
  private void release() {
    if (!released.compareAndSet(false, true)) {
      return;
    }
    int devNull = libc.lib.open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devNull < 0 || libc.lib.dup2(devNull, fd) < 0) {
      fdClosed = true;
      libc.lib.close(fd); // nothing better: the number may be reused, the answering thread stops before writing
    }
    if (devNull >= 0) {
      libc.lib.close(devNull);
    }
  }

  // ---- counters (any thread)

  /** Execs held until judged or until the limit. */
  public long held() {
    return held.sum();
  }

  /** Nanoseconds the held execs waited, summed. */
  public long heldNanos() {
    return heldNanos.sum();
  }

  /** Execs allowed at once (a binary judged already, not wanted, or not held). */
  public long allowedAtOnce() {
    return allowedAtOnce.sum();
  }

  /** Held execs allowed when the limit passed, before discovery had judged their binary. */
  public long heldToLimit() {
    return heldToLimit.sum();
  }

  /** Times the watchdog released every held exec because the answering thread stalled (0 or 1). */
  public long watchdogReleases() {
    return watchdogReleases.sum();
  }

  /** Whether execs are still held (not released by the watchdog or {@link #close()}). */
  public boolean holding() {
    return !released.get();
  }

  /** Releases every held exec and stops. */
  @Override
  public void close() {
    running = false;
    release();
    closing.countDown();
    try {
      answering.join(2000);
      watchdog.interrupt();
      watchdog.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (!fdClosed) {
      libc.lib.close(fd);
    }
    libc.lib.close(wake);
  }
}
