package io.gospan.receiver.discovery;

import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.resolve.Preference;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The binaries of the processes already running when gospan starts, read on a thread of their own
 * ({@code gospan-early-inspection}) while the export pipeline is built and the probes load: the
 * first scan then finds their inspections done, or waits for the one under way, instead of reading
 * each binary in turn after the probes are loaded (docs/benchmarks.md, "Cold start").
 *
 * <p>Only reading: a process is selected as the first scan would select it ({@link
 * ProcessSelector#judge}: traced, or waiting for its {@code open_port}), its binary opened once
 * ({@link PinnedFile}) and inspected ({@link BinaryInspection#inspect}, the code {@code gospan
 * inspect} uses); nothing is attached, logged or remembered as unsuitable here. The discovery thread
 * {@link #take}s each outcome, a failure included, and judges it as one of its own reads; a binary
 * the first scan reaches before this thread does is claimed by the scan and read there. Ends at the
 * end of the first scan ({@link #close}).
 */
public final class EarlyInspections implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Tracer.class); // discovery's log lines, as ever

  /** Nothing read early: every binary is read by discovery itself. */
  static final EarlyInspections NONE = new EarlyInspections();

  /** A binary's read: the inspection, or why it failed. */
  record Outcome(BinaryInspection inspection, IOException failure) {}

  /** Claimed by the discovery thread: it reads the binary itself. */
  private static final CompletableFuture<Outcome> CLAIMED = CompletableFuture.completedFuture(null);

  private final ConcurrentMap<BinaryCache.FileIdentity, CompletableFuture<Outcome>> reads = new ConcurrentHashMap<>();
  private final Thread thread;
  private volatile boolean closed;
  private final AtomicInteger read = new AtomicInteger();
  private final AtomicInteger taken = new AtomicInteger();

  private EarlyInspections() {
    this.thread = null;
    this.closed = true;
  }

  private EarlyInspections(ProcFs procFs, ProcessSelector selector, Preference preference, boolean responseHeaders) {
    this.thread = new Thread(() -> readAll(procFs, selector, preference, responseHeaders), "gospan-early-inspection");
    thread.setDaemon(true);
  }

  /**
   * Starts reading the binaries of the processes {@code options} selects that run now (returns at
   * once). Nothing it finds is acted on until a {@link Sidecar} started with it scans.
   */
  public static EarlyInspections start(Sidecar.Options options) {
    return start(options.procFs(), options.selector(), options.preference(), options.headerNames().capturesResponses());
  }

  /** As {@link #start(Sidecar.Options)}, with discovery's settings given one by one. */
  static EarlyInspections start(ProcFs procFs, ProcessSelector selector, Preference preference, boolean responseHeaders) {
    EarlyInspections e = new EarlyInspections(procFs, selector, preference, responseHeaders);
    e.thread.start();
    return e;
  }

  private void readAll(ProcFs procFs, ProcessSelector selector, Preference preference, boolean responseHeaders) {
    long t0 = System.nanoTime();
    try {
      Set<Integer> pids = procFs.pids();
      int self = (int) ProcessHandle.current().pid();
      PortLookup ports = new PortLookup(procFs);
      for (int pid : pids) {
        if (closed) {
          break;
        }
        if (pid == self) {
          continue;
        }
        Optional<ProcessEntry> e = procFs.entry(pid);
        if (e.isEmpty() || selector.judge(e.get(), procFs, ports) == ProcessSelector.Verdict.IGNORE) {
          continue;
        }
        if (read(e.get(), preference, responseHeaders)) {
          read.incrementAndGet();
        }
      }
    } catch (RuntimeException | LinkageError e) {
      // the first scan reads what was not read here, and says what fails there
      LOG.debug("early inspection stopped: {}", Printable.escape(e.toString()));
    }
    LOG.debug("{} binaries of running processes read early in {} ms", read.get(), (System.nanoTime() - t0) / 1_000_000);
  }

  /** Reads {@code p}'s binary unless it was read or claimed already; whether it was read here. */
  private boolean read(ProcessEntry p, Preference preference, boolean responseHeaders) {
    try (PinnedFile file = PinnedFile.open(BinaryInspections.durablePath(p))) {
      if (!file.key().equals(p.key())) {
        return false; // exited, and its path names another file now
      }
      BinaryCache.FileIdentity id = BinaryCache.FileIdentity.of(file.path());
      CompletableFuture<Outcome> mine = new CompletableFuture<>();
      if (reads.putIfAbsent(id, mine) != null) {
        return false;
      }
      Outcome o;
      try {
        o = new Outcome(BinaryInspection.inspect(file.path(), preference, responseHeaders), null);
      } catch (IOException ex) {
        o = new Outcome(null, ex);
      } catch (RuntimeException | Error ex) {
        mine.complete(null); // the discovery thread reads it again, and says what fails
        throw ex;
      }
      mine.complete(o);
      if (closed) {
        reads.remove(id); // closed meanwhile: nobody takes it
      }
      return true;
    } catch (IOException gone) {
      return false; // exited: nothing to read
    }
  }

  /**
   * The early read of the binary {@code id}, waiting for it if it is under way; empty when it was
   * not read early (it is then claimed: this thread will not read it). Discovery thread.
   */
  Optional<Outcome> take(BinaryCache.FileIdentity id) {
    if (closed) {
      return Optional.empty();
    }
    CompletableFuture<Outcome> f = reads.putIfAbsent(id, CLAIMED);
    if (f == null || f == CLAIMED) {
      return Optional.empty();
    }
    taken.incrementAndGet();
    reads.put(id, CLAIMED); // taken once: a later read of the same file is discovery's (a cache miss, an evicted entry)
    return Optional.ofNullable(f.join());
  }

  /** Binaries read here so far. */
  int read() {
    return read.get();
  }

  /** Early reads the discovery thread took. */
  int taken() {
    return taken.get();
  }

  /** Waits until every binary of the processes running at the start was read (tests); whether they were. */
  boolean awaitRead(Duration timeout) throws InterruptedException {
    thread.join(timeout.toMillis());
    return !thread.isAlive();
  }

  /** Stops reading (after the binary under way) and forgets what was not taken. Any thread. */
  @Override
  public void close() {
    closed = true;
    reads.clear();
  }
}
