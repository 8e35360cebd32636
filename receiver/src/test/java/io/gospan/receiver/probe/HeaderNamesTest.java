package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which names the probes read on requests and on responses (grpc.bpf.c {@code name_lengths}). */
class HeaderNamesTest {

  static int bits(int... lengths) {
    int mask = 0;
    for (int n : lengths) {
      mask |= 1 << n;
    }
    return mask;
  }

  @Test
  void byDefaultARequestsFieldsAreReadOnlyAtTheLengthsOfPathAuthorityAndTraceContext() {
    HeaderNames names = HeaderNames.defaults();
    // :path 5; :authority, tracestate 10; traceparent 11. Not 7 (:method, :scheme: :status is
    // a response's) nor 12 (content-type: read on the ServeHTTP path only; grpc-message).
    assertThat(names.requestLengthMask()).isEqualTo(bits(5, 10, 11));
    // :status 7; grpc-status 11; grpc-message 12
    assertThat(names.responseLengthMask()).isEqualTo(bits(7, 11, 12));
    assertThat(names.names()).doesNotContain("user-agent", "grpc-timeout");
    assertThat(names.hasExtras()).isFalse();
  }

  @Test
  void allowedMetadataIsReadOnRequestsAndResponses() {
    HeaderNames names = HeaderNames.of(List.of("x-request-id", "user-agent"));
    assertThat(names.requestLengthMask()).isEqualTo(bits(5, 10, 11, 12));
    assertThat(names.responseLengthMask()).isEqualTo(bits(7, 10, 11, 12));
    assertThat(names.hasExtras()).isTrue();
  }

  @Test
  void requestOnlyMetadataIsReadOnRequestsAloneAndNeedsNoResponseProbe() {
    HeaderNames names = HeaderNames.of(List.of(), List.of("x-request-id"));
    assertThat(names.requestLengthMask()).isEqualTo(bits(5, 10, 11, 12));
    assertThat(names.responseLengthMask()).isEqualTo(bits(7, 11, 12));
    assertThat(names.hasExtras()).isTrue();
    assertThat(names.capturesResponses()).isFalse();
    HeaderNames both = HeaderNames.of(List.of("user-agent"), List.of("x-request-id", "user-agent"));
    assertThat(both.names()).containsSubsequence("user-agent", "x-request-id");
    assertThat(both.responseLengthMask()).isEqualTo(bits(7, 10, 11, 12)); // user-agent, in both lists: everywhere
    assertThat(both.capturesResponses()).isTrue();
    assertThat(HeaderNames.defaults().capturesResponses()).isFalse();
    assertThatThrownBy(() -> HeaderNames.of(List.of(), List.of("cookie"))).hasMessageContaining("credentials");
  }

  @Test
  void allowingContentTypeReadsItOnEveryRequest() {
    HeaderNames names = HeaderNames.of(List.of("content-type"));
    assertThat(names.requestLengthMask()).isEqualTo(bits(5, 10, 11, 12));
    assertThat(names.names().indexOf("content-type")).isEqualTo(HeaderNames.DEFAULTS.indexOf("content-type"));
  }

  @Test
  void credentialsAreRefusedByListAndByRule() {
    for (String name : List.of("authorization", "x-amz-security-token", "api-key", "x-my-session-id")) {
      assertThatThrownBy(() -> HeaderNames.of(List.of("x-request-id", name)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("'" + name + "'")
          .hasMessageContaining("credentials");
    }
  }

  @Test
  void noDefaultIsACredentialAndTheRetryCounterMayBeCaptured() {
    assertThat(HeaderNames.DEFAULTS).noneMatch(io.gospan.receiver.event.HeaderPolicy::isCredential);
    assertThat(HeaderNames.of(List.of("grpc-previous-rpc-attempts")).names()).contains("grpc-previous-rpc-attempts");
  }
}
