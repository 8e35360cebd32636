package io.gospan.receiver.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Test helper: network namespaces made by the test, one per tier of a client → relay → server
 * chain, each with its own address on one bridge, as pods on one node (or hosts on one network):
 *
 * <pre>
 *   ns C 10.77.0.1 ─┐
 *   ns R 10.77.0.2 ─┼─ bridge br0 in ns BR (10.77.0.254)
 *   ns S 10.77.0.3 ─┘
 * </pre>
 *
 * Nothing is added to the root namespace: the veth pairs are made inside the bridge's namespace
 * ({@code ip -n BR link add ... peer ... netns C}). {@link #dnat} puts a DNAT rule (nftables) in a
 * namespace, as kube-proxy does for a ClusterIP. The namespaces' names carry this JVM's pid, so
 * ones left by a JVM that died are recognised and deleted by the next run. Needs root, {@code ip}
 * (iproute2) and {@code nft} (nftables), installed by scripts/install-deps.sh; without them the
 * test fails with the command's output.
 */
public final class LinkNetwork implements AutoCloseable {
  /** The tiers' addresses (/24 on the bridge). */
  public static final String CLIENT_IP = "10.77.0.1";
  public static final String RELAY_IP = "10.77.0.2";
  public static final String SERVER_IP = "10.77.0.3";
  public static final String BRIDGE_IP = "10.77.0.254";

  private static final Pattern OURS = Pattern.compile("gsl(\\d+)(br|c|r|s)");

  public final String bridge;
  public final String client;
  public final String relay;
  public final String server;
  private boolean closed;

  private LinkNetwork(String prefix) {
    this.bridge = prefix + "br";
    this.client = prefix + "c";
    this.relay = prefix + "r";
    this.server = prefix + "s";
  }

  /** Makes the four namespaces, the bridge and the veth pairs, and brings everything up. */
  public static LinkNetwork create() {
    deleteStale();
    LinkNetwork n = new LinkNetwork("gsl" + ProcessHandle.current().pid());
    try {
      for (String ns : List.of(n.bridge, n.client, n.relay, n.server)) {
        ip("netns", "add", ns);
        ip("-n", ns, "link", "set", "lo", "up");
      }
      ip("-n", n.bridge, "link", "add", "br0", "type", "bridge");
      ip("-n", n.bridge, "addr", "add", BRIDGE_IP + "/24", "dev", "br0");
      ip("-n", n.bridge, "link", "set", "br0", "up");
      String[][] tiers = {{n.client, CLIENT_IP, "vc"}, {n.relay, RELAY_IP, "vr"}, {n.server, SERVER_IP, "vs"}};
      for (String[] t : tiers) {
        ip("-n", n.bridge, "link", "add", t[2], "type", "veth", "peer", "name", "eth0", "netns", t[0]);
        ip("-n", n.bridge, "link", "set", t[2], "master", "br0", "up");
        ip("-n", t[0], "addr", "add", t[1] + "/24", "dev", "eth0");
        ip("-n", t[0], "link", "set", "eth0", "up");
      }
    } catch (RuntimeException | AssertionError e) {
      n.close();
      throw e;
    }
    return n;
  }

  /**
   * In namespace {@code ns}: TCP to {@code vip:vport} is delivered to {@code to:port} (nftables
   * prerouting DNAT, as kube-proxy's rules for a ClusterIP), and {@code from} routes {@code vip}
   * through {@code ns}'s address {@code via}.
   */
  public void dnat(String ns, String vip, int vport, String to, int port, String from, String via) {
    run(List.of("ip", "netns", "exec", ns, "nft", "add", "table", "ip", "gospan_test"));
    run(List.of("ip", "netns", "exec", ns, "nft", "add", "chain", "ip", "gospan_test", "prerouting",
        "{ type nat hook prerouting priority -100 ; }"));
    run(List.of("ip", "netns", "exec", ns, "nft", "add", "rule", "ip", "gospan_test", "prerouting",
        "ip", "daddr", vip, "tcp", "dport", Integer.toString(vport), "dnat", "to", to + ":" + port));
    ip("-n", from, "route", "replace", vip + "/32", "via", via);
  }

  /**
   * In namespace {@code ns}: TCP leaving for {@code dst:dport} takes the source address {@code
   * as} (added to {@code ns}'s eth0): a source NAT. {@link #noSnat} removes it.
   */
  public void snat(String ns, String as, String dst, int dport) {
    ip("-n", ns, "addr", "add", as + "/24", "dev", "eth0");
    run(List.of("ip", "netns", "exec", ns, "nft", "add", "table", "ip", "gospan_snat"));
    run(List.of("ip", "netns", "exec", ns, "nft", "add", "chain", "ip", "gospan_snat", "postrouting",
        "{ type nat hook postrouting priority 100 ; }"));
    run(List.of("ip", "netns", "exec", ns, "nft", "add", "rule", "ip", "gospan_snat", "postrouting",
        "ip", "daddr", dst, "tcp", "dport", Integer.toString(dport), "snat", "to", as));
  }

  /** Removes what {@link #snat} added. */
  public void noSnat(String ns, String as) {
    run(List.of("ip", "netns", "exec", ns, "nft", "delete", "table", "ip", "gospan_snat"));
    ip("-n", ns, "addr", "del", as + "/24", "dev", "eth0");
  }

  /** {@code ip netns exec NS} followed by {@code cmd}. */
  public static List<String> in(String ns, String... cmd) {
    List<String> out = new ArrayList<>(List.of("ip", "netns", "exec", ns));
    out.addAll(List.of(cmd));
    return out;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (String ns : List.of(client, relay, server, bridge)) {
      try {
        ip("netns", "del", ns);
      } catch (RuntimeException | AssertionError ignored) {
        // not made
      }
    }
  }

  /** Deletes namespaces of this helper whose JVM is gone. */
  private static void deleteStale() {
    String list = run(List.of("ip", "netns", "list"));
    for (String line : list.split("\n")) {
      String name = line.strip().split("\\s+")[0];
      Matcher m = OURS.matcher(name);
      if (m.matches() && !ProcessHandle.of(Long.parseLong(m.group(1))).map(ProcessHandle::isAlive).orElse(false)) {
        run(List.of("ip", "netns", "del", name));
      }
    }
  }

  private static void ip(String... args) {
    List<String> cmd = new ArrayList<>(List.of("ip"));
    cmd.addAll(List.of(args));
    run(cmd);
  }

  private static String run(List<String> cmd) {
    return ExampleApps.run(cmd, 30);
  }
}
