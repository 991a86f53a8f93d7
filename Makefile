# ghostdriver — the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
OCB_VERSION := v0.165.0
OCB := $(shell $(GO) env GOPATH)/bin/builder
DIST := build/otelcol-ghostdriver/otelcol-ghostdriver
CAPTURE ?= testdata/captures/gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz
RUN_FOR ?=
# The version (internal/version) of the CLI, the receiver and the distribution (ocb's
# dist.version, read from the environment): one value, from git.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
VERSION_LDFLAGS := -X github.com/ghostdriver/ghostdriver/internal/version.Version=$(VERSION)


.PHONY: all build cli cupti-lib dist gateway run test test-unit test-dist test-docs test-fuzz test-jaeger test-gateway test-vgpu test-virgl generate generate-metadata check-generate build-arm64 test-arm64 bench vet clean

all: build

build: cli cupti-lib dist

# The CUDA injection library (the GPU timeline, cuptilib/): a plain C compiler, no CUDA
# toolkit (CUPTI is dlopen'ed at run time).
CUPTI_LIB := build/lib/libghostdriver_cupti.so
CC ?= gcc
cupti-lib: $(CUPTI_LIB)
$(CUPTI_LIB): cuptilib/ghostdriver_cupti.c cuptilib/peer.c cuptilib/channel.h cuptilib/cupti_abi.h cuptilib/peer.h
	mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -fPIC -shared -fvisibility=hidden -Wl,-soname,libghostdriver_cupti.so -o $@ cuptilib/ghostdriver_cupti.c cuptilib/peer.c -ldl -lpthread

cli:
	CGO_ENABLED=0 $(GO) build -ldflags "$(VERSION_LDFLAGS)" -o bin/ghostdriver ./cmd/ghostdriver

$(OCB):
	GOFLAGS=-mod=mod $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

# The collector distribution (ocb). Sources: builder-config.yaml. The script runs ocb and
# compiles with ocb's flags, printing progress (a first build takes many minutes).
dist: $(OCB)
	env "dist.version=$(VERSION)" VERSION_LDFLAGS="$(VERSION_LDFLAGS)" OCB=$(OCB) DIST=$(DIST) GO=$(GO) scripts/build-dist.sh

# The gateway distribution (ocb, gateway-builder-config.yaml): the fleet's gateway with
# contrib's tail_sampling (deploy/gateway-config.yaml). Its modules are the v0.161.0 line
# (the config says why), so it has its own ocb of that release, installed through the Go
# module proxy like the agent's. Same steps and flags as scripts/build-dist.sh: ocb generates
# the sources and fetches the modules (silent for minutes on a first build), then go build
# -trimpath -ldflags="-s -w", CGO_ENABLED=0. A file target: built once, and only again when
# the builder config changes (or after make clean), so test-gateway and any later target
# reuse the binary (the build cache makes a rebuild seconds, the first one minutes).
GATEWAY_OCB_VERSION := v0.161.0
GATEWAY_OCB := $(shell $(GO) env GOPATH)/bin/ocb-$(GATEWAY_OCB_VERSION)/builder
GATEWAY := bin/otelcol-ghostdriver-gateway
GATEWAY_SRC := build/otelcol-ghostdriver-gateway
gateway: $(GATEWAY)
$(GATEWAY_OCB):
	GOFLAGS=-mod=mod GOBIN=$(dir $@) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(GATEWAY_OCB_VERSION)
$(GATEWAY): gateway-builder-config.yaml | $(GATEWAY_OCB)
	@echo "gateway: ocb $(GATEWAY_OCB_VERSION) generating $(GATEWAY_SRC) and fetching its modules (log: $(GATEWAY_SRC)/ocb.log; a first build takes minutes)"
	mkdir -p $(GATEWAY_SRC) $(dir $@)
	env "dist.version=$(VERSION)" $(GATEWAY_OCB) --config gateway-builder-config.yaml --skip-compilation >$(GATEWAY_SRC)/ocb.log 2>&1 || \
	  { cat $(GATEWAY_SRC)/ocb.log >&2; echo "ocb failed (output above)" >&2; exit 1; }
	cd $(GATEWAY_SRC) && CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o $(abspath $@) .
	@echo "gateway: built $@"

# Build the CLI and the distribution (with progress; the CLI's replay summary of the capture
# is shown while the collector builds) and run it on the bundled real capture: where the
# time went per ring, job trees, metrics on http://127.0.0.1:8889/metrics. RUN_FOR=30s
# stops it after that long; otherwise it runs until Ctrl-C. scripts/run.sh calls make cli
# and make dist itself, after saying what they are about to do.
run:
	RUN_FOR=$(RUN_FOR) CAPTURE=$(CAPTURE) DIST=$(DIST) OCB=$(OCB) GO=$(GO) MAKE="$(MAKE)" scripts/run.sh

# Everything CI checks: vet, unit + capture tests, the distribution end to end.
test: vet test-unit test-fuzz test-dist test-docs test-jaeger test-gateway

# replay runs wherever Go runs: the live halves are Linux-only by build tags, the rest must
# build elsewhere too (README, Platforms), so vet checks macOS and builds the CLI for Windows.
vet:
	$(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=windows $(GO) build -o /dev/null ./cmd/ghostdriver
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# e2e/lifecycle compares the kernel's own lists of BPF programs and maps before and
# after 100 Start/Shutdown rounds: it runs alone, after the other packages, whose tests load
# programs of the same names in parallel.
test-unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /e2e/lifecycle$$)
	$(GO) test -count=1 ./e2e/lifecycle/

# Every fuzz target for a bounded time (FUZZTIME, default 10s each); prints inputs tried.
test-fuzz:
	scripts/fuzz.sh

# The ocb-built collector on the bundled capture: spans in the file exporter, a
# Prometheus scrape of the stage histograms.
test-dist: dist
	DIST=$(DIST) scripts/test-dist.sh

# Every ```yaml receiver configuration in README.md and documentation.md passes the
# distribution's own `validate` as written (e2e/docs_config_test.go).
test-docs: dist
	GHOSTDRIVER_REQUIRE="$${GHOSTDRIVER_REQUIRE:+$$GHOSTDRIVER_REQUIRE,}dist" GHOSTDRIVER_DIST=$$(realpath $(DIST)) $(GO) test -count=1 -v -run TestDocsConfigBlocksValidate ./e2e/

# Two collectors on loopback: the agent distribution replaying the bundled capture sends
# OTLP to the gateway distribution running deploy/gateway-config.yaml (as its ConfigMap
# carries it; endpoints, exporters, decision_wait and the latency threshold changed):
# every failed and every slow job trace must arrive whole, and the probabilistic share of
# the rest within a binomial bound (e2e/gateway_test.go). It also validates the gateway's
# deploy config with the gateway's own `validate`.
test-gateway: dist gateway
	GHOSTDRIVER_REQUIRE="$${GHOSTDRIVER_REQUIRE:+$$GHOSTDRIVER_REQUIRE,}dist" GHOSTDRIVER_DIST=$$(realpath $(DIST)) GHOSTDRIVER_GATEWAY=$$(realpath $(GATEWAY)) \
	  $(GO) test -count=1 -v -run '^TestGateway' ./e2e/ | tee build/test-gateway.log; test $${PIPESTATUS[0]} -eq 0
	@for n in TestGatewayValidatesDeployConfig TestGatewayTailSampling TestGatewayTailSamplingAfterHeadSampling; do \
	  grep -q "^--- PASS: $$n " build/test-gateway.log || { echo "$$n did not run and pass" >&2; exit 1; }; done

# Application spans and GPU job spans as one trace in a real Jaeger (v1.75.0, built from
# the module proxy in tools/jaeger), and a Prometheus scrape with tenant dimensions.
test-jaeger: dist
	DIST=$(DIST) scripts/test-jaeger.sh

# The virtual GPU rig: a real DRM driver module under QEMU (TCG), both kernel generations.
test-vgpu: cli
	testdata/vgpu/test.sh

# The virgl rig: the upstream virtio_gpu driver with Debian's Mesa (virgl) under QEMU (TCG),
# both kernel generations, checked against its tracefs, the client's frame log and the guest's
# DRM debugfs (the client id); a --fence-filter receiver beside the first; --records jobs refused.
test-virgl:
	testdata/vgpu/test-virgl.sh

# Regenerate the committed bpf2go output, x86-64 and arm64 objects (needs clang-14), after
# the event kinds the event table defines (internal/event/kinds_drivers.go).
generate:
	$(GO) generate ./internal/event/...
	$(GO) generate ./internal/probe/... ./internal/cuda/...

# mdatagen (tools/mdatagen pins v0.159.0, built from the module proxy) on metadata.yaml.
# mdatagen writes next to metadata.yaml and into internal/metadata and internal/metadatatest
# below it, and takes the import paths and package name from the Go package there: it runs
# on a copy placed at the root of a scratch module of this module's path (in a directory
# named ghostdriver, a valid package name), so that its internal/metadata is this module's,
# and only what this project uses is copied back:
#   internal/metadata/generated_status.go      component type, scope name, signal stability
#   internal/metadata/generated_telemetry.go   the receiver's internal telemetry (metadata.yaml's
#                                              `telemetry:`): TelemetryBuilder on the collector's
#                                              MeterProvider; and its generated test
#   internal/metadatatest/generated_telemetrytest.go  AssertEqual* for componenttest.Telemetry;
#                                              and its generated test
#   docs/metrics.md                             its documentation.md (metrics, resource attributes,
#                                              internal telemetry)
# Left out, because they do not compile or do not fit (checked against collector v0.165.0):
#   generated_metrics.go: does not compile: for histogram metrics its MetricsBuilder calls
#     SetDoubleValue/DoubleValue on pmetric.HistogramDataPoint (it records histograms as
#     one value per point; our histograms aggregate durations into fixed buckets);
#   generated_config.go: needs generated_metrics.go (AggregationStrategy*) and adds per-metric
#     `attributes` and `aggregation_strategy` keys the recorder does not honour; our
#     MetricsConfig also has `dimensions`; the hand-written MetricsConfig stays;
#   generated_resource.go: needs generated_config.go (ResourceAttributesConfig); resource
#     attributes are not configurable here;
#   generated_component_test.go / generated_package_test.go: the receiver package's tests
#     (load metadata.yaml from the package directory, goleak): not this file's place.
MDATAGEN := build/mdatagen
MDATAGEN_WORK := build/mdatagen-work
$(MDATAGEN): tools/mdatagen/go.mod tools/mdatagen/go.sum
	cd tools/mdatagen && $(GO) build -o ../../$(MDATAGEN) go.opentelemetry.io/collector/cmd/mdatagen

generate-metadata: $(MDATAGEN)
	rm -rf $(MDATAGEN_WORK) && mkdir -p $(MDATAGEN_WORK)/ghostdriver
	printf 'module github.com/ghostdriver/ghostdriver\n\ngo 1.26\n' > $(MDATAGEN_WORK)/ghostdriver/go.mod
	printf 'package ghostdriver\n' > $(MDATAGEN_WORK)/ghostdriver/doc.go
	cp metadata.yaml $(MDATAGEN_WORK)/ghostdriver/
	cd $(MDATAGEN_WORK)/ghostdriver && GOFLAGS=-mod=mod $(abspath $(MDATAGEN)) metadata.yaml
	cp $(MDATAGEN_WORK)/ghostdriver/internal/metadata/generated_status.go \
	   $(MDATAGEN_WORK)/ghostdriver/internal/metadata/generated_telemetry.go \
	   $(MDATAGEN_WORK)/ghostdriver/internal/metadata/generated_telemetry_test.go internal/metadata/
	mkdir -p internal/metadatatest
	cp $(MDATAGEN_WORK)/ghostdriver/internal/metadatatest/generated_telemetrytest.go \
	   $(MDATAGEN_WORK)/ghostdriver/internal/metadatatest/generated_telemetrytest_test.go internal/metadatatest/
	cp $(MDATAGEN_WORK)/ghostdriver/documentation.md docs/metrics.md

# The committed bpf2go output (.o + Go types, both targets) must be what the C sources
# compile to, and mdatagen's output what metadata.yaml generates: no file changed, none
# missing from git.
GENERATED := internal/event/kinds_drivers.go bpf/include/driver_hooks.h 'internal/probe/*_bpfel.*' 'internal/cuda/*_bpfel.*' 'internal/metadata/generated_*' 'internal/metadatatest/generated_*' docs/metrics.md
check-generate: generate generate-metadata
	@git diff --exit-code --stat -- $(GENERATED) && \
	  test -z "$$(git status --porcelain -- $(GENERATED))" || \
		{ git status --short -- $(GENERATED); \
		  echo "generated output is stale: run make generate generate-metadata and commit it"; exit 1; }

# The CLI and the collector for linux/arm64 (Grace Hopper / Grace Blackwell nodes), cross-built
# here: bpf2go's build tags select the committed arm64 objects. The collector reuses the
# sources ocb generated for dist. Each binary must be an AArch64 ELF (e_machine 183 = 0xb7).
ARM64_CLI := bin/linux-arm64/ghostdriver
ARM64_DIST := $(DIST)-linux-arm64
build-arm64: dist
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -ldflags "$(VERSION_LDFLAGS)" -o $(ARM64_CLI) ./cmd/ghostdriver
	cd $(dir $(DIST)) && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags "-s -w $(VERSION_LDFLAGS)" -o $(notdir $(ARM64_DIST)) .
	@for b in $(ARM64_CLI) $(ARM64_DIST); do \
	  m=$$(od -An -tx2 -j18 -N2 $$b | tr -d ' '); \
	  test "$$m" = 00b7 || { echo "$$b: e_machine 0x$$m, not AArch64"; exit 1; }; \
	  echo "$$b: linux/arm64 ELF, $$(du -h $$b | cut -f1)"; done

# The arm64 rig: Debian's arm64 kernel under qemu-system-aarch64 (TCG) with DRM, gpu-sched
# and vgem loaded; the arm64 CLI's doctor and the cross-compiled probe tests run there
# (scripts/test-arm64.sh says what is checked). Then the virtual GPU rig on arm64 kernels
# of both scheduler generations (testdata/vgpu/run.sh 6.1-arm64 and 7.3-arm64: vgpu.ko
# cross-built, the arm64 CLI as the receivers, the host CLI for the replay) with the x86
# rig's checks; 7.3-arm64 has ftrace direct calls, so fentry/fexit run there too. Needs
# qemu-system-arm, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, pahole (dwarves) and
# debootstrap (7.3-arm64 builds its module in the 7.3 rig's trixie chroot).
ARM64_VGPU_KERNELS ?= 6.1-arm64 7.3-arm64
test-arm64: build-arm64 cli
	ARM64_CLI=$(ARM64_CLI) scripts/test-arm64.sh
	VGPU_KERNELS="$(ARM64_VGPU_KERNELS)" GHOSTDRIVER_BIN=$(abspath $(ARM64_CLI)) HOST_GHOSTDRIVER_BIN=$(abspath bin/ghostdriver) \
	  testdata/vgpu/test.sh

bench:
	scripts/bench.sh

clean:
	rm -rf bin build
