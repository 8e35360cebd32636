package io.gospan.offsets.buildinfo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class GrpcUserAgentTest {
  private static GrpcUserAgent.Found scan(String rodata) {
    return GrpcUserAgent.scan(ByteBuffer.wrap(rodata.getBytes(StandardCharsets.ISO_8859_1)));
  }

  @Test
  void readsTheVersionUpToTheNextLiteral() {
    // as in Debian's etcd: the literals of one length lie back to back, sorted
    GrpcUserAgent.Found f = scan("\u0000\u0001grpc-encodinggrpc-go/1.33.3grpc-trace-binhealth\u0000");
    assertThat(f.version()).isEqualTo("v1.33.3");
    assertThat(f.text()).isEqualTo("grpc-go/1.33.3");
    assertThat(f.reason()).isNull();
  }

  @Test
  void aDigitOfTheNextLiteralIsToldApartByAnotherCopy() {
    GrpcUserAgent.Found f = scan("grpc-go/1.60.10123456789abcdef...grpc-go/1.60.1 is ...");
    assertThat(f.version()).isEqualTo("v1.60.1");
    GrpcUserAgent.Found differ = scan("grpc-go/1.60.1 xx grpc-go/1.61.0 ");
    assertThat(differ.version()).isNull();
    assertThat(differ.reason()).contains("differing").contains("1.60.1").contains("1.61.0");
  }

  @Test
  void noUserAgentOrADevelopmentVersionInfersNothing() {
    assertThat(scan("grpc-gateway grpc-go/ grpc-go/1.x").version()).isNull();
    assertThat(scan("nothing here").reason()).contains("no grpc-go user agent");
    GrpcUserAgent.Found dev = scan("grpc-go/1.34.0-dev\u0000");
    assertThat(dev.version()).isNull();
    assertThat(dev.text()).isEqualTo("grpc-go/1.34.0-dev");
    assertThat(dev.reason()).contains("not a release");
  }
}
