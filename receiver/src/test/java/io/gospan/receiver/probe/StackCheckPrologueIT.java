package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.code.CapstoneDecoder;
import io.gospan.offsets.code.FunctionCode;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every probed function of the example binaries, register ABI (Go 1.17, 1.22, 1.26) and stack
 * ABI (Go 1.16), has a recognized stack-check prologue, so no probe sits where a stack growth
 * would fire it twice.
 */
class StackCheckPrologueIT {

  /** The length of the jbe that ends at file offset {@code at}: 2 (rel8) or 6 (rel32). */
  private static int jbeLength(Path binary, GoFunction f, long at) throws Exception {
    byte[] b = java.nio.file.Files.readAllBytes(binary);
    return b[(int) at - 2] == 0x76 ? 2 : 6;
  }

  @Test
  void everyProbedFunctionHasARecognizedPrologue() throws Exception {
    List<Path> dirs = List.of(
        ExampleApps.build(),
        ExampleApps.build("--go", "1.22.12", "--grpc", "v1.60.1"),
        ExampleApps.build("--go", "1.17.13", "--grpc", "v1.40.0"),
        ExampleApps.build("--go", "1.16.15", "--grpc", "v1.40.0"));
    for (Path dir : dirs) {
      for (String program : List.of("greeter-server", "greeter-client")) {
        Path binary = dir.resolve(program);
        // every alternative name (WriteStatus before grpc-go v1.69, writeStatus since): the binary has one
        List<String> names = List.of(Probe.values()).stream().flatMap(p -> p.functions().stream()).toList();
        Map<String, GoFunction> functions;
        try (GoBinary b = GoBinary.open(binary)) {
          functions = b.functions(names);
        }
        for (Probe p : Probe.grpcTransport()) {
          assertThat(p.functions()).as("%s: %s", binary, p).anyMatch(functions::containsKey);
        }
        if (program.equals("greeter-server")) {
          assertThat(functions).as("%s: the ServeHTTP path's functions too", binary).hasSize(Probe.values().length);
        }
        Map<String, FunctionCode> code;
        try (GoBinary b = GoBinary.open(binary)) {
          code = FunctionCode.of(b, functions.values(), CapstoneDecoder.get());
        }
        for (GoFunction f : functions.values()) {
          long at = GrpcProbes.probeFileOffset(binary, f.fileOffset());
          assertThat(at - f.fileOffset()).as("prologue of %s in %s", f.name(), binary).isBetween(6L, 32L);
          // The first 32 bytes give what decoding the whole function gives (jbe target inside it).
          assertThat(at - f.fileOffset()).as("%s in %s, whole function", f.name(), binary)
              .isEqualTo(code.get(f.name()).prologueLength());
          // Go >= 1.21 pushes RBP after the prologue (the kernel emulates a push); Go <= 1.20 subtracts
          // from RSP (single-stepped), so the probe goes on the prologue's jbe
          FunctionCode.EntryPlace place = GrpcProbes.entryPlace(binary, f.fileOffset());
          boolean old = dir.getFileName().toString().matches("go1\\.(16|17)\\..*");
          assertThat(place.atStackCheck()).as("%s in %s on its jbe", f.name(), binary).isEqualTo(old);
          assertThat(place.offset()).isEqualTo(old ? (int) (at - f.fileOffset()) - jbeLength(binary, f, at) : at - f.fileOffset());
        }
      }
    }
  }
}
