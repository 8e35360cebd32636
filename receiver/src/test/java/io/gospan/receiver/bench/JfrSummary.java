package io.gospan.receiver.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Summarizes a JFR recording of the sidecar (not a test): CPU samples by thread, the hottest
 * methods (self and inclusive), and allocation by class and by the allocating gospan/OpenTelemetry
 * frame, each per span when the span count is given. Used by {@code scripts/profile-sidecar.sh}.
 *
 * <p>Run: {@code java -cp <test classpath> io.gospan.receiver.bench.JfrSummary FILE.jfr [spans] [top]}.
 */
public final class JfrSummary {
  private JfrSummary() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    long spans = args.length > 1 ? Long.parseLong(args[1]) : 0;
    int top = args.length > 2 ? Integer.parseInt(args[2]) : 25;
    Map<String, Long> samplesByThread = new HashMap<>();
    Map<String, Long> self = new HashMap<>();
    Map<String, Long> inclusive = new HashMap<>();
    Map<String, Long> nativeByThread = new HashMap<>();
    Map<String, Long> allocByClass = new HashMap<>();
    Map<String, Long> allocBySite = new HashMap<>();
    Map<String, Long> allocByThread = new HashMap<>();
    Map<Long, Long> threadAllocFirst = new HashMap<>();
    Map<Long, Long> threadAllocLast = new HashMap<>();
    Map<Long, String> threadNames = new HashMap<>();
    long samples = 0;
    long allocTotal = 0;
    long gcPauseNs = 0;
    int gcs = 0;
    try (RecordingFile f = new RecordingFile(file)) {
      while (f.hasMoreEvents()) {
        RecordedEvent e = f.readEvent();
        String type = e.getEventType().getName();
        switch (type) {
          case "jdk.ExecutionSample" -> {
            samples++;
            String thread = threadName(e.getThread("sampledThread"));
            samplesByThread.merge(thread, 1L, Long::sum);
            RecordedStackTrace st = e.getStackTrace();
            if (st != null && !st.getFrames().isEmpty()) {
              self.merge(method(st.getFrames().get(0)), 1L, Long::sum);
              Set<String> seen = new HashSet<>();
              for (RecordedFrame fr : st.getFrames()) {
                String m = method(fr);
                if (seen.add(m)) {
                  inclusive.merge(m, 1L, Long::sum);
                }
              }
            }
          }
          case "jdk.NativeMethodSample" -> nativeByThread.merge(threadName(e.getThread("sampledThread")), 1L, Long::sum);
          case "jdk.ObjectAllocationSample" -> {
            long w = e.getLong("weight");
            allocTotal += w;
            allocByClass.merge(e.getClass("objectClass").getName(), w, Long::sum);
            allocByThread.merge(threadName(e.getThread("eventThread")), w, Long::sum);
            RecordedStackTrace st = e.getStackTrace();
            allocBySite.merge(site(st), w, Long::sum);
          }
          case "jdk.ThreadAllocationStatistics" -> {
            long tid = e.getLong("thread.javaThreadId");
            long a = e.getLong("allocated");
            threadAllocFirst.putIfAbsent(tid, a);
            threadAllocLast.put(tid, a);
            threadNames.put(tid, threadName(e.getThread("thread")));
          }
          case "jdk.GarbageCollection" -> {
            gcs++;
            gcPauseNs += e.getDuration("sumOfPauses").toNanos();
          }
          default -> { }
        }
      }
    }
    double per = spans > 0 ? spans : 1;
    String unit = spans > 0 ? "per span" : "total";
    System.out.printf("CPU samples (Java code running, JFR ~20 ms/thread): %d%s%n", samples,
        spans > 0 ? String.format(" (%.4f per span)", samples / per) : "");
    print("samples by thread", samplesByThread, samples, top, 1);
    print("hottest methods, self", self, samples, top, 1);
    print("hottest methods, inclusive (gospan, OpenTelemetry, grpc, netty, jnr frames)", filter(inclusive), samples, top * 2, 1);
    print("native-method samples by thread (threads waiting or in native code)", nativeByThread, 0, top, 1);
    System.out.printf("%nallocation (sampled, weight): %.0f bytes %s%n", allocTotal / per, unit);
    print("allocation by class, bytes " + unit, allocByClass, allocTotal, top, per);
    print("allocation by first gospan/OpenTelemetry/grpc frame, bytes " + unit, allocBySite, allocTotal, top, per);
    print("allocation by thread, bytes " + unit, allocByThread, allocTotal, top, per);
    Map<String, Long> exact = new HashMap<>();
    threadAllocLast.forEach((tid, last) -> exact.merge(threadNames.get(tid), last - threadAllocFirst.get(tid), Long::sum));
    long exactTotal = exact.values().stream().mapToLong(Long::longValue).sum();
    System.out.printf("%nallocated by thread (jdk.ThreadAllocationStatistics, exact, first to last reading): %.0f bytes %s%n", exactTotal / per, unit);
    print("", exact, exactTotal, top, per);
    System.out.printf("%nGC: %d collections, %.1f ms of pauses%n", gcs, gcPauseNs / 1e6);
  }

  private static String threadName(RecordedThread t) {
    if (t == null) {
      return "?";
    }
    String n = t.getJavaName() != null ? t.getJavaName() : t.getOSName();
    return n == null ? "?" : n.replaceAll("[0-9]+", "#");
  }

  private static String method(RecordedFrame f) {
    return f.getMethod().getType().getName() + "." + f.getMethod().getName();
  }

  private static boolean interesting(String m) {
    return m.startsWith("io.gospan") || m.startsWith("io.opentelemetry") || m.startsWith("io.grpc")
        || m.startsWith("jnr.") || m.contains("netty");
  }

  private static Map<String, Long> filter(Map<String, Long> m) {
    Map<String, Long> out = new HashMap<>();
    m.forEach((k, v) -> {
      if (interesting(k)) {
        out.put(k, v);
      }
    });
    return out;
  }

  /** The allocating frame, and the first gospan/OpenTelemetry/grpc frame below it. */
  private static String site(RecordedStackTrace st) {
    if (st == null || st.getFrames().isEmpty()) {
      return "?";
    }
    List<RecordedFrame> frames = st.getFrames();
    String first = method(frames.get(0)) + ":" + frames.get(0).getLineNumber();
    for (RecordedFrame fr : frames) {
      String m = method(fr);
      if (interesting(m)) {
        String here = m + ":" + fr.getLineNumber();
        return here.equals(first) ? here : first + " <- " + here;
      }
    }
    return first;
  }

  private static void print(String title, Map<String, Long> m, long total, int top, double per) {
    if (!title.isEmpty()) {
      System.out.printf("%n%s:%n", title);
    }
    List<Map.Entry<String, Long>> l = new ArrayList<>(m.entrySet());
    l.sort(Map.Entry.<String, Long>comparingByValue().reversed());
    for (Map.Entry<String, Long> e : l.subList(0, Math.min(top, l.size()))) {
      if (total > 0) {
        System.out.printf("  %6.1f %%  %10.1f  %s%n", 100.0 * e.getValue() / total, e.getValue() / per, e.getKey());
      } else {
        System.out.printf("  %10.1f  %s%n", e.getValue() / per, e.getKey());
      }
    }
  }
}
