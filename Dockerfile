# syntax=docker/dockerfile:1
#
# The rotate-certs KRM function image. The entrypoint is the binary with no
# arguments, which is function mode: a ResourceList on stdin, a ResourceList
# on stdout - what `kustomize build --enable-alpha-plugins` (container:
# {image: ...}) and `kpt fn render` / `kpt fn eval --image` run.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) -t rotate-certs:dev .
#
# `make image` runs exactly that. No test here needs a Docker engine: the
# build command below is run natively by cmd/rotate-certs/dockerfile_test.go.

# The pinned toolchain: a patch release of the go 1.26 that go.mod declares,
# the one the tests run with (bump it with `go version`); GOTOOLCHAIN=local
# forbids fetching another one. A floating golang:1.26 tag would change the
# compiler under a rebuild of the same commit.
ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
ARG COMMIT=unknown
ENV GOTOOLCHAIN=local CGO_ENABLED=0
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY fn/ fn/
COPY internal/ internal/
RUN GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/rotate-certs ./cmd/rotate-certs

# A static binary needs no libc: distroless static, as its nonroot user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/rotate-certs /usr/local/bin/rotate-certs
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/rotate-certs"]
