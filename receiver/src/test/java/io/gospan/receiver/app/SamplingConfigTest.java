package io.gospan.receiver.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.config.SamplerName;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code sampling.*} and {@code OTEL_TRACES_SAMPLER} / {@code _ARG}, read and turned into the SDK's samplers. */
class SamplingConfigTest {

  static GospanConfig parse(String yaml, Map<String, String> env) {
    return ConfigLoader.parse(yaml, "test.yaml", env);
  }

  static String description(String yaml, Map<String, String> env) {
    return PipelineBuilder.sampler(parse(yaml, env)).getDescription();
  }

  @Test
  void defaultIsAlwaysOn() {
    GospanConfig c = parse("", Map.of());
    assertThat(c.sampling().sampler()).isEqualTo(SamplerName.ALWAYS_ON);
    assertThat(c.sampling().ratio()).isEqualTo(1.0);
    assertThat(PipelineBuilder.sampler(c)).isSameAs(Sampler.alwaysOn());
  }

  @Test
  void everySpecifiedNameGivesTheSdksSampler() {
    assertThat(description("sampling: {sampler: always_off}", Map.of())).isEqualTo(Sampler.alwaysOff().getDescription());
    assertThat(description("sampling: {sampler: traceidratio, ratio: 0.25}", Map.of()))
        .isEqualTo(Sampler.traceIdRatioBased(0.25).getDescription());
    assertThat(description("sampling: {sampler: parentbased_always_on}", Map.of()))
        .isEqualTo(Sampler.parentBased(Sampler.alwaysOn()).getDescription());
    assertThat(description("sampling: {sampler: parentbased_always_off}", Map.of()))
        .isEqualTo(Sampler.parentBased(Sampler.alwaysOff()).getDescription());
    assertThat(description("sampling: {sampler: parentbased_traceidratio, ratio: 0.1}", Map.of()))
        .isEqualTo(Sampler.parentBased(Sampler.traceIdRatioBased(0.1)).getDescription());
    assertThat(description("sampling: {sampler: traceidratio}", Map.of()))
        .as("no ratio: 1, as the specification's default for OTEL_TRACES_SAMPLER_ARG")
        .isEqualTo(Sampler.traceIdRatioBased(1.0).getDescription());
  }

  @Test
  void theVariablesOverrideTheFile() {
    String yaml = "sampling: {sampler: always_off, ratio: 0.5}";
    assertThat(description(yaml, Map.of("OTEL_TRACES_SAMPLER", "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG", " 0.01 ")))
        .isEqualTo(Sampler.parentBased(Sampler.traceIdRatioBased(0.01)).getDescription());
    assertThat(description(yaml, Map.of("OTEL_TRACES_SAMPLER", "traceidratio")))
        .isEqualTo(Sampler.traceIdRatioBased(0.5).getDescription());
    assertThat(description(yaml, Map.of("OTEL_TRACES_SAMPLER_ARG", "")))
        .as("empty = unset").isEqualTo(Sampler.alwaysOff().getDescription());
  }

  @Test
  void aBadNameOrArgumentIsOneLineNamingTheVariable() {
    assertProblem("", Map.of("OTEL_TRACES_SAMPLER", "jaeger_remote"),
        "OTEL_TRACES_SAMPLER (sampling.sampler): must be one of always_on, always_off, traceidratio, "
            + "parentbased_always_on, parentbased_always_off, parentbased_traceidratio (was 'jaeger_remote')");
    assertProblem("", Map.of("OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "quarter"),
        "OTEL_TRACES_SAMPLER_ARG: 'quarter' is not a number");
    assertProblem("", Map.of("OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "1.5"),
        "OTEL_TRACES_SAMPLER_ARG (sampling.ratio): must be between 0 and 1, was 1.5");
    assertProblem("sampling: {ratio: -0.1}", Map.of(), "test.yaml: sampling.ratio: must be between 0 and 1, was -0.1");
    assertProblem("sampling: {sampler: TraceIdRatio}", Map.of(), "test.yaml: sampling.sampler: must be one of");
    assertProblem("sampling: {rate: 0.1}", Map.of(), "test.yaml: sampling.rate: unknown key");
  }

  static void assertProblem(String yaml, Map<String, String> env, String message) {
    assertThatThrownBy(() -> parse(yaml, env)).isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(e.getMessage()).contains(message).doesNotContain("\n"));
  }
}
