package io.gospan.receiver.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import org.junit.jupiter.api.Test;

/**
 * The ring buffer reader of the mapped pages ({@link RingBuffer#open}) against libbpf's own
 * consumer ({@link RingBuffer#openWithLibbpf}) on real kernel output: {@code bpf/test/ringbuf.bpf.c}
 * run through {@code BPF_PROG_TEST_RUN}, one record per run, lengths 8–400 bytes (mostly not a
 * multiple of 8), a 16 KiB ring buffer so the records wrap around its end hundreds of times, every
 * 7th record reserved and discarded; and with the producer on another thread while the reader
 * reads, so that records still being written (the busy bit) are met.
 */
class RingBufferIT {

  /** libbpf's {@code bpf_prog_test_run_opts} (src/bpf.h, v1.1). */
  public interface TestRun {
    int bpf_prog_test_run_opts(int progFd, Pointer opts);
  }

  private static final TestRun TEST_RUN = loadTestRun();
  private static final int RING_BYTES = 1 << 14;
  private static final int DISCARD_EVERY = 7;
  private static final int MAX_RECORD = 400;

  /** After {@link Libbpf#get()}: jnr-ffi's loader is chosen by the first library loaded, as in the sidecar. */
  private static TestRun loadTestRun() {
    Libbpf.get();
    return LibraryLoader.create(TestRun.class).failImmediately().load("libbpf.so.1");
  }

  /** One record as read: its sequence number and whether its bytes are the ones written. */
  record Read(long seq, int length, boolean intact) {}

  /** The loaded fixture: the program, its ring buffer and counters. */
  private static final class Fixture implements AutoCloseable {
    final BpfObject obj;
    final BpfProgram prog;
    final Pointer opts;
    final Pointer ctx;

    Fixture() throws IOException {
      byte[] elf;
      try (InputStream in = RingBufferIT.class.getResourceAsStream("/io/gospan/bpf/test/ringbuf.bpf.o")) {
        assertThat(in).as("test object built from bpf/test/ringbuf.bpf.c").isNotNull();
        elf = in.readAllBytes();
      }
      obj = BpfObject.open("ringbuf.bpf.o", elf);
      obj.map("records").setMaxEntries(RING_BYTES);
      obj.setGlobal("discard_every", ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(DISCARD_EVERY).array());
      obj.load();
      prog = obj.program("write_record");
      jnr.ffi.Runtime rt = Libbpf.get().runtime;
      ctx = Memory.allocateDirect(rt, 8, true);
      // struct bpf_test_run_opts (libbpf 1.1): sz@0, ctx_in@32, ctx_size_in@48; 80 bytes
      opts = Memory.allocateDirect(rt, 80, true);
      opts.putLong(0, 80);
      opts.putAddress(32, ctx.address());
      opts.putInt(48, 8);
    }

    /** Runs the program {@code n} times: n records attempted. */
    void write(int n) {
      for (int i = 0; i < n; i++) {
        int err = TEST_RUN.bpf_prog_test_run_opts(prog.fd(), opts);
        assertThat(err).as("bpf_prog_test_run_opts").isZero();
      }
    }

    long count(int index) {
      byte[] key = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(index).array();
      return ByteBuffer.wrap(obj.map("counts").lookup(key).orElseThrow()).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    BpfMap ring() {
      return obj.map("records");
    }

    @Override
    public void close() {
      obj.close();
    }
  }

  static Read read(ByteBuffer b) {
    long seq = b.getLong(0);
    boolean intact = b.remaining() == 8 + (seq * 37) % (MAX_RECORD - 7);
    for (int i = 8; i < b.remaining() && intact; i++) {
      intact = b.get(i) == (byte) (seq + i - 8);
    }
    return new Read(seq, b.remaining(), intact);
  }

  /** What the fixture must have produced for sequence numbers [from, to) when nothing was full. */
  static List<Read> expected(long from, long to) {
    List<Read> out = new ArrayList<>();
    for (long n = from; n < to; n++) {
      if (n % DISCARD_EVERY != DISCARD_EVERY - 1) {
        out.add(new Read(n, (int) (8 + (n * 37) % (MAX_RECORD - 7)), true));
      }
    }
    return out;
  }

  @Test
  void readsWhatLibbpfReadsInTheSameOrderAcrossWrapAround() throws IOException {
    try (Fixture f = new Fixture()) {
      List<Read> mapped = new ArrayList<>();
      List<Read> libbpf = new ArrayList<>();
      int rounds = 300; // ~300 × 30 records of ~200 bytes: the 16 KiB ring wraps ~110 times per reader
      try (RingBuffer rb = RingBuffer.open(f.ring(), b -> mapped.add(read(b)))) {
        assertThat(rb.mapped()).as("the pages mapped").isTrue();
        for (int i = 0; i < rounds; i++) {
          f.write(30); // ~6 KiB: fits the 16 KiB ring
          assertThat(rb.consume()).isPositive();
        }
        assertThat(rb.handlerFailures()).isZero();
      }
      assertThat(f.count(1)).as("records lost to a full ring buffer").isZero();
      long seq = f.count(0);
      assertThat(mapped).isEqualTo(expected(0, seq));
      // the same again, read by libbpf, which goes on from where the mapped reader left consumer_pos
      try (RingBuffer rb = RingBuffer.openWithLibbpf(f.ring(), b -> libbpf.add(read(b)))) {
        assertThat(rb.mapped()).isFalse();
        for (int i = 0; i < rounds; i++) {
          f.write(30);
          rb.consume();
        }
      }
      assertThat(f.count(1)).isZero();
      assertThat(libbpf).isEqualTo(expected(seq, f.count(0)));
      // each reader went round the ring more than 100 times
      assertThat(mapped.stream().mapToLong(r -> (r.length() + 8 + 7) & ~7).sum()).isGreaterThan(100L * RING_BYTES);
      assertThat(libbpf.stream().mapToLong(r -> (r.length() + 8 + 7) & ~7).sum()).isGreaterThan(100L * RING_BYTES);
      assertThat(f.count(2)).as("discarded").isEqualTo(f.count(0) / DISCARD_EVERY);
      // a discarded record is skipped, never handed over
      assertThat(mapped).noneMatch(r -> r.seq() % DISCARD_EVERY == DISCARD_EVERY - 1);
    }
  }

  @Test
  void readsWhileTheProducerWritesInOrderWithoutGaps() throws Exception {
    for (boolean viaLibbpf : new boolean[] {false, true}) {
      try (Fixture f = new Fixture()) {
        List<Read> got = new ArrayList<>();
        int records = 40_000;
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread producer = new Thread(() -> {
          try {
            f.write(records);
          } catch (Throwable t) {
            failed.set(t);
          }
        }, "ringbuf-producer");
        long busy;
        try (RingBuffer rb = viaLibbpf ? RingBuffer.openWithLibbpf(f.ring(), b -> got.add(read(b)))
            : RingBuffer.open(f.ring(), b -> got.add(read(b)))) {
          producer.start();
          while (producer.isAlive()) {
            rb.consume();
          }
          producer.join();
          rb.consume();
          busy = rb.busyStops();
        }
        assertThat(failed.get()).isNull();
        long full = f.count(1);
        long discarded = f.count(2);
        String reader = viaLibbpf ? "libbpf" : "mapped";
        System.out.printf("%s reader: %d records read, %d lost to a full ring, %d discarded, %d reads stopped at a busy record%n",
            reader, got.size(), full, discarded, busy);
        assertThat(f.count(0)).isEqualTo(records);
        assertThat(got).as(reader).allMatch(Read::intact);
        assertThat((long) got.size()).as(reader + ": every record written was read once").isEqualTo(records - full - discarded);
        for (int i = 1; i < got.size(); i++) {
          assertThat(got.get(i).seq()).as(reader + ": in order").isGreaterThan(got.get(i - 1).seq());
        }
      }
    }
  }
}
