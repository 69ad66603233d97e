# dbtrail: one image for capture, worker, dev and the one-shot verbs.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -o /out/dbtrail ./cmd/dbtrail

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends mydumper mariadb-client ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/dbtrail /usr/local/bin/dbtrail
# The worker's backup and work folders (docker-compose.yml): the container's
# own, writable by the user it runs as.
RUN mkdir -p /var/lib/dbtrail && chown nobody: /var/lib/dbtrail
USER nobody
ENTRYPOINT ["dbtrail"]
