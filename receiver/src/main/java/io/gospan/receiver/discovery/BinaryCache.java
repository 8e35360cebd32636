package io.gospan.receiver.discovery;

import io.gospan.receiver.probe.ExeKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * What was learnt of a binary file, kept after its probes are detached so that the next process
 * of the same file is attached without reading the binary again (its DWARF is what costs: tens to
 * hundreds of milliseconds, see docs/benchmarks.md). Keyed by a {@link FileIdentity}: device,
 * inode, size, modification and change time, all from one {@code stat(2)}; a file rewritten in
 * place, or an inode freed and given to another file, has another identity (the change time
 * also moves on chmod, chown and a new hard link: the next process then costs one read, never a
 * wrong inspection). Least recently used entries go beyond {@code capacity}.
 *
 * <p>Not thread-safe: the discovery thread only, except the counters.
 *
 * @param <V> what is kept per file (an inspection)
 */
final class BinaryCache<V> {

  /**
   * A file's identity as {@code stat(2)} gives it.
   *
   * @param key device (kernel encoding) and inode, as the probes know the binary
   * @param size bytes
   * @param mtimeNanos last modification, nanoseconds since the epoch
   * @param ctimeNanos last inode change (set when the file is created, written, renamed), nanoseconds since the epoch
   */
  record FileIdentity(ExeKey key, long size, long mtimeNanos, long ctimeNanos) {

    /**
     * Stats {@code file} (following a symbolic link such as {@code /proc/<pid>/exe}).
     *
     * @throws IOException when it cannot be stat'ed (e.g. the process exited)
     */
    static FileIdentity of(Path file) throws IOException {
      ExeKey key = ExeKey.of(file);
      Map<String, Object> a = Files.readAttributes(file, "unix:ino,size,lastModifiedTime,ctime");
      if (((Number) a.get("ino")).longValue() != key.ino()) {
        throw new IOException("the file changed while it was stat'ed"); // a pid reused meanwhile
      }
      return new FileIdentity(
          key,
          ((Number) a.get("size")).longValue(),
          ((FileTime) a.get("lastModifiedTime")).to(TimeUnit.NANOSECONDS),
          ((FileTime) a.get("ctime")).to(TimeUnit.NANOSECONDS));
    }
  }

  private final Map<FileIdentity, V> entries;
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  /** @param capacity entries kept at most (0: nothing is kept) */
  BinaryCache(int capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity must not be negative: " + capacity);
    }
    this.entries = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<FileIdentity, V> e) {
        return size() > capacity;
      }
    };
  }

  /** What is kept for {@code id}, counted as a hit or a miss. */
  Optional<V> get(FileIdentity id) {
    V v = entries.get(id);
    (v == null ? misses : hits).increment();
    return Optional.ofNullable(v);
  }

  void put(FileIdentity id, V value) {
    entries.put(id, value);
  }

  int size() {
    return entries.size();
  }

  /** Lookups that found an entry. Any thread. */
  long hits() {
    return hits.sum();
  }

  /** Lookups that found none. Any thread. */
  long misses() {
    return misses.sum();
  }
}
