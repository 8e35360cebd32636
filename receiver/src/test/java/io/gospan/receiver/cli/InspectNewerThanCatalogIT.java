package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.catalog.OffsetsCatalog;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code gospan inspect} on a stripped grpc-go release the offsets catalog does not know (the example
 * greeter built stripped at the newest catalogued release, inspected with that release removed from the
 * catalog by the test hook {@link OffsetsCatalog#BEFORE_PROPERTY}): each grpc-go offset says where it came
 * from, the binary's runtime type information ({@code typeinfo}) or its code ({@code code}, naming the
 * catalogued layout its argument spills equal), and the verdict promises the spans {@code NewerThanCatalogIT}
 * shows {@code run} delivers.
 */
class InspectNewerThanCatalogIT {

  @Test
  void everyGrpcOffsetOfAnUncataloguedStrippedReleaseSaysItCameFromTheBinary() {
    Path dir = ExampleApps.build("--stripped");
    List<String> observed = OffsetsCatalog.embedded().observed(OffsetsCatalog.GRPC);
    String newest = observed.get(observed.size() - 1);
    String before = observed.get(observed.size() - 2);
    System.setProperty(OffsetsCatalog.BEFORE_PROPERTY, newest);
    try {
      InspectCommandIT.Result r = InspectCommandIT.inspect(dir.resolve("greeter-server").toString());
      String out = r.out();
      assertThat(r.exit()).as(out).isEqualTo(ExitCodes.OK);
      assertThat(out).contains("grpc-go:  " + newest + "\n")
          .containsPattern("(?m)^  http2_server_conn +\\d+ \\(typeinfo\\)$")
          .containsPattern("(?m)^  stream_method +\\d+ \\(typeinfo\\)$")
          .containsPattern("(?m)^  server_operate_headers_frame +R[A-Z0-9]+ \\(code, \\(\\*http2Server\\)\\.operateHeaders's argument"
              + " spills equal the layout of " + before.replace(".", "\\.") + " \\(the newest catalogued\\)\\)$")
          .containsPattern("(?m)^  write_status_st +R[A-Z0-9]+ \\(code, .* its func type agrees\\)$")
          .contains("verdict:  client spans, server spans, client->server linking by socket");
      assertThat(InspectCommandIT.willAttach(out)).as(out).contains("http2_server_operate_headers", "http2_server_write_status",
          "http2_client_new_stream", "http2_client_close_stream");
      System.out.println(out);
    } finally {
      System.clearProperty(OffsetsCatalog.BEFORE_PROPERTY);
    }
  }
}
