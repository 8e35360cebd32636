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

  @Test
  void argumentLayoutsAreMergedIntoTheSectionOfTheirFunctionsArgumentsByVersion() throws Exception {
    String l59 = "t *T = rax@0:8 | frame *F = rbx@8:8";
    String l60 = "t *T = rax@0:8 | ctx context.Context = rbx@8:8 rcx@16:8 | frame *F = rdi@24:8";
    JsonNode a = JSON.readTree("{\"status\":\"ok\",\"go\":\"go1.22.12\",\"abi\":\"register\",\"grpc\":\"v1.59.0\",\"xnet\":\"v0.16.0\","
        + "\"fields\":{},\"layouts\":{\"layout:http2_server_operate_headers\":\"" + l59 + "\"}}");
    JsonNode b = JSON.readTree("{\"status\":\"ok\",\"go\":\"go1.22.12\",\"abi\":\"register\",\"grpc\":\"v1.60.0\",\"xnet\":\"v0.16.0\","
        + "\"fields\":{},\"layouts\":{\"layout:http2_server_operate_headers\":\"" + l60 + "\"}}");
    JsonNode catalog = CatalogGenerator.merge(List.of(a, b));
    JsonNode e = catalog.path("sections").path(OffsetsCatalog.ARGUMENTS_REGISTER).path("fields").path("layout:http2_server_operate_headers");
    assertThat(e).hasSize(2);
    assertThat(e.get(0).path("value").asText()).isEqualTo(l59);
    assertThat(e.get(1).path("since").asText()).isEqualTo("v1.60.0");
    assertThat(e.get(1).path("value").asText()).isEqualTo(l60);
    assertThat(catalog.path("sections").path(OffsetsCatalog.GRPC).path("fields").has("layout:http2_server_operate_headers")).isFalse();
  }
}
