package io.gospan.offsets.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How {@link CatalogGenerator#merge} treats a field one build lacks: a disagreement when that build
 * has the functions that need the field, nothing at all when it has none of them (x/net v0.60.0's
 * HTTP/2 server is not linked under go1.27: net/http's serves instead).
 */
class CatalogMergeTest {
  static final ObjectMapper JSON = new ObjectMapper();

  static JsonNode observation(String go, String fields, String functions) throws Exception {
    return JSON.readTree("{\"status\":\"ok\",\"go\":\"" + go + "\",\"abi\":\"register\",\"grpc\":\"v1.85.0\","
        + "\"xnet\":\"v0.60.0\",\"fields\":{" + fields + "},\"functions\":[" + functions + "]}");
  }

  static JsonNode entries(JsonNode catalog, String field) {
    for (JsonNode section : catalog.path("sections")) {
      JsonNode f = section.path("fields").get(field);
      if (f != null) {
        return f;
      }
    }
    throw new AssertionError("no section has " + field + ": " + catalog);
  }

  @Test
  void aBuildWithoutTheFunctionsThatNeedAFieldDoesNotDisagree() throws Exception {
    JsonNode with = observation("go1.26.8", "\"xnet_server_conn_conn\":16", "\"XNET_PROCESS_HEADERS\",\"XNET_WRITE_RES_HEADERS\"");
    JsonNode without = observation("go1.27.4", "\"xnet_server_conn_conn\":null", "\"LOOPY_WRITER_WRITE_HEADER\"");
    JsonNode e = entries(CatalogGenerator.merge(List.of(with, without)), "xnet_server_conn_conn");
    assertThat(e).hasSize(1);
    assertThat(e.get(0).path("value").asInt()).isEqualTo(16);
    assertThat(e.get(0).path("conflict").asBoolean()).isFalse();
  }

  @Test
  void aBuildWithTheFunctionsButWithoutTheFieldDisagrees() throws Exception {
    JsonNode with = observation("go1.26.8", "\"xnet_server_conn_conn\":16", "\"XNET_PROCESS_HEADERS\"");
    JsonNode lacking = observation("go1.27.4", "", "\"XNET_PROCESS_HEADERS\"");
    JsonNode e = entries(CatalogGenerator.merge(List.of(with, lacking)), "xnet_server_conn_conn");
    assertThat(e.get(0).path("conflict").asBoolean()).isTrue();
  }
}
