#!/usr/bin/env python3
"""Classes a JVM loaded, per component, from -Xlog:class+load logs (one column per log).

Usage: scripts/class-count.py LABEL=FILE [LABEL=FILE ...]
Each FILE is the output of -Xlog:class+load (lines "[...][info][class,load] NAME source: ...").
Prints a markdown table: one row per component, one column per log, and the total.
The last row counts the classes mapped from a CDS archive (the JDK's default one holds ~1,300
of its own classes) rather than parsed from a jar. Components are package prefixes, first match wins (hidden classes such as lambdas count with
the package of their name)."""
import re
import sys

# (component, package prefixes), first match wins.
COMPONENTS = [
    ("grpc-netty-shaded (Netty)", ["io.grpc.netty.shaded."]),
    ("grpc-java (core, api, stub, util)", ["io.grpc."]),
    ("protobuf", ["com.google.protobuf."]),
    ("Guava, gson, Google APIs", ["com.google."]),
    ("OTel SDK trace", ["io.opentelemetry.sdk.trace."]),
    ("OTel SDK metrics", ["io.opentelemetry.sdk.metrics."]),
    ("OTel SDK logs", ["io.opentelemetry.sdk.logs."]),
    ("OTel SDK common, resources", ["io.opentelemetry.sdk."]),
    ("OTel Prometheus exporter + Prometheus client", ["io.opentelemetry.exporter.prometheus.", "io.prometheus."]),
    ("OTel OTLP exporter", ["io.opentelemetry.exporter."]),
    ("OTel disk buffering (contrib)", ["io.opentelemetry.contrib.disk.", "io.opentelemetry.diskbuffering."]),
    ("OTel API, context, proto, other", ["io.opentelemetry."]),
    ("OkHttp, Okio, Kotlin, Wire", ["okhttp3.", "okio.", "kotlin.", "com.squareup."]),
    ("Jackson, SnakeYAML", ["com.fasterxml.jackson.", "org.yaml.snakeyaml."]),
    ("jnr-ffi, jffi, ASM", ["jnr.", "com.kenai.", "org.objectweb.asm."]),
    ("Capstone", ["capstone."]),
    ("picocli, SLF4J, logging", ["picocli.", "org.slf4j.", "ch.qos."]),
    ("gospan link", ["io.gospan.receiver.link."]),
    ("gospan export", ["io.gospan.receiver.export."]),
    ("gospan metrics", ["io.gospan.receiver.metrics."]),
    ("gospan config", ["io.gospan.receiver.config."]),
    ("gospan discovery", ["io.gospan.receiver.discovery."]),
    ("gospan bpf, probe, event", ["io.gospan.receiver.bpf.", "io.gospan.receiver.probe.", "io.gospan.receiver.event."]),
    ("gospan span", ["io.gospan.receiver.span."]),
    ("gospan offsets (binary inspection)", ["io.gospan.offsets."]),
    ("gospan other (app, cli, logging)", ["io.gospan."]),
    ("JDK java.util", ["java.util."]),
    ("JDK other", ["java.", "javax.", "jdk.", "sun.", "com.sun.", "org.w3c.", "org.xml.", "org.ietf."]),
]
LINE = re.compile(r"\[class,load\s*\]\s+(\S+)\s+source:")


def component(name):
    for label, prefixes in COMPONENTS:
        if any(name.startswith(p) for p in prefixes):
            return label
    return "other"


SHARED = "source: shared objects file"


def count(path):
    """Classes per component, and how many of all came from a CDS archive (mapped, not parsed)."""
    counts, shared = {}, 0
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m:
                c = component(m.group(1))
                counts[c] = counts.get(c, 0) + 1
                shared += SHARED in line
    return counts, shared


def main(args):
    if not args:
        sys.exit(__doc__)
    columns = []
    for a in args:
        label, _, path = a.partition("=")
        columns.append((label, count(path)))
    rows = [label for label, _ in COMPONENTS] + ["other"]
    print("| component | " + " | ".join(label for label, _ in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for r in rows:
        values = [c.get(r, 0) for _, (c, _) in columns]
        if any(values):
            print(f"| {r} | " + " | ".join(f"{v:,}" for v in values) + " |")
    print("| **total** | " + " | ".join(f"**{sum(c.values()):,}**" for _, (c, _) in columns) + " |")
    print("| of which from the CDS archive | " + " | ".join(f"{s:,}" for _, (_, s) in columns) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
