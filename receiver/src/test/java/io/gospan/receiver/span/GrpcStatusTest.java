package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.Side;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

class GrpcStatusTest {
  @Test
  void everyGrpcJavaCodeParsesFromItsNumberAsGrpcGoWritesIt() {
    for (Status.Code c : Status.Code.values()) {
      assertThat(GrpcStatus.parse(Integer.toString(c.value()))).isSameAs(c);
    }
  }

  @Test
  void leadingZerosAndCodesOutOfRangeAsGrpcGoReadsThemNonNumbersAreNull() {
    assertThat(GrpcStatus.parse("005")).isSameAs(Status.Code.NOT_FOUND); // grpc-java's own reader: UNKNOWN
    assertThat(GrpcStatus.parse("17")).isSameAs(Status.Code.UNKNOWN);
    assertThat(GrpcStatus.parse("999999999")).isSameAs(Status.Code.UNKNOWN);
    assertThat(GrpcStatus.parse("1000000000")).isNull();
    assertThat(GrpcStatus.parse("-1")).isNull();
    assertThat(GrpcStatus.parse(" 0")).isNull();
    assertThat(GrpcStatus.parse("")).isNull();
    assertThat(GrpcStatus.parse(null)).isNull();
  }

  @Test
  void httpStatusMapping() {
    assertThat(GrpcStatus.fromHttpStatus("400")).isSameAs(Status.Code.INTERNAL);
    assertThat(GrpcStatus.fromHttpStatus("401")).isSameAs(Status.Code.UNAUTHENTICATED);
    assertThat(GrpcStatus.fromHttpStatus("403")).isSameAs(Status.Code.PERMISSION_DENIED);
    assertThat(GrpcStatus.fromHttpStatus("404")).isSameAs(Status.Code.UNIMPLEMENTED);
    for (String s : new String[] {"429", "502", "503", "504"}) {
      assertThat(GrpcStatus.fromHttpStatus(s)).isSameAs(Status.Code.UNAVAILABLE);
    }
    assertThat(GrpcStatus.fromHttpStatus("200")).isSameAs(Status.Code.UNKNOWN);
    assertThat(GrpcStatus.fromHttpStatus(null)).isSameAs(Status.Code.UNKNOWN);
  }

  @Test
  void errorsBySide() {
    for (Status.Code c : Status.Code.values()) {
      assertThat(GrpcStatus.isError(c, Side.CLIENT)).as("client %s", c).isEqualTo(c != Status.Code.OK);
    }
    assertThat(Status.Code.values()).filteredOn(c -> GrpcStatus.isError(c, Side.SERVER)).containsExactly(
        Status.Code.UNKNOWN, Status.Code.DEADLINE_EXCEEDED, Status.Code.UNIMPLEMENTED,
        Status.Code.INTERNAL, Status.Code.UNAVAILABLE, Status.Code.DATA_LOSS);
  }
}
