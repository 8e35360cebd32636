package io.gospan.receiver.probe;

import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.util.Map;

/** Turns an {@link OffsetsResolution} into the {@code struct go_offsets} value and probe mapping. */
public final class ProbeOffsets {
  private ProbeOffsets() {}

  /** The go_offsets value: every resolved field, unresolved ones left unknown. */
  public static GoOffsets toGoOffsets(OffsetsResolution resolution) {
    GoOffsets o = new GoOffsets();
    for (Map.Entry<ProbeField, FieldValue> e : resolution.values().entrySet()) {
      FieldValue v = e.getValue();
      if (e.getKey().kind() == ProbeField.Kind.ARGUMENT) {
        o.location(
            e.getKey().cName(),
            v.location().register() ? GoLoc.register(v.location().dwarfRegister()) : GoLoc.stack(v.location().spOffset()));
      } else {
        o.offset(e.getKey().cName(), v.value());
      }
    }
    return o;
  }

  /** The BPF probe of a resolved probe point. */
  public static GrpcProbe probe(Probe p) {
    return GrpcProbe.of(p);
  }
}
