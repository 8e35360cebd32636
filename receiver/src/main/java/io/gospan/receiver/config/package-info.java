/**
 * gospan's configuration: typed records bound from {@code config/gospan.yaml} with Jackson
 * ({@link io.gospan.receiver.config.ConfigLoader}), with the standard {@code OTEL_*} environment
 * variables layered on top. Every problem is reported as a {@link
 * io.gospan.receiver.config.ConfigException} naming the key.
 */
package io.gospan.receiver.config;
