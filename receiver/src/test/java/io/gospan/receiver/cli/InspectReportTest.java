package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import io.gospan.receiver.testing.ExampleApps;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gospan inspect --output json}: one line, one document, parsed with Jackson, carrying what the text output
 * says of the same binary (versions, probe set, each probe's action and place, each offset and its source, the
 * connection types, the verdict); files that are no Go binary and files that cannot be read get a document too.
 */
class InspectReportTest {

  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  record Result(int exit, String out, String err) {}

  static Result inspect(Path target, InspectCommand.Output output) {
    return inspect(target.toString(), output);
  }

  /** {@code gospan inspect [--output OUTPUT] TARGET} in this JVM: its exit code, stdout and stderr. */
  static Result inspect(String target, InspectCommand.Output output) {
    InspectCommand c = new InspectCommand();
    c.target = target;
    c.output = output;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    c.out = new PrintStream(out, true, StandardCharsets.UTF_8);
    c.err = new PrintStream(err, true, StandardCharsets.UTF_8);
    int exit = c.call();
    return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** The value of the text output's line starting with {@code prefix}. */
  static String line(String text, String prefix) {
    return text.lines().filter(l -> l.startsWith(prefix)).findFirst()
        .map(l -> l.substring(prefix.length()).strip()).orElseThrow(() -> new AssertionError(prefix + " in\n" + text));
  }

  @Test
  void theDocumentCarriesWhatTheTextSays() throws Exception {
    Path server = ExampleApps.build().resolve("greeter-relay");
    Result text = inspect(server, InspectCommand.Output.TEXT);
    Result json = inspect(server, InspectCommand.Output.JSON);
    assertThat(text.exit()).as(text.out()).isEqualTo(ExitCodes.OK);
    assertThat(json.exit()).isEqualTo(text.exit());
    assertThat(json.err()).isEmpty();
    assertThat(json.out().strip()).as("one line").doesNotContain("\n");
    JsonNode d = JSON.readTree(json.out());
    String t = text.out();

    assertThat(d.get("schema_version").asInt()).isEqualTo(InspectReport.SCHEMA_VERSION).isEqualTo(1);
    assertThat(d.get("binary").asText()).isEqualTo(server.toString()).isEqualTo(line(t, "binary:"));
    assertThat(d.get("status").asText()).isEqualTo("traceable");
    assertThat(d.has("error")).as("absent members are left out, not null").isFalse();
    assertThat(d.at("/go/version").asText() + " (" + d.at("/go/abi").asText() + " ABI)").isEqualTo(line(t, "go:"));
    assertThat(d.at("/modules/recorded").asBoolean()).isTrue();
    assertThat(d.at("/modules/grpc").asText()).isEqualTo(line(t, "grpc-go:")).startsWith("v1.");
    assertThat(d.at("/modules/xnet").asText()).isEqualTo(line(t, "x/net:"));
    assertThat(d.at("/probe_set/name").asText()).isEqualTo(line(t, "probe set:")).isEqualTo("streams");
    assertThat(d.at("/probe_set").has("reason")).isFalse();

    // every probe, in order, with its function, entry and place as the text prints them
    JsonNode probes = d.get("probes");
    assertThat(probes).hasSize(Probe.values().length);
    Set<String> attached = new TreeSet<>();
    for (int i = 0; i < Probe.values().length; i++) {
      JsonNode p = probes.get(i);
      String name = Probe.values()[i].name().toLowerCase(Locale.ROOT);
      assertThat(p.get("name").asText()).isEqualTo(name);
      assertThat(p.get("action").asText()).isIn("attach", "defer", "refuse", "absent", "unused");
      String where = p.has("address")
          ? String.format("0x%x (file offset 0x%x, from %s)", p.get("address").asLong(), p.get("file_offset").asLong(),
              p.get("symbol_source").asText())
          : "not in binary";
      assertThat(t).as(name).contains(String.format("  %-30s %s%n      %s: %s%n", name, p.get("function").asText(), where,
          p.get("place").asText()));
      if (p.get("action").asText().equals("attach") || p.get("action").asText().equals("defer")) {
        attached.add(name);
        assertThat(p.has("reason")).isFalse();
      } else {
        assertThat(p.get("reason").asText()).isNotEmpty();
      }
      if (name.equals("http2_client_close_stream")) {
        assertThat(p.get("attach_at")).hasSize(1); // past its guard
        assertThat(p.get("place").asText()).endsWith(String.format("0x%x", p.get("attach_at").get(0).asLong()));
      }
      if (name.equals("http2_client_new_stream")) {
        assertThat(p.get("attach_at")).isNotEmpty();
        assertThat(p.get("place").asText()).contains(String.format("[rsp + 0x%x]", p.get("result_slot").asInt()));
      }
    }
    assertThat(attached).isEqualTo(InspectCommandIT.willAttach(t))
        .contains("http2_client_new_stream", "http2_server_operate_headers", "server_handle_stream");

    // every field, resolved as the text says, from the source it says
    JsonNode offsets = d.get("offsets");
    assertThat(offsets).hasSize(ProbeField.values().length);
    int resolved = 0;
    for (JsonNode o : offsets) {
      if (o.has("missing")) {
        assertThat(o.has("source")).isFalse();
        assertThat(t).containsPattern("(?m)^  " + Pattern.quote(o.get("field").asText()) + " +missing");
        continue;
      }
      resolved++;
      assertThat(t).containsPattern("(?m)^  " + Pattern.quote(o.get("field").asText()) + " +"
          + Pattern.quote(o.get("text").asText() + " (" + o.get("source").asText()));
      switch (o.get("kind").asText()) {
        case "argument" -> assertThat(o.has("register") ? o.get("register").asText() : "stack SP+" + o.get("stack_offset").asInt())
            .isEqualTo(o.get("text").asText());
        default -> assertThat(o.get("value").asText()).isEqualTo(o.get("text").asText());
      }
    }
    assertThat(resolved).isGreaterThan(20);
    assertThat(offsets.findValuesAsText("source")).contains("dwarf").doesNotContain("null");

    // the connection types, as the text lists them
    JsonNode conns = d.get("connections");
    assertThat(conns.has("unavailable")).isFalse();
    assertThat(t).contains("netFD.pfd.Sysfd at " + conns.get("netfd_sysfd").asLong() + ")");
    List<String> types = new ArrayList<>();
    for (JsonNode c : conns.get("types")) {
      types.add(c.get("type").asText() + " " + c.get("kind").asText() + " +" + c.get("offset").asLong() + " " + c.get("via").asText());
      assertThat(t).containsPattern("(?m)^  " + Pattern.quote(c.get("type").asText()) + " +.* at \\+" + c.get("offset").asLong()
          + " \\(" + Pattern.quote(c.get("via").asText()) + "\\)");
    }
    assertThat(types).contains("*net.TCPConn socket +0 conn.fd", "*crypto/tls.Conn interface +0 conn");

    // the verdict: the text's lines, word for word
    JsonNode v = d.get("verdict");
    assertThat(v.get("text").asText()).isEqualTo(line(t, "verdict:")).startsWith("client spans, server spans, client->server linking by socket");
    assertThat(v.get("produces_spans").asBoolean()).isTrue();
    assertThat(v.get("client_spans").asBoolean()).isTrue();
    assertThat(v.get("server_spans").asBoolean()).isTrue();
    assertThat(v.get("socket_linking").asBoolean()).isTrue();
    assertThat(v.get("in_process_linking").asText()).isEqualTo(line(t, "calls linked inside the process:"));
    assertThat(v.get("runs_traced").asText()).isEqualTo(line(t, "runs traced:"));
    assertThat(v.get("serve_http").get(0).get("text").asText() + "; " + v.get("serve_http").get(1).get("text").asText())
        .isEqualTo(line(t, "servehttp:"));
  }

  @Test
  void aFileThatIsNoGoBinaryAndAMissingFileGetADocumentWithTheTextsExitCodes() throws Exception {
    Path notGo = tmp.resolve("true");
    Files.copy(Path.of("/bin/true"), notGo);
    Result r = inspect(notGo, InspectCommand.Output.JSON);
    assertThat(r.exit()).isEqualTo(ExitCodes.UNSUPPORTED).isEqualTo(inspect(notGo, InspectCommand.Output.TEXT).exit());
    JsonNode d = JSON.readTree(r.out());
    assertThat(d.get("schema_version").asInt()).isEqualTo(1);
    assertThat(d.get("status").asText()).isEqualTo("not_go");
    assertThat(d.get("error").asText()).containsIgnoringCase("go");
    assertThat(d.has("verdict")).isFalse();

    Path missing = tmp.resolve("absent");
    r = inspect(missing, InspectCommand.Output.JSON);
    assertThat(r.exit()).isEqualTo(ExitCodes.ERROR);
    assertThat(r.err()).isEqualTo("gospan inspect: " + missing + " does not exist\n");
    d = JSON.readTree(r.out());
    assertThat(d.get("status").asText()).isEqualTo("error");
    assertThat(d.get("error").asText()).isEqualTo(missing + " does not exist");
  }

  @Test
  void aGoBinaryWithoutGrpcIsNotGrpc() throws Exception {
    Path go = InspectDirectoryTest.goTool();
    Result r = inspect(go, InspectCommand.Output.JSON);
    assertThat(r.exit()).isEqualTo(ExitCodes.UNSUPPORTED);
    JsonNode d = JSON.readTree(r.out());
    assertThat(d.get("status").asText()).as(r.out()).isEqualTo("not_grpc");
    assertThat(d.at("/go/version").asText()).startsWith("go1.");
    // the go command records no modules (a std/cmd build): resolved, as a GOPATH build is, but none of grpc-go's
    // functions is in it
    assertThat(d.at("/modules/recorded").asBoolean()).isFalse();
    List<JsonNode> grpcProbes = new ArrayList<>();
    d.get("probes").forEach(p -> {
      if (p.get("function").asText().startsWith("google.golang.org/grpc")) {
        grpcProbes.add(p);
      }
    });
    assertThat(grpcProbes).hasSizeGreaterThan(5).allSatisfy(p -> {
      assertThat(p.get("action").asText()).isIn("refuse", "unused");
      assertThat(p.has("address")).isFalse();
    });
    assertThat(d.at("/verdict/produces_spans").asBoolean()).isFalse();
    assertThat(d.at("/verdict/text").asText()).startsWith("unsupported: gospan will produce no span for this binary (grpc-go unknown");
  }

  /** Strings in the document are escaped exactly as in the text: no control character reaches a terminal. */
  @Test
  void aPathWithControlCharactersIsEscaped() throws Exception {
    Path odd = tmp.resolve("a\u001b[2Jb");
    Files.copy(Path.of("/bin/true"), odd);
    Result r = inspect(odd, InspectCommand.Output.JSON);
    JsonNode d = JSON.readTree(r.out());
    assertThat(d.get("binary").asText()).isEqualTo(tmp + "/a\\x1b[2Jb");
    Matcher m = Pattern.compile("[\\x00-\\x1f\\x7f]").matcher(r.out().strip());
    assertThat(m.find()).as(r.out()).isFalse();
    Set<String> seen = new HashSet<>();
    d.fieldNames().forEachRemaining(seen::add);
    assertThat(seen).containsExactlyInAnyOrder("schema_version", "binary", "status", "error");
  }
}
