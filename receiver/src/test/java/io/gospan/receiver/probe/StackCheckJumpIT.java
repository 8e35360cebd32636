package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.code.FunctionCode;
import io.gospan.receiver.bpf.BpfMap;
import io.gospan.receiver.bpf.BpfObject;
import io.gospan.receiver.bpf.BpfProgram;
import io.gospan.receiver.testing.ExampleApps;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An entry probe on a Go 1.17–1.20 function sits on its stack-check {@code jbe} (the instruction after
 * it, {@code sub rsp}, would be single-stepped: {@link FunctionCode#entryPlace}), and the flags the kernel
 * saved there tell the hit whose jump grows the stack from the call's own hit ({@code go_stack_check_jumps},
 * bpf/go_abi.h): a real Go 1.19 program ({@code receiver/src/test/go/stackgrowth}) calls the probed function
 * at every recursion depth in new goroutines, so that some calls grow the stack in its prologue, under a
 * real uprobe ({@code bpf/test/stack_check.bpf.c}).
 */
class StackCheckJumpIT {
  static final String GO = "1.19.8";

  @Test
  void theHitWhoseJumpGrowsTheStackIsToldFromTheCall() throws Exception {
    Path src = ExampleApps.repoRoot().resolve("receiver/src/test/go/stackgrowth");
    Path exe = ExampleApps.repoRoot().resolve("receiver/target/stackgrowth-go" + GO);
    // the file, not the package: go1.19 has no -C, and a file needs no module
    ExampleApps.run(List.of("go", "build", "-o", exe.toString(), src.resolve("main.go").toString()),
        Map.of("GOTOOLCHAIN", "go" + GO, "GOWORK", "off", "GOFLAGS", "-buildvcs=false"), 600);
    GoFunction probed;
    try (GoBinary b = GoBinary.open(exe)) {
      probed = b.function("main.Probed").orElseThrow();
    }
    FunctionCode.EntryPlace place = GrpcProbes.entryPlace(exe, probed.fileOffset());
    // go1.19: cmp rsp, [r14 + 0x10] (4 bytes); jbe (2); sub rsp, 0x10
    assertThat(place.atStackCheck()).as("Go %s: the instruction after the prologue is sub rsp", GO).isTrue();
    assertThat(place.offset()).isEqualTo(4);

    byte[] elf;
    try (InputStream in = StackCheckJumpIT.class.getResourceAsStream("/io/gospan/bpf/test/stack_check.bpf.o")) {
      assertThat(in).as("test object built from bpf/test/stack_check.bpf.c").isNotNull();
      elf = in.readAllBytes();
    }
    int depth = 6000;
    try (BpfObject obj = BpfObject.open("stack_check.bpf.o", elf).load()) {
      obj.program("uprobe_stack_check").attachUprobe(exe, probed.fileOffset() + place.offset(), BpfProgram.ALL_PIDS, 0);
      long calls = run(exe, depth);
      BpfMap counts = obj.map("counts");
      long fellThrough = count(counts, 0);
      long jumped = count(counts, 1);
      System.out.printf("stackgrowth (Go %s): %d calls of main.Probed; at its jbe %d hits fell through, %d jumped "
          + "(the stack grew)%n", GO, calls, fellThrough, jumped);
      assertThat(calls).isEqualTo(depth + 1);
      assertThat(fellThrough).as("one hit per call, once the stack is large enough").isEqualTo(calls);
      // each goroutine grows its stack through 8, 16, 32 KiB as deep as it goes: Probed is the function that
      // grows it for one depth per size
      assertThat(jumped).as("hits whose jump grew the stack").isGreaterThanOrEqualTo(3);
    }
  }

  private static long run(Path exe, int depth) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(exe.toString(), "-depth", Integer.toString(depth)).redirectErrorStream(true).start();
    try (OutputStream in = p.getOutputStream()) {
      in.write("go\n".getBytes(StandardCharsets.UTF_8)); // the probe is attached: start
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("stackgrowth finished").isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return Long.parseLong(out);
  }

  private static long count(BpfMap map, int key) {
    byte[] k = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(key).array();
    byte[] v = map.lookup(k).orElseThrow();
    return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }
}
