package io.gospan.receiver.link;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The link service's settings (the configuration's {@code link.*} and {@code streams.link_wait}).
 *
 * @param listen where this gospan serves its link service; port 0 picks a free port (tests)
 * @param peerPort the port other gospans serve theirs on (the same configuration everywhere:
 *     {@code link.listen}'s port)
 * @param tls mutual TLS for both directions, or {@code null} for plaintext
 * @param linkWait {@code streams.link_wait}: how long this gospan's client spans stay findable
 *     after they end, and how long a question waits at most (plus {@code extraWait})
 * @param extraWait how much longer than {@code linkWait} a server span that asked another gospan
 *     waits for the answer
 * @param batchInterval how often the questions queued for one peer are sent, in one message
 * @param clockSkew how far another gospan's clock may be from this one's: the tolerance around a
 *     client span when another gospan names its server span's start time
 * @param maxPeers peers with a connection at once; the least recently asked is closed beyond
 * @param maxPending questions waiting for an answer at once, asked and being answered each
 */
public record LinkSettings(
    InetSocketAddress listen,
    int peerPort,
    Tls tls,
    Duration linkWait,
    Duration extraWait,
    Duration batchInterval,
    Duration clockSkew,
    int maxPeers,
    int maxPending) {

  /** Default {@code link.listen} port (docs: config/gospan.yaml). */
  public static final int DEFAULT_PORT = 9465;

  public LinkSettings {
    Objects.requireNonNull(listen, "listen");
    Objects.requireNonNull(linkWait, "linkWait");
    Objects.requireNonNull(extraWait, "extraWait");
    Objects.requireNonNull(batchInterval, "batchInterval");
    Objects.requireNonNull(clockSkew, "clockSkew");
    if (peerPort < 1 || peerPort > 65535) {
      throw new IllegalArgumentException("peer port " + peerPort);
    }
  }

  /** Defaults around {@code listen} and {@code linkWait}: extra wait 500 ms, batches every 50 ms, clock skew 250 ms. */
  public static LinkSettings of(InetSocketAddress listen, int peerPort, Tls tls, Duration linkWait) {
    return new LinkSettings(listen, peerPort, tls, linkWait, Duration.ofMillis(500), Duration.ofMillis(50),
        Duration.ofMillis(250), 1024, 16_384);
  }

  public LinkSettings withClockSkew(Duration skew) {
    return new LinkSettings(listen, peerPort, tls, linkWait, extraWait, batchInterval, skew, maxPeers, maxPending);
  }

  /**
   * Mutual TLS between gospans: each presents {@code certFile} (as server and as client) and
   * accepts only peers whose certificate {@code caFile} signed; a peer's server certificate must
   * name {@code serverName} (peers are reached by IP address, so the name is checked instead).
   *
   * @param caFile PEM CA bundle that signed the gospans' certificates
   * @param certFile PEM certificate this gospan presents
   * @param keyFile PEM PKCS#8 key of {@code certFile}
   * @param serverName the DNS name (subject alternative name) in the gospans' certificates
   */
  public record Tls(Path caFile, Path certFile, Path keyFile, String serverName) {
    public Tls {
      Objects.requireNonNull(caFile, "caFile");
      Objects.requireNonNull(certFile, "certFile");
      Objects.requireNonNull(keyFile, "keyFile");
      Objects.requireNonNull(serverName, "serverName");
    }
  }
}
