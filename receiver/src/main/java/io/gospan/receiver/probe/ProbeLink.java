package io.gospan.receiver.probe;

import io.gospan.receiver.bpf.BpfLink;
import java.util.List;

/**
 * A probe attached to one binary (every process that runs it): one uprobe, or one per {@code RET}
 * instruction of a probe attached at its function's returns; {@link #close} detaches them all.
 */
public final class ProbeLink implements AutoCloseable {
  private final List<BpfLink> links;

  ProbeLink(BpfLink link) {
    this.links = List.of(link);
  }

  ProbeLink(List<BpfLink> links) {
    this.links = List.copyOf(links);
  }

  /** Uprobes this probe is attached with (1, or the function's returns). */
  public int uprobes() {
    return links.size();
  }

  /** Detaches the probe; idempotent. The kernel frees the links from deferred work. */
  @Override
  public void close() {
    links.forEach(BpfLink::close);
  }
}
