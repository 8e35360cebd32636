package io.gospan.receiver.bpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.receiver.probe.GrpcLayouts;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The libbpf binding against the real kernel: loads, maps, and every error path's message. */
class BpfObjectIT {

  static final String WRITE_HEADER_PROGRAM = "uprobe_loopy_writer_write_header";

  @Test
  void loadsTheGrpcObjectAndFindsItsProgramsAndMaps() {
    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o").load()) {
      assertThat(obj.programNames()).contains(WRITE_HEADER_PROGRAM);
      BpfMap slots = obj.map("slot_by_exe");
      assertThat(slots.keySize()).isEqualTo(GrpcLayouts.EXE_KEY.size());
      assertThat(slots.valueSize()).isEqualTo(4);
      assertThat(slots.fd()).isPositive();
      assertThat(obj.map("binaries").valueSize()).isEqualTo(GrpcLayouts.BINARY.size());
      assertThat(obj.map("events").type()).isEqualTo(BpfMap.BPF_MAP_TYPE_RINGBUF);
      assertThat(obj.map("probe_counters").isPerCpu()).isTrue();
    }
  }

  @Test
  void bindsEachFunctionThroughJnrFfisProxyUnlessTheCommandLineChoseItsGeneratedClass() {
    String chosen = System.getProperty(Libbpf.ASM_PROPERTY);
    Libbpf libbpf = Libbpf.get();
    boolean generated = chosen != null && Boolean.parseBoolean(chosen);
    assertThat(Proxy.isProxyClass(libbpf.lib.getClass())).isEqualTo(!generated);
    assertThat(Proxy.isProxyClass(libbpf.libc.getClass())).isEqualTo(!generated);
    assertThat(System.getProperty(Libbpf.ASM_PROPERTY)).isEqualTo(generated ? chosen : "false");
    // errno saved by @SaveError through the proxy: closing a descriptor never opened
    assertThat(libbpf.libc.close(-1)).isEqualTo(-1);
    assertThat(Libbpf.describeErrno(libbpf.lastErrno())).startsWith("EBADF");
  }

  @Test
  void mapElementsRoundTrip() {
    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o").load()) {
      BpfMap slots = obj.map("slot_by_exe");
      byte[] key = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(7).putLong(42).array();
      byte[] value = new byte[4];
      value[0] = 1;
      value[1] = 3;
      assertThat(slots.lookup(key)).isEmpty();
      slots.update(key, value, BpfMap.BPF_NOEXIST);
      assertThat(slots.lookup(key)).hasValueSatisfying(v -> assertThat(v).isEqualTo(value));
      assertThat(slots.keys()).hasSize(1);
      assertThatThrownBy(() -> slots.update(key, value, BpfMap.BPF_NOEXIST))
          .isInstanceOf(BpfException.class)
          .hasMessageContaining("EEXIST");
      assertThat(slots.delete(key)).isTrue();
      assertThat(slots.delete(key)).isFalse();
      assertThatThrownBy(() -> slots.update(new byte[3], value, BpfMap.BPF_ANY))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("keys are 16 bytes");

      BpfMap counters = obj.map("probe_counters");
      byte[] zero = new byte[4];
      assertThat(counters.lookup(zero))
          .hasValueSatisfying(v -> assertThat(v).hasSize(8 * Libbpf.get().possibleCpus()));
    }
  }

  @Test
  void globalsAreSetBeforeLoadAndFrozenAfter() {
    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o")) {
      obj.setGlobal("request_name_lengths", new byte[] {0x20, 0, 0, 0});
      assertThatThrownBy(() -> obj.setGlobal("request_name_lengths", new byte[2]))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is 4 bytes");
      assertThatThrownBy(() -> obj.setGlobal("no_such_global", new byte[4]))
          .isInstanceOf(BpfException.class)
          .hasMessageContaining("no global variable 'no_such_global'");
      obj.load();
      assertThatThrownBy(() -> obj.setGlobal("request_name_lengths", new byte[4]))
          .isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void unknownProgramNameIsNamed() {
    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o")) {
      assertThatThrownBy(() -> obj.program("uprobe_does_not_exist"))
          .isInstanceOf(BpfException.class)
          .hasMessageContaining("has no program 'uprobe_does_not_exist'")
          .hasMessageContaining(WRITE_HEADER_PROGRAM);
    }
  }

  @Test
  void attachingToANonExistentBinaryIsClear() {
    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o").load()) {
      Path missing = Path.of("/nonexistent/gospan/greeter-server");
      assertThatThrownBy(
              () -> obj.program(WRITE_HEADER_PROGRAM).attachUprobe(missing, "main.main", BpfProgram.ALL_PIDS, 0))
          .isInstanceOf(BpfException.class)
          .hasMessageContaining("/nonexistent/gospan/greeter-server does not exist");
    }
  }

  @Test
  void attachingToAMissingFunctionNamesItAndSaysWhy() {
    try (BpfObject obj = BpfObject.openResource("grpc.bpf.o").load()) {
      Path libc = Path.of("/lib/x86_64-linux-gnu/libc.so.6");
      assertThatThrownBy(
              () ->
                  obj.program(WRITE_HEADER_PROGRAM)
                      .attachUprobe(libc, "gospan_no_such_function", BpfProgram.ALL_PIDS, 0))
          .isInstanceOf(BpfException.class)
          .hasMessageContaining("function 'gospan_no_such_function'")
          .hasMessageContaining("ENOENT")
          .hasMessageContaining("no ELF symbol of that name")
          .hasMessageContaining("libbpf says");
    }
  }

  @Test
  void aProgramTheVerifierRejectsCarriesTheVerifierLog() throws IOException {
    byte[] elf;
    try (InputStream in = getClass().getResourceAsStream("/io/gospan/bpf/test/verifier_reject.bpf.o")) {
      assertThat(in).as("test object built from bpf/test/verifier_reject.bpf.c").isNotNull();
      elf = in.readAllBytes();
    }
    try (BpfObject obj = BpfObject.open("verifier_reject.bpf.o", elf)) {
      assertThatThrownBy(obj::load)
          .isInstanceOf(BpfException.class)
          .hasMessageContaining("loading BPF object verifier_reject.bpf.o")
          .hasMessageContaining("the verifier rejected a program")
          .hasMessageContaining("uprobe_rejected")
          // the verifier's own words about the faulting instruction
          .hasMessageContaining("invalid mem access")
          // EACCES from the verifier is not a privilege problem
          .hasMessageNotContaining("gospan needs root");
    }
  }

  @Test
  void garbageIsNotABpfObject() {
    assertThatThrownBy(() -> BpfObject.open("garbage.o", "not an ELF".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(BpfException.class)
        .hasMessageContaining("opening BPF object garbage.o failed");
  }

  /**
   * Runs {@link LoadProbeMain} in a child JVM whose capability bounding set is empty (root uid
   * without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN): the load must fail with the privilege hint.
   */
  @Test
  void missingPrivilegesAreExplained() throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add("setpriv");
    cmd.add("--bounding-set=-all");
    cmd.add("--inh-caps=-all");
    cmd.add("--no-new-privs");
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(LoadProbeMain.class.getName());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isEqualTo(3);
    assertThat(out)
        .contains("loading BPF object grpc.bpf.o failed: EPERM")
        .contains("gospan needs root, or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE");
  }
}
