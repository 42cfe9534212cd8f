# rotate-certs - see README.md and docs/development.md. `make demo` and `make test` are all a fresh
# machine with Go needs.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
KUSTOMIZE_VERSION := v5.8.2
KUSTOMIZE := $(BIN)/kustomize
# Helm 3: its post-renderer is an executable (Helm 4 made post-renderers
# plugins); v3.22.0 builds with Go 1.26.
HELM_VERSION := v3.22.0
HELM := $(BIN)/helm
# Helm 4, whose post-renderers are postrenderer/v1 plugins (examples/helm/plugin),
# as bin/helm4 beside Helm 3.
HELM4_VERSION := v4.3.1
HELM4 := $(BIN)/helm4
# go-containerregistry's cmd/registry: the loopback OCI registry tests push to.
GGCR_VERSION := v0.22.1
REGISTRY := $(BIN)/registry
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# The one build of the binary, shared by the Dockerfile, .goreleaser.yaml and .ko.yaml
# (test/e2e compares them): static, -trimpath, no VCS stamp (a Docker build context has
# no .git; the commit is stamped with -X), so that every channel ships the same bytes.
BUILDFLAGS := -trimpath -buildvcs=false

export GOTOOLCHAIN := local
export PATH := $(BIN):$(PATH)
# The programs of bench/, hack/ and internal/ (the comparison, the linters, the replay, the
# simulator, the test summary) build only with the devtools tag, which every go command
# make runs gets: so `go install ./...` - what pre-commit's golang hooks run in a clone of
# this repository - installs rotate-certs alone.
export GOFLAGS := -tags=devtools

.PHONY: all build test golden demo tools test-tools report-tools control-plane container-tools java-tools lint clean bench image registry argocd

all: build

## build: compile bin/rotate-certs
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -ldflags '$(LDFLAGS)' -o $(BIN)/rotate-certs ./cmd/rotate-certs

## tools: install the pinned kustomize, Helm 3, Helm 4, the loopback OCI registry and the
## release tools (goreleaser, ko, cosign) into bin/, build the pinned Kubernetes control
## plane and Argo CD's plugin harness into a per-machine cache, and the Debian programs some
## tests drive (rsvg-convert, promtool, nginx, podman, runc, keytool) when absent; demo needs
## only kustomize
tools: $(KUSTOMIZE) $(HELM) $(HELM4) registry control-plane argocd test-tools release-tools

## test-tools: best effort, the optional programs some tests drive (each such test skips
## with a message without its program): rsvg-convert, promtool, jq, pre-commit, nginx,
## podman, runc and the JDK's keytool; kpt is not installed
test-tools: report-tools container-tools java-tools

## report-tools: rsvg-convert and promtool for the check/alerts tests, jq and pre-commit for
## the pull-request gate's (action/diff-comment.sh reads GitHub's JSON with jq), from Debian
## packages, only when absent; best effort (those tests skip without them)
REPORT_TOOLS := rsvg-convert:librsvg2-bin promtool:prometheus jq:jq pre-commit:pre-commit
report-tools:
	@missing=""; for t in $(REPORT_TOOLS); do command -v $${t%%:*} >/dev/null 2>&1 || missing="$$missing $${t#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian package(s)$$missing for the report and gate tests"; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	     (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing) >/dev/null 2>&1; then :; \
	  else echo "note: could not install$$missing; the tests that need them skip"; fi; \
	fi

$(KUSTOMIZE):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

$(HELM):
	GOBIN=$(BIN) $(GO) install -ldflags '-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION)' helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

# go install names the binary helm: it is installed beside bin/ and renamed helm4.
$(HELM4):
	GOBIN=$(BIN)/.helm4 $(GO) install -ldflags '-X helm.sh/helm/v4/internal/version.version=$(HELM4_VERSION)' helm.sh/helm/v4/cmd/helm@$(HELM4_VERSION)
	mv $(BIN)/.helm4/helm $(HELM4) && rmdir $(BIN)/.helm4

## registry: go-containerregistry's in-memory OCI registry into bin/registry, the loopback
## registry the OCI artifact tests start (internal/e2eharness.StartRegistry; they skip without it)
registry: $(REGISTRY)
$(REGISTRY):
	GOBIN=$(BIN) $(GO) install github.com/google/go-containerregistry/cmd/registry@$(GGCR_VERSION)

## argocd: Argo CD ARGOCD_VERSION's argocd-cmp-server and repo-server manifest generation, as
## one small harness (hack/argocd/harness.go) built inside a checkout of the release once per
## machine into ARGOCD_DIR/bin (hack/argocd.sh); the Argo CD plugin tests skip without it.
## ARGOCD_VERSION must match internal/e2eharness.ArgoCDVersion.
ARGOCD_VERSION := v3.2.12
ARGOCD_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rotate-certs/argocd-$(ARGOCD_VERSION)
argocd:
	@GO=$(GO) ./hack/argocd.sh $(ARGOCD_VERSION) $(ARGOCD_DIR)

## control-plane: etcd, kube-apiserver, kube-controller-manager and kubectl of Kubernetes
## K8S_VERSION, built from the Go module proxy once per machine into CONTROL_PLANE_DIR/bin
## (10-30 minutes on 2 CPUs the first time, a no-op after); the test/cluster tests run them
## and skip without them. K8S_VERSION must match internal/controlplane.KubernetesVersion.
K8S_VERSION := v1.33.13
CONTROL_PLANE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rotate-certs/k8s-$(K8S_VERSION)
control-plane:
	@GO=$(GO) ./hack/control-plane.sh $(K8S_VERSION) $(CONTROL_PLANE_DIR)

## container-tools: podman and runc from Debian, only when absent and run as root; best
## effort (the container-mode tests skip without them)
container-tools:
	@command -v podman >/dev/null 2>&1 && test -x /usr/sbin/runc -o -x /usr/bin/runc || { \
	  echo "installing Debian packages podman and runc for the container-mode tests"; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	     (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman runc) >/dev/null 2>&1; then :; \
	  else echo "note: could not install podman and runc; the container-mode tests skip"; fi; }

## java-tools: the JDK's keytool, which reads the rendered PKCS#12 and JKS truststores in
## test/e2e, from Debian's headless JRE, only when absent and run as root; best effort (that
## check skips without it). The JRE's postinst links /usr/bin/keytool.
java-tools:
	@command -v keytool >/dev/null 2>&1 || { \
	  echo "installing Debian package default-jre-headless (keytool) for the truststore test"; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	     (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends default-jre-headless) >/dev/null 2>&1 && \
	     command -v keytool >/dev/null 2>&1; then :; \
	  else echo "note: could not install keytool (default-jre-headless); the keytool check of the truststores skips"; fi; }

## test: every test - unit, golden, semantic, TLS, and end to end with kustomize, kpt, a real
## API server and podman; prints one line per package, then every failure and every skipped
## test with its reason
TEST_MODULES := . test/crdschema test/flux test/release
test: build tools lint
	@$(GO) build -o $(BIN)/testsummary ./internal/testsummary
	@set -o pipefail; for m in $(TEST_MODULES); do (cd $$m && $(GO) test -json -count=1 -timeout 45m ./...); done 2>&1 | $(BIN)/testsummary

## golden: rewrite the golden outputs from the current code - testdata/golden/*/expected.yaml,
## testdata/init/*/expected.yaml (init's starter policies),
## testdata/check/*/expected.*, examples/report-manifests.yaml, examples/report-timeline.svg and
## the RotationPolicy's JSON Schema and KRMFunctionDefinition under schemas/; review the change
## with git diff before committing it
golden:
	UPDATE_GOLDEN=1 $(GO) test -count=1 -run '^(TestGolden|TestCheckGolden|TestCheckInputShapes|TestCheckWaves|TestExampleTimeline|TestCommittedFiles|TestInitGolden)$$' ./fn/rotate ./cmd/rotate-certs ./internal/policyschema ./fn/initpolicy

## demo: rotate a CA on the envoy-gateway example and show what changed
demo: build $(KUSTOMIZE)
	@./examples/demo.sh

## bench: rotate-certs against a no-op kyaml function on what kpt and kustomize send (10k, 100k
## resources), scaling to 300k, memory on the worst shapes, render/check against kpt fn render,
## kustomize's cost around an exec function (about an hour); then the micro-benchmarks.
## BENCH_FLAGS passes flags to bench/compare, e.g. BENCH_FLAGS='-sections shapes -sizes 10000'
BENCH_FLAGS ?=
bench: build $(KUSTOMIZE)
	$(GO) build -o $(BIN)/noop-kyaml ./bench/noop
	$(GO) build -o $(BIN)/kyaml-path ./bench/kyamlpath
	$(GO) build -o $(BIN)/scan ./bench/scan
	$(GO) build -o $(BIN)/measure ./bench/measure
	$(GO) run ./bench/compare -rotate-certs $(BIN)/rotate-certs -noop $(BIN)/noop-kyaml -kyaml $(BIN)/kyaml-path \
	  -scan $(BIN)/scan -kustomize $(KUSTOMIZE) $(BENCH_FLAGS)
	$(GO) test -run '^$$' -bench . -benchmem ./fn/anchors ./fn/restart ./fn/rotate

## lint: go vet, gofmt, go.mod/go.sum as go mod tidy leaves them (every module), no
## function over 80 lines, tests included (hack/funclen), and no package depending on one
## the package map keeps it apart from (hack/importrules)
lint:
	$(GO) vet ./...
	@$(GO) run ./hack/funclen cmd fn internal test bench hack
	@$(GO) run ./hack/importrules
	@for m in $(TEST_MODULES); do (cd $$m && $(GO) mod tidy -diff) || { echo "go.mod of $$m is not tidy: run go mod tidy there"; exit 1; }; done
	@out=$$(gofmt -l cmd fn internal test bench hack); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf $(BIN)

## image: build the container image (needs a Docker engine; no test needs one - see Dockerfile)
IMAGE ?= rotate-certs:$(VERSION)
image:
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE) .

## replay: replay public git histories through bin/rotate-certs diff and count the
## violations of its invariants (hack/replay, docs/design/replay.md): REPLAY_REPOS names
## the git directories, each [NAME=]GITDIR[@REV][#MAX]; REPLAY_FLAGS passes flags
## (-j, -all-below, -out, -table, -work, -log). The violations go to bin/replay.json.
## Minutes to hours; not part of make test
REPLAY_REPOS ?=
REPLAY_FLAGS ?=
.PHONY: replay
replay: build
	@if [ -z "$(REPLAY_REPOS)" ]; then echo "make replay needs REPLAY_REPOS='[NAME=]GITDIR[@REV][#MAX] ...' (see docs/design/replay.md)"; exit 2; fi
	$(GO) run ./hack/replay -bin $(BIN)/rotate-certs -out $(BIN)/replay.json $(REPLAY_FLAGS) $(REPLAY_REPOS)

# --- rotation safety: simulator, fuzzing, the nginx peer ---
.PHONY: sim fuzz nginx
FUZZTIME ?= 2m
FUZZPARALLEL ?= 2
FUZZMINTIME ?= 2s

## sim: three simulated years of every rotation cadence through the real function (prints the table)
sim:
	$(GO) run ./internal/sim/simulate -days 1095

## fuzz: run each fuzz target for FUZZTIME (default 2m) at FUZZPARALLEL workers (default 2),
## with FUZZMINTIME (default 2s) to minimize each new input, then print executions per
## target; a finding is saved under the package's testdata/fuzz. For a campaign from an
## empty fuzz cache: FUZZCACHE=$(mktemp -d) make fuzz (or go clean -fuzzcache first).
## FuzzDiff minimizes in 5 executions, not FUZZMINTIME: each runs diff four times.
FUZZ_TARGETS := ./fn/pki:FuzzDecodePEM ./fn/policy:FuzzDecode ./fn/rotate:FuzzProcess \
  ./fn/resio:FuzzFastPathMatchesKyaml ./fn/resio:FuzzBlockParserMatchesYAML \
  ./fn/resio:FuzzDocumentParserMatchesYAML ./fn/resio:FuzzReadFileMatchesKyaml \
  ./fn/trustdiff:FuzzCompare ./fn/diff:FuzzDiff:5x
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZPARALLEL=$(FUZZPARALLEL) FUZZMINTIME=$(FUZZMINTIME) ./hack/fuzz.sh $(FUZZ_TARGETS)

## nginx: the Debian nginx for the real mTLS peer test, installed only when absent (the test skips without it)
test-tools: nginx
nginx:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || \
	  { command -v apt-get >/dev/null && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx; } || \
	  echo "nginx is not installed and could not be installed: the nginx mTLS test will skip"

# --- release: goreleaser, ko, cosign and a loopback OCI registry, each pinned at a release
# that builds with Go 1.26 (GOTOOLCHAIN=local), built once into bin/ (a no-op after) ---
.PHONY: release-tools goreleaser ko cosign release-snapshot image-oci
# goreleaser's main declares a newer Go (v2.18+ declare go 1.27); v2.17.x need nfpm v2.47,
# which needs a module the Go module proxy does not serve (go.digitalxero.dev/go-msix): v2.16.0
# is the newest release that builds with Go 1.26.
GORELEASER_VERSION := v2.16.0
KO_VERSION := v0.19.1
COSIGN_VERSION := v3.1.3
GORELEASER := $(BIN)/goreleaser
KO := $(BIN)/ko
COSIGN := $(BIN)/cosign

## release-tools: goreleaser, ko, cosign and the loopback registry (`make registry`, above)
## into bin/ (part of `make tools`)
release-tools: goreleaser ko cosign registry
goreleaser: $(GORELEASER)
ko: $(KO)
cosign: $(COSIGN)

$(GORELEASER):
	GOBIN=$(BIN) $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

$(KO):
	GOBIN=$(BIN) $(GO) install github.com/google/ko@$(KO_VERSION)

$(COSIGN):
	GOBIN=$(BIN) $(GO) install github.com/sigstore/cosign/v3/cmd/cosign@$(COSIGN_VERSION)

## release-snapshot: goreleaser release --snapshot, offline, into dist/: the archives of
## linux/darwin amd64/arm64, checksums.txt and an SPDX SBOM per archive; the checksums are
## signed only when COSIGN_PRIVATE_KEY (and COSIGN_PASSWORD) are set
release-snapshot: $(GORELEASER) $(COSIGN)
	$(GORELEASER) release --snapshot --clean $(if $(COSIGN_PRIVATE_KEY),,--skip=sign)

## image-oci: the container image built by ko (.ko.yaml) into an OCI layout in dist/image/oci,
## its SPDX SBOMs in dist/image/sbom; the base image comes from a registry (KO_DEFAULTBASEIMAGE
## overrides .ko.yaml's). Publishing: KO_DOCKER_REPO=... ko build --bare --tags vX.Y.Z,vX.Y
IMAGE_REPO ?= ghcr.io/rotate-certs/rotate-certs
image-oci: $(KO)
	rm -rf dist/image
	VERSION=$(VERSION) COMMIT=$(COMMIT) KO_DOCKER_REPO=$(IMAGE_REPO) $(KO) build --bare --push=false \
	  --oci-layout-path dist/image/oci --sbom-dir dist/image/sbom ./cmd/rotate-certs
