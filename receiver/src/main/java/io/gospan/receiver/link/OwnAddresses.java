package io.gospan.receiver.link;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This gospan's own IP addresses: those of every interface of its network namespace (a pod's, a
 * container's, the host's), read with {@link NetworkInterface#getNetworkInterfaces()} at start and
 * again on {@link #refresh()}. A client at one of them (or at a loopback or wildcard address) was
 * traced by this gospan, if by any.
 */
public final class OwnAddresses {
  private static final Logger log = LoggerFactory.getLogger(OwnAddresses.class);

  private volatile Set<InetAddress> addresses;

  public OwnAddresses() {
    this.addresses = read();
  }

  /** Fixed addresses (tests), besides the loopback and wildcard ones. */
  static OwnAddresses of(Set<InetAddress> fixed) {
    OwnAddresses o = new OwnAddresses();
    o.addresses = Set.copyOf(fixed);
    o.fixed = true;
    return o;
  }

  private boolean fixed;

  /** Reads the interfaces' addresses again (an interface may have come or gone). */
  public void refresh() {
    if (fixed) {
      return;
    }
    Set<InetAddress> now = read();
    if (!now.equals(addresses)) {
      log.debug("own addresses now {}", now);
    }
    addresses = now;
  }

  public boolean contains(InetAddress a) {
    return a.isLoopbackAddress() || a.isAnyLocalAddress() || addresses.contains(a);
  }

  /** The addresses read last. */
  public Set<InetAddress> addresses() {
    return addresses;
  }

  private static Set<InetAddress> read() {
    Set<InetAddress> out = new HashSet<>();
    try {
      for (Iterator<NetworkInterface> it = NetworkInterface.getNetworkInterfaces().asIterator(); it.hasNext(); ) {
        NetworkInterface nif = it.next();
        for (Iterator<InetAddress> a = nif.getInetAddresses().asIterator(); a.hasNext(); ) {
          InetAddress address = a.next();
          out.add(InetAddress.getByAddress(address.getAddress())); // without the IPv6 scope
        }
      }
    } catch (SocketException | java.net.UnknownHostException e) {
      log.warn("cannot list this network namespace's interfaces ({}); only loopback addresses count as own", e.toString());
    }
    return Collections.unmodifiableSet(out);
  }
}
