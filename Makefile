# VMAFX developer targets. `make help` lists them.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Binaries built from module sources (kube-apiserver, etcd, ...) are cached outside the
# work tree, by version, so a fresh clone (and every CI run) reuses them.
CACHE        ?= $(HOME)/.cache/vmafx
# The versions come from the tool modules' go.mod, so they are pinned in one place.
module_version = $(shell awk -v m=$(1) '($$1=="require" && $$2==m) {print $$3} ($$1==m && $$2 ~ /^v/) {print $$2}' $(2) | head -n1)
K8S_VERSION  := $(call module_version,k8s.io/kubernetes,hack/tools/k8s/go.mod)
ETCD_VERSION := $(call module_version,go.etcd.io/etcd/server/v3,hack/tools/etcd/go.mod)
TOOLS_BIN    := $(CACHE)/bin
KUBE_APISERVER := $(TOOLS_BIN)/kube-apiserver-$(K8S_VERSION)
ETCD           := $(TOOLS_BIN)/etcd-$(ETCD_VERSION)
# envtest wants a folder holding exactly `kube-apiserver` and `etcd`.
ENVTEST_ASSETS := $(CACHE)/envtest/$(K8S_VERSION)-etcd-$(ETCD_VERSION)

GO            ?= go
CONTROLLER_GEN := $(GO) tool controller-gen
# Every binary lives in <component>/cmd/<binary>/.
CMD_DIRS      := $(sort $(dir $(wildcard */cmd/*/main.go)))
GO_PACKAGES   := ./...

##@ General
.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*##/ {printf "  %-18s %s\n", $$1, $$2} /^##@/ {printf "\n%s\n", substr($$0, 5)}' $(MAKEFILE_LIST)

# golangci-lint, built from its module sources in its own tool module and cached by version.
GOLANGCI_LINT_VERSION := $(call module_version,github.com/golangci/golangci-lint/v2,hack/tools/golangci-lint/go.mod)
GOLANGCI_LINT         := $(TOOLS_BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# The chart's values.schema.json and docs/values-reference.md are written from its annotated
# values.yaml by helm-values-schema-json and helm-docs, each built from its module sources
# in its own tool module (hack/tools/...) and cached by version, like golangci-lint.
HELM_SCHEMA_VERSION := $(call module_version,github.com/losisin/helm-values-schema-json/v2,hack/tools/helm-values-schema-json/go.mod)
HELM_SCHEMA         := $(TOOLS_BIN)/helm-values-schema-json-$(HELM_SCHEMA_VERSION)
HELM_DOCS_VERSION   := $(call module_version,github.com/norwoodj/helm-docs,hack/tools/helm-docs/go.mod)
HELM_DOCS           := $(TOOLS_BIN)/helm-docs-$(HELM_DOCS_VERSION)
CHART               := manifests/helm/vmafx

##@ Development
.PHONY: generate
generate: deps $(HELM_SCHEMA) $(HELM_DOCS) ## Generate deepcopy code, CRDs (manifests/crd), RBAC (manifests/rbac), the chart's values.schema.json (helm-values-schema-json) and docs/values-reference.md (helm-docs) from its values.yaml, the kustomize install rendered from the chart (manifests/default, manifests/overlays/local) and docs/api-reference.md from the markers; SPIR-V from the shaders; the kernel's assembly.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/... paths=./scheduler-plugin/apis/...
	$(CONTROLLER_GEN) crd paths=./apis/... output:crd:artifacts:config=manifests/crd
	hack/generate-kustomization.sh manifests/crd "make generate (controller-gen crd)"
	hack/generate-rbac.sh
	hack/generate-helm.sh
	@# helm-values-schema-json logs its progress on stderr: shown only when it fails.
	@out=$$($(HELM_SCHEMA) --values $(CHART)/values.yaml --output $(CHART)/values.schema.json --config /dev/null \
	  --draft 2020 --indent 2 --use-helm-docs --bundle --bundle-without-id --bundle-root . \
	  --schema-root.title "Values of the vmafx chart" --schema-root.additional-properties=false 2>&1) \
	  || { echo "helm-values-schema-json: $$out" >&2; exit 1; }
	@# helm-docs logs a failure as a warning and exits 0: any line it writes fails the target.
	@out=$$($(HELM_DOCS) --chart-search-root $(dir $(CHART)) --chart-to-generate $(CHART) --sort-values-order file \
	  --template-files $(CURDIR)/hack/chart/values-reference.md.gotmpl --output-file ../../../docs/values-reference.md \
	  --log-level warning 2>&1); if [ -n "$$out" ]; then echo "helm-docs: $$out" >&2; exit 1; fi
	$(GO) run ./hack/render-manifests
	$(GO) run ./hack/apiref manifests/crd docs/api-reference.md
	$(GO) run ./hack/namesref apis/vmafx/v1 docs/reference.md
	hack/generate-spirv.sh
	$(MAKE) --no-print-directory generate-kernels

# The kernel's vector assembly is written by avo from vmaf/asmgen, its own module
# (avo stays out of go.mod); verify regenerates it with the rest (zz_generated*).
.PHONY: generate-kernels
generate-kernels: ## Regenerate the vector assembly: the VMAF kernel's (vmaf/zz_generated_kernels_amd64.*) and the offset search's (worker/internal/align).
	cd vmaf/asmgen && $(GO) run . -out ../zz_generated_kernels_amd64.s -stubs ../zz_generated_kernels_amd64.go -pkg vmaf
	cd vmaf/asmgen && $(GO) run . -kernels align -out ../../worker/internal/align/zz_generated_diff_amd64.s -stubs ../../worker/internal/align/zz_generated_diff_amd64.go -pkg align

.PHONY: verify
verify: ## Fail when generated files are stale or the code is not gofmt/vet clean.
	hack/verify-generated.sh
	$(MAKE) lint

.PHONY: lint
lint: $(GOLANGCI_LINT) ## gofmt, go vet and golangci-lint (.golangci.yml; the linter is built from module sources on first use).
	@bad=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$bad" ]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi
	$(GO) vet $(GO_PACKAGES)
	$(GOLANGCI_LINT) run --allow-parallel-runners $(GO_PACKAGES)
	cd vmaf/asmgen && $(GO) vet ./...

.PHONY: build
build: ## Build every binary into bin/.
	@mkdir -p bin
	@for d in $(CMD_DIRS); do \
	  echo "go build -o bin/$$(basename $$d) ./$$d"; \
	  CGO_ENABLED=0 $(GO) build -trimpath -o bin/$$(basename $$d) ./$$d; done

##@ Tests
.PHONY: deps
deps: ## Install the Debian packages the tests and images need (ffmpeg, Vulkan loader and Mesa drivers, glslang-tools) when missing.
	@hack/install-deps.sh

.PHONY: test
test: deps test-bins versitygw registry helm ## Unit and integration tests (builds kube-apiserver, etcd, versitygw, the registry and helm on first use; the Kueue test runs when Kueue is built: make test-kueue).
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) VMAFX_VERSITYGW=$(VERSITYGW) VMAFX_REGISTRY=$(REGISTRY_BIN) VMAFX_HELM=$(HELM) $(if $(wildcard $(KUEUE)),VMAFX_KUEUE=$(KUEUE)) VMAFX_REQUIRE_INTEGRATION=1 VMAFX_REQUIRE_FFMPEG=1 VMAFX_REQUIRE_VULKAN=1 \
	  $(GO) test -count=1 $(GO_PACKAGES)
	$(GO) test -race -count=1 -run '$(RACE_TESTS)' $(RACE_PACKAGES)

# The tests of what runs on two goroutines at once, again under the race detector: a
# race there gives wrong scores or thumbnails only now and then, which the plain run
# cannot be relied on to show (about a minute, most of it the race build).
RACE_TESTS := AtOnce$$
RACE_PACKAGES := ./vmaf/ ./worker/internal/align/ ./worker/internal/backend/ ./worker/internal/command/

# Building Kueue takes 10 minutes on 2 idle cores (26 on a loaded machine), too long for every cold CI run: make
# test runs test/integration/kueue when Kueue is already built, and this target builds it
# first (.ci/run's nightly tier).
.PHONY: test-kueue
test-kueue: test-bins kueue ## The fair-sharing test against a real Kueue (builds Kueue on first use).
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) VMAFX_KUEUE=$(KUEUE) VMAFX_REQUIRE_KUEUE=1 VMAFX_REQUIRE_INTEGRATION=1 \
	  $(GO) test -count=1 ./test/integration/kueue/

.PHONY: test-unit
test-unit: ## Unit tests only (integration packages skip without KUBEBUILDER_ASSETS).
	$(GO) test -count=1 $(GO_PACKAGES)
	$(GO) test -race -count=1 -run '$(RACE_TESTS)' $(RACE_PACKAGES)

.PHONY: test-bins
test-bins: $(ENVTEST_ASSETS)/kube-apiserver $(ENVTEST_ASSETS)/etcd ## Build kube-apiserver and etcd from module sources, cached by version.
	@echo "KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS)"

$(KUBE_APISERVER):
	@mkdir -p $(@D)
	@echo "building kube-apiserver $(K8S_VERSION) from module sources (about 5 minutes the first time)"
	cd hack/tools/k8s && $(GO) build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(ETCD):
	@mkdir -p $(@D)
	@echo "building etcd $(ETCD_VERSION) from module sources (about 1 minute the first time)"
	cd hack/tools/etcd && $(GO) build -trimpath -o $@ go.etcd.io/etcd/server/v3

$(ENVTEST_ASSETS)/kube-apiserver: $(KUBE_APISERVER)
	@mkdir -p $(@D) && ln -sf $< $@

$(ENVTEST_ASSETS)/etcd: $(ETCD)
	@mkdir -p $(@D) && ln -sf $< $@

# The S3 server of the object storage tests and the local cluster: versitygw (posix
# backend), built from module sources like kube-apiserver and cached by version.
VERSITYGW_VERSION := $(call module_version,github.com/versity/versitygw,hack/tools/versitygw/go.mod)
VERSITYGW         := $(TOOLS_BIN)/versitygw-$(VERSITYGW_VERSION)

.PHONY: versitygw
versitygw: $(VERSITYGW) ## Build the S3 server (versitygw) from module sources, cached by version.
	@echo "VMAFX_VERSITYGW=$(VERSITYGW)"

$(VERSITYGW):
	@mkdir -p $(@D)
	@echo "building versitygw $(VERSITYGW_VERSION) from module sources (about 4 minutes the first time)"
	cd hack/tools/versitygw && CGO_ENABLED=0 $(GO) build -trimpath -o $@ github.com/versity/versitygw/cmd/versitygw

# Kueue's manager, the real Kueue of the fair-sharing test (test/integration/kueue): built
# from module sources like versitygw and cached by version. The test reads Kueue's CRDs and
# webhook manifests from the same module (`go list -m` in hack/tools/kueue).
KUEUE_VERSION := $(call module_version,sigs.k8s.io/kueue,hack/tools/kueue/go.mod)
KUEUE         := $(TOOLS_BIN)/kueue-$(KUEUE_VERSION)

.PHONY: kueue
kueue: $(KUEUE) ## Build Kueue's manager from module sources, cached by version.
	@echo "VMAFX_KUEUE=$(KUEUE)"

$(KUEUE):
	@mkdir -p $(@D) && echo "building kueue $(KUEUE_VERSION) from module sources (10 to 30 minutes the first time)"
	cd hack/tools/kueue && CGO_ENABLED=0 $(GO) build -trimpath -o $@ \
	  -ldflags "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$(KUEUE_VERSION)" sigs.k8s.io/kueue/cmd/kueue

# The Prometheus Pushgateway that the chart's batch Jobs push their result metrics to:
# built from module sources like versitygw and cached by version; the e2e packs it into
# the image vmafx.local/pushgateway:dev.
PUSHGATEWAY_VERSION := $(call module_version,github.com/prometheus/pushgateway,hack/tools/pushgateway/go.mod)
PUSHGATEWAY         := $(TOOLS_BIN)/pushgateway-$(PUSHGATEWAY_VERSION)

.PHONY: pushgateway
pushgateway: $(PUSHGATEWAY) ## Build the Prometheus Pushgateway from module sources, cached by version.
	@echo "VMAFX_PUSHGATEWAY=$(PUSHGATEWAY)"

$(PUSHGATEWAY):
	@mkdir -p $(@D)
	@echo "building pushgateway $(PUSHGATEWAY_VERSION) from module sources (about 1 minute the first time)"
	cd hack/tools/pushgateway && CGO_ENABLED=0 $(GO) build -trimpath \
	  -ldflags "-X github.com/prometheus/common/version.Version=$(PUSHGATEWAY_VERSION:v%=%)" \
	  -o $@ github.com/prometheus/pushgateway

$(HELM_SCHEMA):
	@mkdir -p $(@D)
	@echo "building helm-values-schema-json $(HELM_SCHEMA_VERSION) from module sources"
	cd hack/tools/helm-values-schema-json && CGO_ENABLED=0 $(GO) build -trimpath \
	  -ldflags "-X main.Version=$(HELM_SCHEMA_VERSION)" -o $@ github.com/losisin/helm-values-schema-json/v2

$(HELM_DOCS):
	@mkdir -p $(@D)
	@echo "building helm-docs $(HELM_DOCS_VERSION) from module sources"
	cd hack/tools/helm-docs && CGO_ENABLED=0 $(GO) build -trimpath \
	  -ldflags "-X main.version=$(HELM_DOCS_VERSION:v%=%)" -o $@ github.com/norwoodj/helm-docs/cmd/helm-docs

$(GOLANGCI_LINT):
	@mkdir -p $(@D)
	@echo "building golangci-lint $(GOLANGCI_LINT_VERSION) from module sources (about 2 minutes the first time)"
	cd hack/tools/golangci-lint && CGO_ENABLED=0 $(GO) build -trimpath -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# The OCI registry of the training scenario: CNCF Distribution, built from module sources
# like versitygw and cached by version.
REGISTRY_VERSION := $(call module_version,github.com/distribution/distribution/v3,hack/tools/distribution/go.mod)
REGISTRY_BIN     := $(TOOLS_BIN)/registry-$(REGISTRY_VERSION)

.PHONY: registry
registry: $(REGISTRY_BIN) ## Build the OCI registry (distribution) from module sources, cached by version.
	@echo "VMAFX_REGISTRY=$(REGISTRY_BIN)"

$(REGISTRY_BIN):
	@mkdir -p $(@D)
	@echo "building the distribution registry $(REGISTRY_VERSION) from module sources (about 3 minutes the first time)"
	cd hack/tools/distribution && CGO_ENABLED=0 $(GO) build -trimpath -o $@ github.com/distribution/distribution/v3/cmd/registry

##@ Local cluster (test/e2e; docs/local-cluster.md)
# A real single-node cluster on this machine, every part built from module sources and
# cached by version next to kube-apiserver and etcd. State lives in .cluster/ (git-ignored).
CONTAINERD_VERSION := $(call module_version,github.com/containerd/containerd/v2,hack/tools/containerd/go.mod)
KUBE_CONTROLLER_MANAGER := $(TOOLS_BIN)/kube-controller-manager-$(K8S_VERSION)
KUBE_SCHEDULER := $(TOOLS_BIN)/kube-scheduler-$(K8S_VERSION)
KUBELET        := $(TOOLS_BIN)/kubelet-$(K8S_VERSION)
KUBE_PROXY     := $(TOOLS_BIN)/kube-proxy-$(K8S_VERSION)
KUBECTL        := $(TOOLS_BIN)/kubectl-$(K8S_VERSION)
CONTAINERD     := $(TOOLS_BIN)/containerd-$(CONTAINERD_VERSION)
CONTAINERD_SHIM := $(TOOLS_BIN)/containerd-shim-runc-v2-$(CONTAINERD_VERSION)
CTR            := $(TOOLS_BIN)/ctr-$(CONTAINERD_VERSION)
CLUSTER_BINS   := $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBELET) \
                  $(KUBE_PROXY) $(KUBECTL) $(CONTAINERD) $(CONTAINERD_SHIM) $(CTR)
# The harness command; it finds the binaries above by name and version in $(TOOLS_BIN).
VMAFX_CLUSTER  := bin/vmafx-cluster
CLUSTER_FLAGS  := -bin-dir=$(TOOLS_BIN) -k8s-version=$(K8S_VERSION) -etcd-version=$(ETCD_VERSION) \
                  -containerd-version=$(CONTAINERD_VERSION) -state-dir=$(CURDIR)/.cluster
CLUSTER_KUBECTL := $(KUBECTL) --kubeconfig=$(CURDIR)/.cluster/kubeconfig
# Stamp the version that Kubernetes' own build stamps (hack/lib/version.sh), so that
# `kubectl version` and the node's kubelet version read v1.37.1, not v0.0.0-master.
K8S_LDFLAGS := $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
                 -X $(p).gitVersion=$(K8S_VERSION) -X $(p).gitTreeState=clean \
                 -X $(p).gitMajor=$(word 2,$(subst ., ,$(K8S_VERSION:v%=x.%))) \
                 -X $(p).gitMinor=$(word 3,$(subst ., ,$(K8S_VERSION:v%=x.%))))
# Static, no cgo: containerd's btrfs and devmapper snapshotters drop out (overlayfs is used).
CONTAINERD_TAGS := urfave_cli_no_docs no_btrfs no_devmapper no_zfs

.PHONY: cluster-bins
cluster-bins: $(CLUSTER_BINS) ## Build the cluster's binaries from module sources, cached by version (about 9 minutes on 2 cores the first time).

.PHONY: tools
tools: cluster-bins versitygw registry helm pushgateway ## Build every third-party program the tests and the local cluster use, cached by version (.ci/run starts it beside make verify).

.PHONY: cluster-up
cluster-up: cluster-bins $(VMAFX_CLUSTER) ## Start the local single-node cluster (a no-op when it is up); KUBECONFIG=.cluster/kubeconfig.
	$(VMAFX_CLUSTER) up $(CLUSTER_FLAGS)

.PHONY: cluster-down
cluster-down: $(VMAFX_CLUSTER) ## Stop the local cluster and restore the host state it changed.
	$(VMAFX_CLUSTER) down $(CLUSTER_FLAGS)

.PHONY: cluster-status
cluster-status: $(VMAFX_CLUSTER) ## Show the local cluster's processes and node.
	$(VMAFX_CLUSTER) status $(CLUSTER_FLAGS)

.PHONY: images
images: deps $(VMAFX_CLUSTER) ## Build the binaries static, pack them into images (no Docker) and import them into the cluster.
	$(VMAFX_CLUSTER) images $(CLUSTER_FLAGS) -out=$(CURDIR)/_output/images

.PHONY: deploy
deploy: $(KUBECTL) ## Apply manifests/overlays/local to the local cluster and wait for the rollout.
	$(CLUSTER_KUBECTL) apply -k manifests/overlays/local
	$(VMAFX_CLUSTER) wait-deployed $(CLUSTER_FLAGS)

.PHONY: e2e
e2e: helm versitygw pushgateway registry cluster-up images deploy ## End-to-end scenarios (test/e2e) on the local cluster; logs go to .cluster/artifacts on failure.
	VMAFX_E2E=1 KUBECONFIG=$(CURDIR)/.cluster/kubeconfig VMAFX_KUBECTL=$(KUBECTL) VMAFX_HELM=$(HELM) VMAFX_VERSITYGW=$(VERSITYGW) VMAFX_PUSHGATEWAY=$(PUSHGATEWAY) VMAFX_REGISTRY=$(REGISTRY_BIN) \
	  VMAFX_CLUSTER=$(CURDIR)/$(VMAFX_CLUSTER) VMAFX_CLUSTER_FLAGS="$(CLUSTER_FLAGS)" \
	  $(GO) test -count=1 -timeout=30m -v ./test/e2e/... \
	  || { $(VMAFX_CLUSTER) collect $(CLUSTER_FLAGS); exit 1; }

.PHONY: chaos
chaos: helm cluster-up images deploy ## Chaos scenarios (test/e2e, TestChaos*): operator kills, API server outage, lost Pods, kubelet restart, stale heartbeat, bad inputs; about 20 minutes.
	VMAFX_E2E=1 VMAFX_CHAOS=1 KUBECONFIG=$(CURDIR)/.cluster/kubeconfig VMAFX_KUBECTL=$(KUBECTL) VMAFX_HELM=$(HELM) \
	  VMAFX_CLUSTER=$(CURDIR)/$(VMAFX_CLUSTER) VMAFX_CLUSTER_FLAGS="$(CLUSTER_FLAGS)" \
	  $(GO) test -count=1 -timeout=60m -v -run '^TestChaos' ./test/e2e/scenarios/ \
	  || { $(VMAFX_CLUSTER) collect $(CLUSTER_FLAGS); exit 1; }

.PHONY: demo
demo: ## Build what is missing, start the local cluster, deploy, score a clip pair, show `kubectl get vmjob`.
	@echo "==> [1/5] building the cluster's binaries from module sources (cached in $(TOOLS_BIN); the first time takes about 9 minutes on 2 cores)"
	@$(MAKE) --no-print-directory cluster-bins
	@echo "==> [2/5] starting the local single-node cluster (state in .cluster/)"
	@$(MAKE) --no-print-directory cluster-up
	@echo "==> [3/5] building the project's images (the first time takes about 4 minutes) and importing them"
	@$(MAKE) --no-print-directory images
	@echo "==> [4/5] deploying manifests/overlays/local"
	@$(MAKE) --no-print-directory deploy
	@echo "==> [5/5] scoring a clip pair of the repository"
	@$(VMAFX_CLUSTER) demo $(CLUSTER_FLAGS)

# The harness is rebuilt when its sources change; go build is a no-op otherwise.
.PHONY: $(VMAFX_CLUSTER)
$(VMAFX_CLUSTER):
	@mkdir -p bin
	$(GO) build -o $@ ./test/e2e/cluster/cmd/vmafx-cluster

# The other Kubernetes binaries (and containerd's three) are each built by one go build
# (a grouped target): the packages they share are compiled once and the links run side by
# side, minutes faster on a cold machine than one go build per binary. The binaries land
# in a scratch folder and are renamed into place, so an interrupted build leaves none.
K8S_CLUSTER_CMDS := kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
$(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBELET) $(KUBE_PROXY) $(KUBECTL) &:
	@mkdir -p $(TOOLS_BIN)/.build-k8s-$(K8S_VERSION)
	@echo "building $(K8S_CLUSTER_CMDS) $(K8S_VERSION) from module sources"
	cd hack/tools/k8s && $(GO) build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $(TOOLS_BIN)/.build-k8s-$(K8S_VERSION)/ \
	  $(addprefix k8s.io/kubernetes/cmd/,$(K8S_CLUSTER_CMDS))
	for c in $(K8S_CLUSTER_CMDS); do mv $(TOOLS_BIN)/.build-k8s-$(K8S_VERSION)/$$c $(TOOLS_BIN)/$$c-$(K8S_VERSION); done
	rmdir $(TOOLS_BIN)/.build-k8s-$(K8S_VERSION)

CONTAINERD_CMDS := containerd containerd-shim-runc-v2 ctr
$(CONTAINERD) $(CONTAINERD_SHIM) $(CTR) &:
	@mkdir -p $(TOOLS_BIN)/.build-containerd-$(CONTAINERD_VERSION)
	@echo "building $(CONTAINERD_CMDS) $(CONTAINERD_VERSION) from module sources"
	cd hack/tools/containerd && CGO_ENABLED=0 $(GO) build -trimpath -tags "$(CONTAINERD_TAGS)" \
	  -o $(TOOLS_BIN)/.build-containerd-$(CONTAINERD_VERSION)/ $(addprefix github.com/containerd/containerd/v2/cmd/,$(CONTAINERD_CMDS))
	for c in $(CONTAINERD_CMDS); do mv $(TOOLS_BIN)/.build-containerd-$(CONTAINERD_VERSION)/$$c $(TOOLS_BIN)/$$c-$(CONTAINERD_VERSION); done
	rmdir $(TOOLS_BIN)/.build-containerd-$(CONTAINERD_VERSION)

##@ Helm (docs/install.md)
# The Helm CLI, built from module sources like the cluster's tools and cached by version.
HELM_VERSION := $(call module_version,helm.sh/helm/v3,hack/tools/helm/go.mod)
HELM         := $(TOOLS_BIN)/helm-$(HELM_VERSION)
# As Helm's own release build does: `helm template` and `helm lint` assume the Kubernetes
# version of the client-go they are built with (v0.37.x: 1.37), not 1.20, so that the
# chart's check for Kubernetes 1.30 or later passes without a cluster.
HELM_K8S_MINOR := $(word 2,$(subst ., ,$(call module_version,k8s.io/client-go,hack/tools/helm/go.mod)))
HELM_LDFLAGS := -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
                -X helm.sh/helm/v3/internal/version.gitTreeState=clean \
                $(foreach p,helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules,\
                  -X $(p).k8sVersionMajor=1 -X $(p).k8sVersionMinor=$(HELM_K8S_MINOR))

.PHONY: helm
helm: $(HELM) ## Build the Helm CLI from module sources into ~/.cache/vmafx/bin, cached by version.
	@echo "HELM=$(HELM)"

$(HELM):
	@mkdir -p $(@D)
	@echo "building helm $(HELM_VERSION) from module sources"
	cd hack/tools/helm && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(HELM_LDFLAGS)" -o $@ helm.sh/helm/v3/cmd/helm

##@ Release (docs/install.md, "Publish your own build")
# Images for linux/amd64 and linux/arm64 as multi-architecture OCI indexes, with SBOMs as
# OCI referrers, and the chart as an OCI artifact, pushed with go-containerregistry
# (credentials: the Docker config file, or REGISTRY_USERNAME and REGISTRY_PASSWORD). The
# worker's Debian packages (ffmpeg, Vulkan, libc) come from Debian's archive for each
# architecture, unpacked without installing, cached in $(CACHE)/debian.
REGISTRY_PLAIN_HTTP ?= false
RELEASE_FLAGS = -registry=$(REGISTRY) -plain-http=$(REGISTRY_PLAIN_HTTP) -cache=$(CACHE) -out=$(CURDIR)/_output/release

.PHONY: push
push: deps ## Build a development release (version: git describe) and push it: make push REGISTRY=host/path.
	@test -n "$(REGISTRY)" || { echo "make push REGISTRY=host/path (e.g. registry.example.com/vmafx)"; exit 2; }
	$(GO) run ./hack/release/cmd/vmafx-release -dev $(RELEASE_FLAGS)

.PHONY: release
release: deps ## Build and push release VERSION: make release REGISTRY=host/path VERSION=v1.2.3.
	@test -n "$(REGISTRY)" || { echo "make release REGISTRY=host/path VERSION=v1.2.3"; exit 2; }
	$(GO) run ./hack/release/cmd/vmafx-release -version=$(VERSION) $(RELEASE_FLAGS)

##@ Cleanup
.PHONY: clean
clean: ## Remove bin/ and _output/ (the version cache in $(CACHE) is kept).
	rm -rf bin _output
