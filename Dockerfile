# syntax=docker/dockerfile:1
#
# Iggo server image: a static binary (no cgo) on a minimal non-root base.
#   docker build -t iggo .
#   docker run -p 8090:8090 -p 8080:8080/udp -p 8092:8092 -p 3000:3000 \
#     -e IGGY_ROOT_USERNAME=admin -e IGGY_ROOT_PASSWORD=change-me iggo
# Data (and the log file, under logs/) live in the /app/local_data volume.
# See docs/OPERATIONS.md.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/iggo ./cmd/iggo
RUN mkdir -p /out/local_data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/iggo /usr/local/bin/iggo
COPY --from=build --chown=65532:65532 /out/local_data /app/local_data
WORKDIR /app
# Listen on every interface inside the container (the defaults are
# loopback only); the data directory is the volume.
ENV IGGY_SYSTEM_PATH=/app/local_data \
    IGGY_TCP_ADDRESS=0.0.0.0:8090 \
    IGGY_QUIC_ADDRESS=0.0.0.0:8080 \
    IGGY_WEBSOCKET_ADDRESS=0.0.0.0:8092 \
    IGGY_HTTP_ADDRESS=0.0.0.0:3000
VOLUME ["/app/local_data"]
EXPOSE 8090 8080/udp 8092 3000
USER 65532:65532
# The binary protocol's PING needs no login; a server with TCP TLS on
# needs IGGO_TLS=true (and IGGO_TLS_CA or IGGO_TLS_INSECURE) for the probe.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/iggo", "ping", "--addr", "127.0.0.1:8090"]
ENTRYPOINT ["/usr/local/bin/iggo"]
CMD ["server"]
