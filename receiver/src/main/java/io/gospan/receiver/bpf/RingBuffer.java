package io.gospan.receiver.bpf;

import com.kenai.jffi.MemoryIO;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jnr.constants.platform.Errno;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer of a {@code BPF_MAP_TYPE_RINGBUF} map. One thread polls; {@link #poll} and {@link
 * #consume} run the handler on the calling thread for each record, in the order the kernel
 * committed them.
 *
 * <p>By default ({@link #open}) the records are read in Java from the map's pages mapped into
 * this process, the way libbpf's {@code ring_buffer__consume} reads them (libbpf src/ringbuf.c,
 * {@code ringbuf_process_ring}, v1.1; the kernel's layout in kernel/bpf/ringbuf.c): a read-write
 * page holding {@code consumer_pos}, then a read-only page holding {@code producer_pos} followed
 * by the data area; each record is an 8-byte header (a 32-bit length whose bit 31 is the busy
 * bit, set while the producer writes it, and bit 30 the discard bit; then the page offset) and
 * its bytes, padded to 8. A busy record stops the read there (the next poll goes on from it);
 * discarded records are skipped. The data area is mapped once, not twice as libbpf does (a
 * record that wraps around the end is copied in two parts): the second mapping would be another
 * {@code max_entries} bytes of resident memory. Waiting is an {@code epoll_wait} on the map's fd
 * (readable while data waits; woken only when a producer asks for a wakeup). No native call per
 * record: the jnr-ffi upcall libbpf's callback needs cost 0.5–1 µs per record
 * (docs/benchmarks.md). {@code consumer_pos} is published every {@link #RELEASE_EVERY} records and
 * at the end of each read, not after every record (a store to a cache line every producer
 * reads).
 *
 * <p>{@link #openWithLibbpf} reads the same map through libbpf's {@code ring_buffer__poll} and
 * {@code __consume} (one upcall per record): the reference the mapped reader is tested against, and
 * the fallback when mapping fails.
 */
public final class RingBuffer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RingBuffer.class);

  /** Receives ring buffer records. */
  @FunctionalInterface
  public interface RecordHandler {
    /**
     * One record. {@code record} is a little-endian view valid only during this call (its
     * bytes are reused for the next record); copy what must outlive it.
     */
    void onRecord(ByteBuffer record);
  }

  /** include/uapi/linux/bpf.h: BPF_RINGBUF_BUSY_BIT, BPF_RINGBUF_DISCARD_BIT, BPF_RINGBUF_HDR_SZ. */
  static final int BUSY_BIT = 1 << 31;
  static final int DISCARD_BIT = 1 << 30;
  static final int HEADER_SIZE = 8;

  /** Records read between two stores of {@code consumer_pos}. */
  static final int RELEASE_EVERY = 32;

  private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  private static final int PROT_READ = 1;
  private static final int PROT_WRITE = 2;
  private static final int MAP_SHARED = 1;
  private static final int SC_PAGESIZE = 30;
  private static final int EPOLL_CLOEXEC = 0x80000;
  private static final int EPOLL_CTL_ADD = 1;
  private static final int EPOLLIN = 1;
  private static final int EPOLL_EVENT_SIZE = 12; // struct epoll_event, packed on x86-64

  private final BpfMap map;
  private final RecordHandler handler;
  private final Libbpf libbpf;
  private byte[] scratch = new byte[4096];
  /** The view handed to the handler, over {@code scratch}: one object for every record, not one per record. */
  private ByteBuffer view = ByteBuffer.wrap(scratch).order(ByteOrder.LITTLE_ENDIAN);
  private long handlerFailures;
  private long busyStops;

  // the mapped reader
  private Pointer consumerMapping;
  private Pointer producerMapping;
  private ByteBuffer consumerPage;
  /** The producer page, then the data area ({@code dataOffset}). */
  private ByteBuffer producerPages;
  private int dataOffset;
  private long mask;
  private long producerMappingSize;
  private long pageSize;
  private int epollFd = -1;
  private Pointer epollEvents;

  // libbpf's reader
  /** Strongly referenced for as long as libbpf may call it (until ring_buffer__free). */
  private LibbpfNative.SampleFn sampleFn;
  private Pointer rb;

  private boolean closed;

  private RingBuffer(BpfMap map, RecordHandler handler) {
    this.map = map;
    this.handler = handler;
    this.libbpf = map.object().libbpf();
  }

  /**
   * Opens a consumer on a loaded ring buffer map that reads the records from the map's mapped
   * pages (see the class comment); when the pages cannot be mapped, libbpf's consumer instead
   * (logged once).
   *
   * @throws BpfException when the map is not a ring buffer, or neither reader can be set up
   */
  public static RingBuffer open(BpfMap map, RecordHandler handler) {
    checkType(map);
    RingBuffer r = new RingBuffer(map, handler);
    try {
      r.mapPages();
      return r;
    } catch (BpfException e) {
      r.close();
      LOG.warn("ring buffer {}: reading it through libbpf ({})", map.name(), e.getMessage());
      return openWithLibbpf(map, handler);
    }
  }

  /**
   * Opens a consumer on a loaded ring buffer map that reads through libbpf ({@code
   * ring_buffer__new/__poll/__consume}: one native upcall per record).
   *
   * @throws BpfException when the map is not a ring buffer or libbpf fails
   */
  public static RingBuffer openWithLibbpf(BpfMap map, RecordHandler handler) {
    checkType(map);
    RingBuffer r = new RingBuffer(map, handler);
    r.sampleFn = r::sample;
    try (Libbpf.LogCapture log = Libbpf.captureLog()) {
      Pointer p = r.libbpf.lib.ring_buffer__new(map.fd(), r.sampleFn, null, null);
      if (p == null) {
        throw BpfException.of("opening ring buffer " + map.name(), r.libbpf.lastErrno(), log.text());
      }
      r.rb = p;
    }
    return r;
  }

  private static void checkType(BpfMap map) {
    if (map.type() != BpfMap.BPF_MAP_TYPE_RINGBUF) {
      throw new BpfException("map " + map.name() + " is not a ring buffer (type " + map.type() + ")", Errno.EINVAL.intValue());
    }
  }

  /** Whether the records are read from the mapped pages (else through libbpf). */
  public boolean mapped() {
    return producerPages != null;
  }

  private void mapPages() {
    LibcNative libc = libbpf.libc;
    int fd = map.fd();
    long size = Integer.toUnsignedLong(map.maxEntries());
    pageSize = libc.sysconf(SC_PAGESIZE);
    if (pageSize <= 0 || Long.bitCount(size) != 1 || pageSize + size > Integer.MAX_VALUE) {
      throw new BpfException("ring buffer " + map.name() + " of " + size + " bytes cannot be mapped here (page size " + pageSize + ")",
          Errno.EINVAL.intValue());
    }
    consumerMapping = mmap(libc, pageSize, PROT_READ | PROT_WRITE, fd, 0, "consumer page");
    producerMappingSize = pageSize + size;
    producerMapping = mmap(libc, producerMappingSize, PROT_READ, fd, pageSize, "producer page and data");
    MemoryIO io = MemoryIO.getInstance();
    consumerPage = io.newDirectByteBuffer(consumerMapping.address(), (int) pageSize).order(ByteOrder.LITTLE_ENDIAN);
    producerPages = io.newDirectByteBuffer(producerMapping.address(), (int) producerMappingSize).order(ByteOrder.LITTLE_ENDIAN);
    dataOffset = (int) pageSize;
    mask = size - 1;
    epollFd = libc.epoll_create1(EPOLL_CLOEXEC);
    if (epollFd < 0) {
      throw BpfException.of("epoll_create1 for ring buffer " + map.name(), libbpf.lastErrno(), null);
    }
    epollEvents = Memory.allocateDirect(libbpf.runtime, EPOLL_EVENT_SIZE, true);
    epollEvents.putInt(0, EPOLLIN);
    if (libc.epoll_ctl(epollFd, EPOLL_CTL_ADD, fd, epollEvents) < 0) {
      throw BpfException.of("epoll_ctl(ADD) of ring buffer " + map.name(), libbpf.lastErrno(), null);
    }
  }

  private Pointer mmap(LibcNative libc, long length, int prot, int fd, long offset, String what) {
    Pointer p = libc.mmap(null, length, prot, MAP_SHARED, fd, offset);
    if (p == null || p.address() == -1L) {
      throw BpfException.of("mapping the " + what + " of ring buffer " + map.name(), libbpf.lastErrno(), null);
    }
    return p;
  }

  /**
   * Waits up to {@code timeoutMs} for a wakeup and hands each record available then to the
   * handler.
   *
   * @return number of records consumed (0 on timeout or when interrupted by a signal)
   * @throws BpfException on an epoll error
   */
  public int poll(int timeoutMs) {
    ensureOpen();
    if (rb != null) {
      int n = libbpf.lib.ring_buffer__poll(rb, timeoutMs);
      if (n == -4) { // EINTR: a signal arrived, not an error
        return 0;
      }
      if (n < 0) {
        throw BpfException.of("polling ring buffer " + map.name(), -n, null);
      }
      return n;
    }
    int ready = libbpf.libc.epoll_wait(epollFd, epollEvents, 1, timeoutMs);
    if (ready < 0) {
      int errno = libbpf.lastErrno();
      if (errno == Errno.EINTR.intValue()) {
        return 0;
      }
      throw BpfException.of("polling ring buffer " + map.name(), errno, null);
    }
    return ready == 0 ? 0 : readRecords();
  }

  /** Hands every record available now to the handler without waiting. */
  public int consume() {
    ensureOpen();
    if (rb != null) {
      int n = libbpf.lib.ring_buffer__consume(rb);
      if (n < 0) {
        throw BpfException.of("consuming ring buffer " + map.name(), -n, null);
      }
      return n;
    }
    return readRecords();
  }

  /** Records whose handler threw (the record is dropped, polling goes on). */
  public long handlerFailures() {
    return handlerFailures;
  }

  /**
   * Reads that stopped at a record its producer was still writing (the busy bit; the record is
   * read by the next poll). Mapped reader only.
   */
  public long busyStops() {
    return busyStops;
  }

  /** libbpf's {@code ringbuf_process_ring}, reading the mapped pages. */
  private int readRecords() {
    ByteBuffer pages = producerPages;
    long cons = (long) LONGS.getAcquire(consumerPage, 0);
    int count = 0;
    int unreleased = 0;
    boolean more;
    scan:
    do {
      more = false;
      long prod = (long) LONGS.getAcquire(pages, 0);
      while (cons < prod) {
        int at = (int) (cons & mask);
        int header = (int) INTS.getAcquire(pages, dataOffset + at);
        if ((header & BUSY_BIT) != 0) {
          busyStops++;
          break scan;
        }
        more = true;
        int len = header & ~(BUSY_BIT | DISCARD_BIT);
        if (len > mask + 1 - HEADER_SIZE) {
          // the kernel never commits such a length: stop rather than read past the record
          LONGS.setRelease(consumerPage, 0, cons);
          throw new BpfException("ring buffer " + map.name() + ": record of " + len + " bytes at position " + cons, Errno.EIO.intValue());
        }
        cons += (len + HEADER_SIZE + 7) & ~7L;
        if ((header & DISCARD_BIT) == 0) {
          deliver((at + HEADER_SIZE) & mask, len);
          count++;
        }
        if (++unreleased == RELEASE_EVERY) {
          LONGS.setRelease(consumerPage, 0, cons);
          unreleased = 0;
        }
      }
    } while (more);
    LONGS.setRelease(consumerPage, 0, cons);
    return count;
  }

  /** Copies the record at data offset {@code at} (wrapping around the end) and hands it over. */
  private void deliver(long at, int len) {
    ensureScratch(len);
    int from = (int) at;
    int first = (int) Math.min(len, mask + 1 - at);
    producerPages.get(dataOffset + from, scratch, 0, first);
    if (first < len) {
      producerPages.get(dataOffset, scratch, first, len - first);
    }
    handle(len);
  }

  private void ensureScratch(int n) {
    if (scratch.length < n) {
      scratch = new byte[Math.max(n, scratch.length * 2)];
      view = ByteBuffer.wrap(scratch).order(ByteOrder.LITTLE_ENDIAN);
    }
  }

  private void handle(int n) {
    try {
      view.clear().limit(n); // position 0, limit n: the record; absolute reads are record offsets
      handler.onRecord(view);
    } catch (RuntimeException e) {
      // Never stop consuming (nor unwind into native code) because of one record.
      handlerFailures++;
      if (handlerFailures == 1 || Long.bitCount(handlerFailures) == 1) {
        LOG.warn("ring buffer {} handler failed ({} so far)", map.name(), handlerFailures, e);
      }
    }
  }

  /** libbpf's sample callback. */
  private int sample(Pointer ctx, Pointer data, long size) {
    try {
      int n = (int) size;
      ensureScratch(n);
      data.get(0, scratch, 0, n);
    } catch (RuntimeException e) {
      handlerFailures++;
      return 0;
    }
    handle((int) size);
    return 0;
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("ring buffer " + map.name() + " is closed");
    }
  }

  /** Frees the consumer (unmaps the pages, or libbpf's ring buffer). Idempotent. */
  @Override
  public void close() {
    closed = true;
    if (rb != null) {
      libbpf.lib.ring_buffer__free(rb);
      rb = null;
    }
    LibcNative libc = libbpf.libc;
    consumerPage = null;
    producerPages = null;
    if (consumerMapping != null && consumerMapping.address() != -1L) {
      libc.munmap(consumerMapping, pageSize);
    }
    consumerMapping = null;
    if (producerMapping != null && producerMapping.address() != -1L) {
      libc.munmap(producerMapping, producerMappingSize);
    }
    producerMapping = null;
    if (epollFd >= 0) {
      libc.close(epollFd);
      epollFd = -1;
    }
  }
}
