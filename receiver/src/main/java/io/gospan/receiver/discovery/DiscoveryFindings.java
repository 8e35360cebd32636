package io.gospan.receiver.discovery;

import io.gospan.receiver.probe.ExeKey;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What discovery found, written by the discovery thread and read by any: the traced processes,
 * the binaries found unsuitable (read by the exec hold's thread too), and discovery's counts.
 */
final class DiscoveryFindings {
  /**
   * Inspections of traceable binaries kept after their probes are detached (each a few KB: the
   * resolved offsets and the probed functions' entries).
   */
  static final int INSPECTIONS_CACHED = 256;

  /** pid → binary, for traced processes. */
  final Map<Integer, TracedBinary> traced = new ConcurrentHashMap<>();
  /** Binaries found unsuitable, with the reason; LRU-bounded. */
  final Map<ExeKey, String> skipped;
  /** Binaries learned from the exec notice of a process that was gone. */
  final LongAdder learned = new LongAdder();
  /** Binaries of exec notices whose process was gone and whose file could not be reached. */
  final LongAdder unreachable = new LongAdder();
  /** Binaries read. */
  final LongAdder inspections = new LongAdder();
  /** Inspections of traceable binaries by file identity: used on the discovery thread only, its counters by any. */
  final BinaryCache<BinaryInspection> inspectionCache = new BinaryCache<>(INSPECTIONS_CACHED);

  /** @param maxSkipped how many unsuitable binaries are remembered (not re-inspected) */
  DiscoveryFindings(int maxSkipped) {
    this.skipped = Collections.synchronizedMap(
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<ExeKey, String> e) {
            return size() > maxSkipped;
          }
        });
  }
}
