package io.gospan.receiver.bpf;

import jnr.ffi.Pointer;

/**
 * An attached program ({@code struct bpf_link}). Closing destroys the link, which detaches
 * the uprobe. Links also die with the process that holds their fd, so a crashed gospan
 * leaves no uprobe behind.
 */
public final class BpfLink implements AutoCloseable {
  private final BpfObject object;
  private Pointer link;
  private final String description;

  BpfLink(BpfObject object, Pointer link, String description) {
    this.object = object;
    this.link = link;
    this.description = description;
  }

  /** The kernel link id's fd in this process. */
  public int fd() {
    ensureOpen();
    return object.libbpf().lib.bpf_link__fd(link);
  }

  private void ensureOpen() {
    if (link == null) {
      throw new IllegalStateException("link is closed: " + description);
    }
  }

  /** Detaches. Idempotent. */
  @Override
  public synchronized void close() {
    if (link == null) {
      return;
    }
    object.libbpf().lib.bpf_link__destroy(link);
    link = null;
    object.untrack(this);
  }

  @Override
  public String toString() {
    return description;
  }
}
