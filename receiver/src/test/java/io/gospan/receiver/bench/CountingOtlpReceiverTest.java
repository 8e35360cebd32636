package io.gospan.receiver.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.testing.trace.TestSpanData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The load benchmark's receiver counts the spans of OTLP requests without parsing them into objects. */
class CountingOtlpReceiverTest {

  private static Span span(int i) {
    return Span.newBuilder().setName("s" + i).setTraceId(com.google.protobuf.ByteString.copyFrom(new byte[16]))
        .addAttributes(KeyValue.newBuilder().setKey("k").setValue(AnyValue.newBuilder().setIntValue(i))).build();
  }

  @Test
  void countsTheSpansOfEveryScopeOfEveryResource() throws IOException {
    ExportTraceServiceRequest.Builder request = ExportTraceServiceRequest.newBuilder();
    int expected = 0;
    for (int r = 0; r < 3; r++) {
      ResourceSpans.Builder rs = ResourceSpans.newBuilder().setSchemaUrl("https://x/" + r)
          .setResource(Resource.newBuilder().addAttributes(KeyValue.newBuilder().setKey("service.name")
              .setValue(AnyValue.newBuilder().setStringValue("svc" + r))));
      for (int s = 0; s <= r; s++) {
        ScopeSpans.Builder ss = ScopeSpans.newBuilder().setSchemaUrl("https://scope/" + s);
        for (int i = 0; i < 5 * r + s; i++) {
          ss.addSpans(span(i));
          expected++;
        }
        rs.addScopeSpans(ss);
      }
      request.addResourceSpans(rs);
    }
    assertThat(expected).isEqualTo(0 + 5 + 6 + 10 + 11 + 12);
    assertThat(CountingOtlpReceiver.countSpans(request.build().toByteArray())).isEqualTo(expected);
    assertThat(CountingOtlpReceiver.countSpans(new byte[0])).isZero();
  }

  @Test
  void refusesWhatIsNotAMessage() {
    // field 1, length-delimited, length 5, but only 1 byte follows
    assertThatThrownBy(() -> CountingOtlpReceiver.countSpans(new byte[] {0x0a, 0x05, 0x12})).isInstanceOf(IOException.class);
  }

  @Test
  void countsWhatTheSdksOtlpExportersSend() throws Exception {
    List<SpanData> spans = new ArrayList<>();
    for (int i = 0; i < 700; i++) {
      spans.add(TestSpanData.builder().setName("greeter.Greeter/SayHello").setKind(SpanKind.SERVER)
          .setStartEpochNanos(1_000L + i).setEndEpochNanos(2_000L + i).setHasEnded(true).setStatus(StatusData.unset())
          .setAttributes(Attributes.of(AttributeKey.longKey("i"), (long) i)).build());
    }
    try (CountingOtlpReceiver receiver = new CountingOtlpReceiver()) {
      SpanExporter grpc = OtlpGrpcSpanExporter.builder().setEndpoint(receiver.endpoint()).build();
      SpanExporter http = OtlpHttpSpanExporter.builder().setEndpoint(receiver.httpEndpoint() + "/v1/traces").build();
      for (SpanExporter e : List.of(grpc, http)) {
        CompletableResultCode done = e.export(spans).join(10, TimeUnit.SECONDS);
        assertThat(done.isSuccess()).as("export to the receiver").isTrue();
        e.shutdown().join(10, TimeUnit.SECONDS);
      }
      assertThat(receiver.spans.sum()).isEqualTo(1400);
      assertThat(receiver.requests.sum()).isEqualTo(2);
    }
  }
}
