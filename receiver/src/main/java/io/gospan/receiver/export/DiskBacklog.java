package io.gospan.receiver.export;

import io.gospan.receiver.config.ConfigException;
import io.opentelemetry.contrib.disk.buffering.storage.impl.FileSpanStorage;
import io.opentelemetry.contrib.disk.buffering.storage.impl.FileStorageConfiguration;
import io.opentelemetry.contrib.disk.buffering.storage.result.WriteResult;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The export queue on disk: the OpenTelemetry Java contrib disk-buffering library's {@link
 * FileSpanStorage} (OTLP protobuf, one length-delimited batch after another, in files named by
 * their creation time in milliseconds) in {@code <directory>/spans}. The library reads the oldest
 * file first and deletes what has been read once it is sent, and ignores files older than {@value
 * #MAX_AGE_HOURS} h. The bound in bytes is kept here ({@link #enforceBound}), not by the library.
 *
 * <p>A file is written to for at most {@value #WRITE_MILLIS} ms and read from {@value #READ_MILLIS}
 * ms after its creation (the library keeps writer and reader on different files by age), so spans
 * wait at least that long on disk before they are sent: the price of surviving a restart.
 *
 * <p>The library does not say which file a batch went to or came from, nor how many spans a file
 * it deleted held; this class keeps the span count of every file it wrote to (by its name): a
 * written batch is counted in the file that grew, a sent batch taken from the file that shrank or
 * went (the library truncates a sent batch off its file's top: disk-buffering 1.53.0-alpha,
 * ReadableFile.removeTopItem), and the spans of a file that disappears before it was read out are
 * counted as dropped. Files left by an earlier run have no known count: their loss is logged as a
 * file.
 */
final class DiskBacklog implements Backlog {
  private static final Logger log = LoggerFactory.getLogger(DiskBacklog.class);
  static final long WRITE_MILLIS = 200;
  static final long READ_MILLIS = 300;
  static final long MAX_AGE_HOURS = 7 * 24;
  private static final long UNKNOWN = -1;

  private final Path dir;
  private final FileSpanStorage storage;
  private final Iterator<Collection<SpanData>> reader;
  /** Span count still in each file this process knows of, by name (= creation millis); UNKNOWN for an earlier run's. */
  private final TreeMap<String, Long> counts = new TreeMap<>();
  private final int fileSize;
  private final long maxBytes;
  private List<SpanData> current;
  private long droppedElsewhere;

  /**
   * @throws ConfigException the directory cannot be created or written ({@code exporter.queue.directory})
   */
  DiskBacklog(Path directory, long maxBytes) {
    this.dir = directory.resolve("spans");
    try {
      Files.createDirectories(dir);
      if (!Files.isWritable(dir)) {
        throw new IOException("not writable");
      }
    } catch (IOException e) {
      throw new ConfigException("exporter.queue.directory: cannot use '" + directory + "': " + e.getMessage(), e);
    }
    int max = (int) maxBytes;
    this.maxBytes = maxBytes;
    this.fileSize = fileSize(max);
    FileStorageConfiguration cfg =
        FileStorageConfiguration.builder()
            // The bound is kept by enforceBound: the library's own deletion (one file when a new
            // one would not fit) closes the file under the reader, whose iterator then fails on
            // every later read (disk-buffering 1.53.0-alpha, StorageIterator.findNext).
            .setMaxFolderSize(Integer.MAX_VALUE)
            .setMaxFileSize(fileSize(max))
            .setMaxFileAgeForWriteMillis(WRITE_MILLIS)
            .setMinFileAgeForReadMillis(READ_MILLIS)
            .setMaxFileAgeForReadMillis(TimeUnit.HOURS.toMillis(MAX_AGE_HOURS))
            .build();
    for (String name : names()) {
      counts.put(name, UNKNOWN);
    }
    this.storage = FileSpanStorage.create(dir.toFile(), cfg);
    this.reader = storage.iterator();
    if (!counts.isEmpty()) {
      log.info("export queue: {} file(s) ({} bytes) left in {} by an earlier run; sending them first", counts.size(), bytes(), dir);
    }
  }

  /**
   * A file's size limit: a 16th of the bound (what is dropped at once when the bound is reached),
   * at least 256 KiB so that a batch of spans fits (a batch larger than a file cannot be written
   * and is dropped), at most 4 MiB, never more than a quarter of the bound ({@link #enforceBound}).
   */
  static int fileSize(int maxBytes) {
    return Math.min(maxBytes / 4, Math.max(256 << 10, Math.min(4 << 20, maxBytes / 16)));
  }

  private List<String> names() {
    String[] names = dir.toFile().list();
    List<String> out = new ArrayList<>();
    if (names != null) {
      for (String n : names) {
        if (n.chars().allMatch(Character::isDigit) && !n.isEmpty()) {
          out.add(n);
        }
      }
    }
    return out;
  }

  @Override
  public long offer(List<SpanData> batch) {
    Map<String, Long> before = sizes();
    WriteResult r = storage.write(batch).join();
    if (!r.isSuccessful()) {
      log.warn("export queue: cannot write {} span(s) to {} (dropped): {}", batch.size(), dir,
          r.getError() != null ? r.getError().toString() : "a batch larger than a file (" + fileSize + " bytes)");
      return batch.size() + vanished();
    }
    Map<String, Long> after = sizes();
    String written = null;
    for (Map.Entry<String, Long> e : after.entrySet()) {
      if (e.getValue() > before.getOrDefault(e.getKey(), -1L)) {
        written = e.getKey(); // the one file that grew (or appeared)
      }
    }
    if (written == null && !after.isEmpty()) {
      written = after.keySet().stream().max(DiskBacklog::byAge).orElseThrow(); // not expected: the newest
    }
    if (written != null) {
      counts.merge(written, (long) batch.size(), (a, b) -> a == UNKNOWN ? UNKNOWN : a + b);
    }
    return enforceBound() + vanished();
  }

  /** Each file's size in bytes, by name. */
  private Map<String, Long> sizes() {
    Map<String, Long> out = new java.util.HashMap<>();
    for (String n : names()) {
      out.put(n, new File(dir.toFile(), n).length());
    }
    return out;
  }

  /**
   * Deletes the oldest files while the folder is over the bound. (The library's own bound deletes
   * one file when it starts a new one and the folder would not fit another full file; files cut
   * short by their write age stay small, so it keeps their number, not their size, and the folder
   * grew to 1.4 MB with a 1 MiB bound; and deleting the file its reader has open wedges the
   * reader.) Neither the oldest file (the library's reader may hold it open: deleting it under the reader
   * would wedge it) nor the newest (being written) is deleted here; with files of at most a
   * quarter of the bound, that keeps the folder within it. Returns the spans deleted.
   */
  private long enforceBound() {
    List<String> names = names();
    names.sort(DiskBacklog::byAge);
    long total = 0;
    for (String n : names) {
      total += new File(dir.toFile(), n).length();
    }
    long dropped = 0;
    for (int i = 1; i < names.size() - 1 && total > maxBytes; i++) {
      File f = new File(dir.toFile(), names.get(i));
      long len = f.length();
      if (f.delete()) {
        total -= len;
        Long n = counts.remove(names.get(i));
        if (n != null && n == UNKNOWN) {
          log.warn("export queue: a file of an earlier run was dropped from {} (span count unknown)", dir);
        } else if (n != null) {
          dropped += n;
        }
      }
    }
    return dropped;
  }

  /** Files gone that were not read out: dropped by the library for room (or by age); their spans. */
  private long vanished() {
    long dropped = 0;
    var it = counts.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<String, Long> e = it.next();
      if (!new File(dir.toFile(), e.getKey()).exists()) {
        it.remove();
        if (e.getValue() == UNKNOWN) {
          log.warn("export queue: a file of an earlier run was dropped from {} (span count unknown)", dir);
        } else if (e.getValue() > 0) {
          dropped += e.getValue();
        }
      }
    }
    return dropped;
  }

  private static int byAge(String a, String b) {
    return Long.compare(Long.parseLong(a), Long.parseLong(b));
  }

  @Override
  public List<SpanData> peek() {
    if (current == null && reader.hasNext()) {
      Collection<SpanData> next = reader.next();
      current = next == null ? null : List.copyOf(next);
    }
    return current;
  }

  @Override
  public void remove() {
    if (current == null) {
      return;
    }
    int n = current.size();
    current = null;
    Map<String, Long> before = sizes();
    reader.remove(); // deletes the batch from its file now (the file once empty), not at the next read
    Map<String, Long> after = sizes();
    // The batch came from the file that shrank, or went when it was its last.
    for (Map.Entry<String, Long> e : before.entrySet()) {
      Long now = after.get(e.getKey());
      if (now == null || now < e.getValue()) {
        Long left = counts.get(e.getKey());
        if (now == null) {
          counts.remove(e.getKey());
        } else if (left != null && left != UNKNOWN) {
          counts.put(e.getKey(), Math.max(0, left - n));
        }
        break;
      }
    }
    droppedElsewhere += vanished();
  }

  @Override
  public long droppedElsewhere() {
    long d = droppedElsewhere + vanished();
    droppedElsewhere = 0;
    return d;
  }

  @Override
  public boolean isEmpty() {
    return current == null && names().isEmpty();
  }

  @Override
  public long spans() {
    return counts.values().stream().mapToLong(v -> Math.max(0, v)).sum();
  }

  @Override
  public long bytes() {
    long n = 0;
    for (String name : names()) {
      n += new File(dir.toFile(), name).length();
    }
    return n;
  }

  @Override
  public String where() {
    return dir.toString();
  }

  @Override
  public boolean durable() {
    return true;
  }

  @Override
  public void close() {
    try {
      storage.close();
    } catch (IOException e) {
      log.warn("export queue: closing {} failed: {}", dir, e.toString());
    }
  }
}
