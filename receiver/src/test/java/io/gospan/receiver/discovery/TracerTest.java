package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Discovery on a fake procfs: non-Go processes are inspected once, a reused pid is a new process,
 * and an exec notice makes discovery look again at a process it judged before its exec.
 */
class TracerTest {

  @TempDir Path proc;

  void process(int pid, long startTime, String exe) throws Exception {
    Path dir = proc.resolve(Integer.toString(pid));
    if (Files.exists(dir)) {
      Files.delete(dir.resolve("exe"));
    }
    Files.createDirectories(dir);
    Files.createSymbolicLink(dir.resolve("exe"), Path.of(exe));
    Files.writeString(dir.resolve("comm"), Path.of(exe).getFileName() + "\n");
    // fields 3.. after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime ...
    Files.writeString(dir.resolve("stat"),
        pid + " (x y) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + startTime + " 0 0\n");
  }

  @Test
  void aNonGoProcessIsInspectedOnceAndAReusedPidIsConsideredAgain() throws Exception {
    process(100, 5000, "/bin/true");
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = new Tracer(procFs, ProcessSelector.all(), new ProbeAttacher(null, procFs), new Tracer.Listener() {}, 16,
        io.gospan.offsets.resolve.Preference.DWARF)) {
    tracer.scan();
    tracer.scan();
    assertThat(tracer.inspections()).isEqualTo(1);
    assertThat(tracer.traced()).isEmpty();

    // pid 100 exits and is reused by another program between two scans
    process(100, 7000, "/bin/ls");
    tracer.scan();
    assertThat(tracer.inspections()).as("the new process behind pid 100 is inspected").isEqualTo(2);
    tracer.scan();
    assertThat(tracer.inspections()).isEqualTo(2);
    }
  }

  @Test
  void aProcessSeenBeforeItsExecIsLookedAtAgainOnItsExecNotice() throws Exception {
    process(300, 9000, "/bin/sh");
    ProcFs procFs = new ProcFs(proc);
    try (Tracer tracer = new Tracer(procFs, ProcessSelector.all(), new ProbeAttacher(null, procFs), new Tracer.Listener() {}, 16,
        io.gospan.offsets.resolve.Preference.DWARF)) {
      tracer.execNoticesOn();
      tracer.scan();
      assertThat(tracer.inspections()).isEqualTo(1);
      // the shell execs another program: same pid, same start time; a scan alone does not look again
      process(300, 9000, "/bin/ls");
      tracer.scan();
      assertThat(tracer.inspections()).isEqualTo(1);
      tracer.execed(300); // queued for the discovery thread, before the next scan
      tracer.scan();
      assertThat(tracer.inspections()).as("the exec'd image inspected").isEqualTo(2);
      // a pid reused meanwhile while its exec notice was lost: the next scan re-checks start times
      process(300, 9500, "/bin/cat");
      tracer.scan();
      assertThat(tracer.inspections()).as("no re-check while exec notices arrive").isEqualTo(2);
      tracer.execNoticeLost();
      tracer.scan();
      assertThat(tracer.inspections()).as("a lost notice: start times re-checked").isEqualTo(3);
    }
  }

  @Test
  void startTimeSkipsACommandNameWithSpacesAndParentheses() throws Exception {
    process(200, 123456, "/bin/true");
    assertThat(new ProcFs(proc).startTime(200)).isEqualTo(123456);
    assertThat(new ProcFs(proc).startTime(201)).isEqualTo(-1);
  }
}
