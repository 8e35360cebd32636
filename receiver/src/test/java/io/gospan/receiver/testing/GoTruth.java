package io.gospan.receiver.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Test helper: what Go's own debug/elf, debug/dwarf and debug/gosym say about a binary, from
 * the gotruth program (offsets/src/test/go/gotruth). Tests take probe locations from here, not
 * from constants, until the Java inspector is wired in.
 */
public final class GoTruth {
  private GoTruth() {}

  /** Builds gotruth once per JVM into receiver/target. */
  static Path tool() {
    return ExampleApps.goTool("offsets/src/test/go/gotruth", "gotruth");
  }

  /** gotruth's JSON for {@code binary} with the given {@code -func} and {@code -struct} queries. */
  public static JsonNode query(Path binary, List<String> functions, List<String> structs) {
    List<String> cmd = new ArrayList<>();
    cmd.add(tool().toString());
    functions.forEach(f -> {
      cmd.add("-func");
      cmd.add(f);
    });
    structs.forEach(s -> {
      cmd.add("-struct");
      cmd.add(s);
    });
    cmd.add(binary.toString());
    try {
      return new ObjectMapper().readTree(ExampleApps.run(cmd, 120));
    } catch (IOException e) {
      throw new AssertionError("gotruth printed no JSON for " + binary, e);
    }
  }

  /** The {@code params} entry of one function. */
  public static JsonNode params(JsonNode truth, String function) {
    for (JsonNode p : truth.path("params")) {
      if (p.path("func").asText().equals(function) && p.path("found").asBoolean()) {
        return p;
      }
    }
    throw new AssertionError("gotruth found no DWARF parameters of " + function + ": " + truth.path("dwarf_error"));
  }

  /** Byte offset of a member of a struct gotruth was asked about. */
  public static int memberOffset(JsonNode truth, String struct, String member) {
    for (JsonNode s : truth.path("structs")) {
      if (s.path("name").asText().equals(struct)) {
        for (JsonNode m : s.path("members")) {
          if (m.path("name").asText().equals(member)) {
            return m.path("offset").asInt();
          }
        }
      }
    }
    throw new AssertionError("gotruth found no member " + struct + "." + member);
  }

  /** Entry file offset of a function. */
  public static long fileOffset(JsonNode truth, String function) {
    for (JsonNode f : truth.path("functions")) {
      if (f.path("name").asText().equals(function) && f.path("found").asBoolean()) {
        return f.path("file_offset").asLong();
      }
    }
    throw new AssertionError("gotruth found no function " + function);
  }

  /**
   * The location of one word of a parameter: piece {@code piece} (0 for a scalar; a slice is
   * ptr, len, cap) as a {@link io.gospan.receiver.probe.GoLoc}.
   *
   * <p>Go 1.16 and older (the stack ABI, ABI0) sometimes emit an empty location for a
   * parameter (seen: {@code hf} of writeHeader, go1.16.15). Its place is then still fixed by
   * ABI0: arguments follow the return address in order, each aligned to its size (at most 8),
   * so it is computed from the preceding parameters' sizes.
   */
  public static io.gospan.receiver.probe.GoLoc location(JsonNode funcParams, String param, int piece) {
    int abi0Offset = 8; // past the return address
    for (JsonNode p : funcParams.path("params")) {
      int size = p.path("size").asInt();
      int align = size >= 8 ? 8 : Math.max(1, Integer.highestOneBit(size));
      abi0Offset = (abi0Offset + align - 1) / align * align;
      if (p.path("name").asText().equals(param)) {
        JsonNode pc = p.path("pieces").get(piece);
        // Go 1.16 also lists an interface's two words twice (pieces 16,16,24,24 for words at
        // 16 and 24: one per location-list entry): more pieces than words means ABI0 decides.
        boolean abi0Layout = "stack".equals(funcParams.path("abi").asText())
            && (p.path("pieces").isEmpty() || p.path("pieces").size() > (size + 7) / 8);
        if (abi0Layout) {
          return io.gospan.receiver.probe.GoLoc.stack(abi0Offset + 8 * piece);
        }
        JsonNode whole = p.path("pieces").size() == 1 ? p.path("pieces").get(0) : null;
        if (pc == null && whole != null && "stack".equals(whole.path("kind").asText()) && size > 8 * piece) {
          // ABI0: one stack piece holds the whole value (an interface, a struct): word N is 8*N on
          return io.gospan.receiver.probe.GoLoc.stack(whole.path("stack_offset").asInt() + 8 * piece);
        }
        if (pc == null) {
          throw new AssertionError("parameter " + param + " has no piece " + piece + ": " + p);
        }
        switch (pc.path("kind").asText()) {
          case "register":
            return io.gospan.receiver.probe.GoLoc.register(pc.path("dwarf_reg").asInt());
          case "stack":
            return io.gospan.receiver.probe.GoLoc.stack(pc.path("stack_offset").asInt());
          default:
            throw new AssertionError("parameter " + param + " piece " + piece + " has no location: " + pc);
        }
      }
      abi0Offset += size;
    }
    throw new AssertionError("no parameter " + param + " in " + funcParams);
  }
}
