package io.gospan.receiver.link;

import io.opentelemetry.api.common.AttributeKey;

/**
 * The link service's self-telemetry, long counters on gospan's meter ({@code /metrics}: {@code
 * gospan_link_lookups_sent_total} and so on).
 */
public enum LinkMetrics {
  /** Questions sent to other gospans (one per server span asked about). */
  LOOKUPS_SENT("gospan.link.lookups.sent", "Server spans whose client span another gospan was asked for"),
  /** Questions answered with the client span's ids. */
  LOOKUPS_ANSWERED("gospan.link.lookups.answered", "Questions another gospan answered with the client span's ids"),
  /**
   * Questions that got no ids, by {@link #REASON}: {@code not_found} (the peer traced no such
   * client span), {@code timeout} (no answer within the wait), {@code peer_failed} (the peer's
   * stream broke before it answered).
   */
  LOOKUPS_UNANSWERED("gospan.link.lookups.unanswered", "Questions to other gospans that got no ids, by reason"),
  /**
   * Server spans not asked about although their client is another gospan's, by {@link #REASON}:
   * {@code peer_backed_off} (its gospan did not answer lately), {@code overflow} (too many
   * questions waiting), {@code not_ready} (the peer's stream does not take more now).
   */
  LOOKUPS_SKIPPED("gospan.link.lookups.skipped", "Server spans not asked about, by reason"),
  /** Peers found unreachable or refusing (each time: connection refused, no route, not a gospan), then backed off. */
  PEERS_UNREACHABLE("gospan.link.peers.unreachable", "Times another gospan could not be reached or refused, then backed off"),
  /** Server spans made children of a client span another gospan traced. */
  SPANS_LINKED("gospan.link.spans.linked", "Server spans linked to a client span another gospan traced"),
  /**
   * Answers ignored, by {@link #REASON}: {@code bad_flow}, {@code unasked} (no such question, or
   * one given up already), {@code bad_ids}, {@code bad_wait} (an interim answer's time too far ahead).
   */
  ANSWERS_MALFORMED("gospan.link.answers.malformed", "Answers from other gospans ignored as malformed, by reason"),
  /** Answers that came after their server span stopped waiting (linked here or released meanwhile). */
  ANSWERS_LATE("gospan.link.answers.late", "Answers that came after their server span stopped waiting"),
  /**
   * Questions other gospans asked this one, by {@link #RESULT}: {@code found}, {@code not_found},
   * {@code malformed} (answered not found), {@code overflow} (too many waiting: answered not found).
   */
  QUERIES_SERVED("gospan.link.queries.served", "Questions other gospans asked this one, by result");

  /** Attribute: why a question got no ids or an answer was ignored. */
  public static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
  /** Attribute: what this gospan answered. */
  public static final AttributeKey<String> RESULT = AttributeKey.stringKey("result");

  private final String metricName;
  private final String description;

  LinkMetrics(String metricName, String description) {
    this.metricName = metricName;
    this.description = description;
  }

  public String metricName() {
    return metricName;
  }

  public String description() {
    return description;
  }
}
