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

##@ Development
.PHONY: generate
generate: ## Generate deepcopy code, CRDs (manifests/crd) and RBAC (manifests/rbac) from the markers.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...
	$(CONTROLLER_GEN) crd paths=./apis/... output:crd:artifacts:config=manifests/crd
	hack/generate-rbac.sh

.PHONY: verify
verify: ## Fail when generated files are stale or the code is not gofmt/vet clean.
	hack/verify-generated.sh
	$(MAKE) lint

.PHONY: lint
lint: ## gofmt and go vet.
	@bad=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$bad" ]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi
	$(GO) vet $(GO_PACKAGES)

.PHONY: build
build: ## Build every binary into bin/.
	@mkdir -p bin
	@for d in $(CMD_DIRS); do \
	  echo "go build -o bin/$$(basename $$d) ./$$d"; \
	  CGO_ENABLED=0 $(GO) build -trimpath -o bin/$$(basename $$d) ./$$d; done

##@ Tests
.PHONY: test
test: test-bins ## Unit and integration tests (builds kube-apiserver and etcd on first use).
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) VMAFX_REQUIRE_INTEGRATION=1 $(GO) test -count=1 $(GO_PACKAGES)

.PHONY: test-unit
test-unit: ## Unit tests only (integration packages skip without KUBEBUILDER_ASSETS).
	$(GO) test -count=1 $(GO_PACKAGES)

.PHONY: test-bins
test-bins: $(ENVTEST_ASSETS)/kube-apiserver $(ENVTEST_ASSETS)/etcd ## Build kube-apiserver and etcd from module sources, cached by version.
	@echo "KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS)"

$(KUBE_APISERVER):
	@mkdir -p $(@D)
	@echo "building kube-apiserver $(K8S_VERSION) from module sources (about 6 minutes the first time)"
	cd hack/tools/k8s && $(GO) build -trimpath -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(ETCD):
	@mkdir -p $(@D)
	@echo "building etcd $(ETCD_VERSION) from module sources (about 1 minute the first time)"
	cd hack/tools/etcd && $(GO) build -trimpath -o $@ go.etcd.io/etcd/server/v3

$(ENVTEST_ASSETS)/kube-apiserver: $(KUBE_APISERVER)
	@mkdir -p $(@D) && ln -sf $< $@

$(ENVTEST_ASSETS)/etcd: $(ETCD)
	@mkdir -p $(@D) && ln -sf $< $@

##@ Cleanup
.PHONY: clean
clean: ## Remove bin/ and _output/ (the version cache in $(CACHE) is kept).
	rm -rf bin _output
