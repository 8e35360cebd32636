package io.gospan.receiver.probe;

import io.gospan.receiver.bpf.BpfLink;

/** A probe attached to one binary (every process that runs it); {@link #close} detaches it. */
public final class ProbeLink implements AutoCloseable {
  private final BpfLink link;

  ProbeLink(BpfLink link) {
    this.link = link;
  }

  /** Detaches the probe; idempotent. The kernel frees the link from deferred work. */
  @Override
  public void close() {
    link.close();
  }
}
