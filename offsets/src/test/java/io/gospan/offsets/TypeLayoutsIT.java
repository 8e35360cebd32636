package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.pclntab.TypeLayouts;
import io.gospan.offsets.resolve.ProbeField;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The runtime type information (what version inference checks inferred layouts against) gives the
 * same struct member offsets and sizes as DWARF, for every Go toolchain layout the reader decodes
 * (name length big-endian before go1.17, uvarint since; offsetAnon before go1.19), read from the
 * stripped build where DWARF is gone.
 */
class TypeLayoutsIT {

  @Test
  void memberOffsetsAndSizesEqualDwarfAcrossGoReleases() throws Exception {
    for (String[] f : new String[][] {
        {"1.16.15", "v1.40.0"}, {"1.17.13", "v1.40.0"}, {"1.19.13", "v1.50.1"}, {"1.22.12", "v1.60.1"},
        {"1.26.8", "v1.85.0"}}) {
      Path dir = GoFixtures.fixture(f[0], f[1]);
      List<String> compared = new ArrayList<>();
      try (GoBinary full = GoBinary.open(dir.resolve("app"));
          GoBinary stripped = GoBinary.open(dir.resolve("app.stripped"))) {
        TypeLayouts layouts = stripped.typeLayouts().orElseThrow();
        GoBinary.Dwarf dwarf = full.dwarf();
        for (ProbeField field : ProbeField.values()) {
          if (field.kind() == ProbeField.Kind.MEMBER) {
            Optional<OptionalLong> rt = layouts.memberOffset(field.path());
            if (rt.isEmpty()) {
              continue; // a type the binary has no runtime type for (the ServeHTTP path's, not linked)
            }
            long sum = 0;
            boolean present = true;
            for (int i = 0; i + 1 < field.path().size(); i += 2) {
              OptionalLong off = dwarf.memberOffset(field.path().get(i), field.path().get(i + 1));
              present &= off.isPresent();
              sum += off.orElse(0);
            }
            assertThat(rt.get().isPresent()).as("%s %s: member present", f[0], field).isEqualTo(present);
            if (present) {
              assertThat(rt.get().getAsLong()).as("%s %s", f[0], field).isEqualTo(sum);
            }
            compared.add(field.cName());
          } else if (field.kind() == ProbeField.Kind.SIZE) {
            TypeLayouts.Struct s = layouts.struct(field.path().get(0));
            if (s != null) {
              assertThat(s.size()).as("%s %s", f[0], field).isEqualTo(dwarf.typeSize(field.path().get(0)).orElseThrow());
              compared.add(field.cName());
            }
          }
        }
      }
      // what inference checks in every build: grpc-go's, x/net's and net's structs are all reachable
      assertThat(compared).as("go%s grpc-go %s", f[0], f[1]).contains(
          "loopy_writer_side", "loopy_writer_framer", "framer_writer", "buf_writer_conn", "http2_client_conn",
          "http2_server_conn", "meta_headers_frame_fields", "headers_frame_stream_id", "header_field_size",
          "header_field_value", "net_fd_sysfd");
    }
  }
}
