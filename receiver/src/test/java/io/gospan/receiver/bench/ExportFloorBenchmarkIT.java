package io.gospan.receiver.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The export floor benchmark's child JVM makes the spans it is asked for and the SDK's batch
 * processor and OTLP/gRPC exporter deliver every one of them to the counting receiver (a partial
 * last batch after the 5 s schedule delay), so the benchmark's "spans lost" can only count real loss;
 * over OTLP/gRPC (grpc-java) and OTLP/HTTP (the JDK's HttpClient), the senders gospan's jar carries.
 * An integration test: it starts the child JVM.
 */
class ExportFloorBenchmarkIT {

  @ParameterizedTest
  @EnumSource(value = ExportFloorBenchmark.Sender.class, names = {"GRPC_JAVA", "HTTP_JDK"})
  void theChildExportsEverySpanItIsAskedFor(ExportFloorBenchmark.Sender sender) throws Exception {
    try (CountingOtlpReceiver receiver = new CountingOtlpReceiver()) {
      Process child = ExportFloorBenchmark.startChild(receiver, System.getProperty("java.class.path"), sender, "");
      try (Writer in = child.outputWriter(StandardCharsets.UTF_8);
           BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        // 2 full batches of 2,048 and a partial one
        long lost = ExportFloorBenchmark.send(receiver, in, out, 20_000, 5_000);
        assertThat(lost).isZero();
        assertThat(receiver.spans.sum()).isEqualTo(5_000);
        assertThat(receiver.requests.sum()).isGreaterThanOrEqualTo(3);
        in.write("exit\n");
        in.flush();
        assertThat(child.waitFor(15, TimeUnit.SECONDS)).isTrue();
        assertThat(child.exitValue()).isZero();
      } finally {
        child.destroyForcibly();
      }
    }
  }
}
