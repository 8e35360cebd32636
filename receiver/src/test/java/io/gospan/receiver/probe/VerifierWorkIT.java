package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The verifier's work on {@code grpc.bpf.o}, which the sidecar's start waits for before its first
 * attach: every program loaded by {@code bpftool -d prog loadall} (libbpf's debug output carries
 * each program's verifier log, its last line "processed N insns"), and the instructions processed
 * in all stay within {@link #BUDGET}. The load's time follows that count: on the 2 vCPUs of the
 * development VM 0.22 s at ~205,000 instructions (16 programs), and 1.0 s at ~1,060,000 when a
 * copy loop in {@code pack_event} (bpf/headers.bpf.h) made the verifier walk each entry's length
 * apart, and exec → first span went from ~1.5 to ~2.5 s with the CDS archive (docs/benchmarks.md,
 * "The verifier's work"). The count depends on the kernel's verifier, not on timing.
 */
class VerifierWorkIT {
  /** Instructions the verifier may process for all of the object's programs together. */
  static final long BUDGET = 400_000;

  private static final Pattern BEGIN = Pattern.compile("prog '([^']+)': -- BEGIN PROG LOAD LOG --");
  private static final Pattern PROCESSED = Pattern.compile("processed (\\d+) insns");

  @TempDir Path tmp;

  @Test
  void everyProgramLoadsWithinTheVerifierBudget() throws Exception {
    Path obj = tmp.resolve("grpc.bpf.o");
    try (InputStream in = VerifierWorkIT.class.getResourceAsStream("/io/gospan/bpf/grpc.bpf.o")) {
      assertThat(in).as("grpc.bpf.o on the class path (built by make -C bpf)").isNotNull();
      Files.copy(in, obj, StandardCopyOption.REPLACE_EXISTING);
    }
    // bpftool pins what it loads: a bpffs of the test's own, not the machine's /sys/fs/bpf
    Path bpffs = Files.createDirectory(tmp.resolve("bpffs"));
    ExampleApps.run(List.of("mount", "-t", "bpf", "bpf", bpffs.toString()), 30);
    Map<String, Long> processed = new LinkedHashMap<>();
    String log;
    try {
      // libbpf's debug lines, with the verifier logs, go to stderr
      log = ExampleApps.run(List.of("sh", "-c", "exec bpftool -d prog loadall \"$0\" \"$1\" 2>&1", obj.toString(),
          bpffs.resolve("pins").toString()), 120);
    } finally {
      ExampleApps.run(List.of("umount", bpffs.toString()), 30); // the pinned programs go with it
    }
    String program = null;
    for (String line : log.split("\n")) {
      Matcher b = BEGIN.matcher(line);
      if (b.find()) {
        program = b.group(1);
        continue;
      }
      Matcher m = PROCESSED.matcher(line);
      if (m.find() && program != null) {
        processed.put(program, Long.parseLong(m.group(1)));
        program = null;
      }
    }
    long total = processed.values().stream().mapToLong(Long::longValue).sum();
    System.out.println("verifier: " + total + " instructions processed for " + processed.size() + " programs: " + processed);
    assertThat(processed.keySet())
        .as("a verifier log per program (bpftool -d prints libbpf's); programs in the object")
        .containsAll(List.of("uprobe_http2_server_operate_headers", "uprobe_http2_client_new_stream",
            "uprobe_loopy_writer_write_header", "uprobe_http2_server_write_status", "raw_tp_sched_process_exec"));
    assertThat(total)
        .as("instructions the verifier processed for grpc.bpf.o's programs, by program: %s", processed)
        .isLessThanOrEqualTo(BUDGET);
  }
}
