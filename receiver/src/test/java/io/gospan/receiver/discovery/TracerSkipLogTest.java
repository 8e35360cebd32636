package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run} says why a binary a selector names is not traced: once, at INFO (slf4j-simple writes
 * INFO and above to stderr), however often discovery meets it; with the default selector (every
 * process) it says nothing at INFO.
 */
class TracerSkipLogTest {

  @TempDir Path proc;

  void process(int pid, String exe) throws Exception {
    Path dir = proc.resolve(Integer.toString(pid));
    Files.createDirectories(dir);
    Files.createSymbolicLink(dir.resolve("exe"), Path.of(exe));
    Files.writeString(dir.resolve("comm"), Path.of(exe).getFileName() + "\n");
    Files.writeString(dir.resolve("stat"), pid + " (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + (5000 + pid) + " 0 0\n");
  }

  String stderrOf(ProcessSelector selector) throws Exception {
    process(100, "/bin/true");
    process(101, "/bin/true"); // a second process of the same binary
    ProcFs procFs = new ProcFs(proc);
    PrintStream was = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try (Tracer tracer = new Tracer(TracerTest.options(procFs, selector), new ProbeAttacher(null, procFs), new Tracer.Listener() {})) {
      tracer.scan();
      tracer.scan();
    } finally {
      System.setErr(was);
    }
    return buf.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aSelectedBinaryThatIsNotTracedIsExplainedOnceAtInfo() throws Exception {
    String err = stderrOf(new ProcessSelector(List.of(new ProcessSelector.Rule("/bin/true", null, null, null)), List.of()));
    assertThat(err.lines().filter(l -> l.contains("not tracing /bin/true")).toList())
        .singleElement().satisfies(l -> assertThat(l).contains("INFO").contains("selected by discovery.instrument: not a Go binary"));
  }

  @Test
  void withTheDefaultSelectorNothingIsSaidAtInfo() throws Exception {
    assertThat(stderrOf(ProcessSelector.all())).doesNotContain("not tracing");
  }

  @Test
  void refusedProbesSharingAReasonAreGroupedUnderItOnce() {
    java.util.Map<io.gospan.offsets.resolve.Probe, String> refused = new java.util.LinkedHashMap<>();
    io.gospan.offsets.resolve.Probe[] p = io.gospan.offsets.resolve.Probe.values();
    refused.put(p[0], "a_field unresolved: no DWARF (stripped binary)");
    refused.put(p[1], "b_field unresolved: no DWARF (stripped binary)");
    refused.put(p[2], "function x is not in the binary");
    assertThat(DiscoveryStages.refusals(refused))
        .isEqualTo("[" + p[0] + ", " + p[1] + "]: no DWARF (stripped binary); [" + p[2] + "]: function x is not in the binary");
  }
}
