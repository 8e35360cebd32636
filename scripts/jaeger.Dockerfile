# The Jaeger image docker-compose.yml names (jaegertracing/jaeger:2.13.0), for a host that cannot
# pull it: the release scripts/jaeger.sh builds from the Go module proxy (the one the host tests
# run), laid out as Jaeger's own image of that release (cmd/jaeger/Dockerfile in the module:
# same binary path, listen host, ports, user). scripts/container-images.sh builds it; the build
# context is a directory holding `jaeger` (the binary) and `sampling-strategies.json` (from the
# module). Jaeger's own image is Alpine-based; this one is Debian bookworm-slim like the project's
# images (the binary links glibc: scripts/jaeger.sh builds with the host's cgo).
ARG RUNTIME_IMAGE=debian:bookworm-slim
FROM ${RUNTIME_IMAGE}
ENV JAEGER_LISTEN_HOST=0.0.0.0
# Sampling config HTTP and gRPC, OTLP gRPC and HTTP, Jaeger collector HTTP and gRPC, Zipkin,
# UI and query API, health check gRPC and HTTP.
EXPOSE 5778 5779 4317 4318 14268 14250 9411 16686 13132 13133
COPY jaeger /cmd/jaeger/jaeger-linux
COPY sampling-strategies.json /cmd/jaeger/sampling-strategies.json
VOLUME ["/tmp"]
ENTRYPOINT ["/cmd/jaeger/jaeger-linux"]
USER 10001
