package io.gospan.contractgen;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Generates the Java side of the C contract from the BTF of the built {@code grpc.bpf.o}, so that
 * C is its single definition (the Java equivalent of cilium's bpf2go): reads the BTF ({@link Btf}),
 * derives the probes ({@link ProbeTags}) and Go facts ({@link GoFacts}) from their tags, and has one
 * writer per generated file fill that file's template (resources {@code *.java.mustache}):
 *
 * <ul>
 *   <li>{@code offsets}: {@code io.gospan.offsets.resolve.Probe} ({@link ProbeWriter}), {@code
 *       ProbeField} ({@link ProbeFieldWriter}) and the enums tagged for {@code io.gospan.offsets}
 *       ({@link JavaEnumWriter}: {@code ConnKind});
 *   <li>{@code receiver}: {@code io.gospan.receiver.event.ProbeKind} ({@link ProbeKindWriter}),
 *       {@code io.gospan.receiver.probe.GrpcProbe} ({@link GrpcProbeWriter}), {@code GrpcLayouts}
 *       ({@link GrpcLayoutsWriter}), {@code GrpcStructs} ({@link GrpcStructsWriter}: accessors in
 *       the members' widths), {@code GrpcConstants} ({@link GrpcConstantsWriter}), {@code
 *       ProbeCounters} ({@link ProbeCountersWriter}), {@code GrpcObject} ({@link GrpcObjectWriter}:
 *       map and setting names) and the enums tagged for {@code
 *       io.gospan.receiver} ({@link JavaEnumWriter}: {@code Side}, {@code StreamParentVia}, {@code
 *       ConnStatus}).
 * </ul>
 *
 * Usage: {@code ContractGenerator OBJECT OUT_DIR offsets|receiver [BPFTOOL]} (default: $BPFTOOL,
 * bpftool on the PATH, /usr/sbin/bpftool). Fails (exception, nothing written) when the object's
 * tags and enums disagree (see {@link ProbeTags}, {@link GoFacts}).
 */
public final class ContractGenerator {

  private ContractGenerator() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3 || !(args[2].equals("offsets") || args[2].equals("receiver"))) {
      throw new IllegalArgumentException("usage: ContractGenerator OBJECT OUT_DIR offsets|receiver [BPFTOOL]");
    }
    Path object = Path.of(args[0]);
    Path out = Path.of(args[1]);
    String bpftool = args.length > 3 ? args[3] : defaultBpftool();
    Btf btf = Btf.read(object, bpftool);
    Map<String, String> files = args[2].equals("offsets") ? offsets(btf) : receiver(btf);
    for (Map.Entry<String, String> f : files.entrySet()) {
      Path p = out.resolve(f.getKey());
      Files.createDirectories(p.getParent());
      // unchanged files keep their timestamp: no recompilation
      if (!Files.exists(p) || !Files.readString(p, StandardCharsets.UTF_8).equals(f.getValue())) {
        Files.writeString(p, f.getValue(), StandardCharsets.UTF_8);
      }
    }
  }

  /** $BPFTOOL, else bpftool on the PATH, else /usr/sbin/bpftool (as bpf/Makefile; Debian puts it there). */
  static String defaultBpftool() {
    String env = System.getenv("BPFTOOL");
    if (env != null && !env.isBlank()) {
      return env;
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "bpftool"))) {
        return Path.of(dir, "bpftool").toString();
      }
    }
    return "/usr/sbin/bpftool";
  }

  /** The offsets module's sources, by relative path. */
  static Map<String, String> offsets(Btf btf) {
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    Map<String, String> out = new LinkedHashMap<>();
    out.put("io/gospan/offsets/resolve/Probe.java", ProbeWriter.write(probes, ProbeTags.sets(btf)));
    out.put("io/gospan/offsets/resolve/ProbeField.java", ProbeFieldWriter.write(GoFacts.fields(btf, probes)));
    out.putAll(JavaEnumWriter.write(btf, "io.gospan.offsets."));
    return out;
  }

  /** The receiver's sources, by relative path. */
  static Map<String, String> receiver(Btf btf) {
    List<ProbeTags.ProbeSpec> probes = ProbeTags.probes(btf);
    Map<String, String> out = new LinkedHashMap<>();
    out.put("io/gospan/receiver/event/ProbeKind.java", ProbeKindWriter.write(probes));
    out.put("io/gospan/receiver/probe/GrpcProbe.java", GrpcProbeWriter.write(probes));
    out.put("io/gospan/receiver/probe/GrpcLayouts.java", GrpcLayoutsWriter.write(btf));
    out.put("io/gospan/receiver/probe/GrpcStructs.java", GrpcStructsWriter.write(btf));
    out.put("io/gospan/receiver/probe/GrpcConstants.java", GrpcConstantsWriter.write(btf));
    out.put("io/gospan/receiver/probe/ProbeCounters.java", ProbeCountersWriter.write(btf));
    out.put("io/gospan/receiver/probe/GrpcObject.java", GrpcObjectWriter.write(btf));
    out.putAll(JavaEnumWriter.write(btf, "io.gospan.receiver."));
    return out;
  }
}
