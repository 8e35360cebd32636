/**
 * Logging helpers shared by the packages that log about failures a sidecar expects (a collector or
 * a peer gospan that does not answer): {@link io.gospan.receiver.logging.LogLimiter}, at most one
 * line per interval with the number left out since the last.
 */
package io.gospan.receiver.logging;
