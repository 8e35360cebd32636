/**
 * The composition root: {@link io.gospan.receiver.app.GospanSidecar} builds every part of the
 * sidecar from the configuration and wires them (discovery and probes into span assembly and
 * export; the BPF counters into gospan's meter). The only package that knows all the others.
 */
package io.gospan.receiver.app;
