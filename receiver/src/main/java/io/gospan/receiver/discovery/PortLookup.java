package io.gospan.receiver.discovery;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Whether processes listen on TCP ports, for one look at the system (one scan): each network
 * namespace's socket tables ({@code /proc/<pid>/net/tcp}, {@code tcp6}) are read once, and a
 * process's file descriptors only when its namespace has a socket listening on the port asked
 * about. Reading the tables is the cost (the kernel prints every socket of the namespace), so
 * processes that share a namespace, as a pod's do, share one read. Discovery thread only.
 */
final class PortLookup {
  private final ProcFs procFs;
  /** Network namespace ({@code net:[inode]}) → port → inodes of the sockets listening on it. */
  private final Map<String, Map<Integer, Set<Long>>> byNamespace = new HashMap<>();

  PortLookup(ProcFs procFs) {
    this.procFs = procFs;
  }

  /** Whether process {@code pid} holds a TCP socket listening on {@code port} (IPv4 or IPv6). */
  boolean listens(int pid, int port) {
    String ns = procFs.netNamespace(pid);
    if (ns == null) {
      return false; // gone, or not readable
    }
    Set<Long> inodes = byNamespace.computeIfAbsent(ns, k -> procFs.listeningSockets(pid)).get(port);
    return inodes != null && procFs.holdsSocket(pid, inodes);
  }
}
