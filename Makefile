# monitor: `make run` starts a backend (embedded etcd + NATS) and a local agent; `make test` runs
# every suite. Both set up what they need first (npm packages, etcd and nats-server binaries).
SHELL := /bin/bash
.DEFAULT_GOAL := help

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
NATS_SERVER := $(shell command -v nats-server 2>/dev/null || ls /usr/sbin/nats-server /usr/local/sbin/nats-server 2>/dev/null | head -1)
ETCD := $(shell command -v etcd 2>/dev/null)

# The parts of `make lint`, run side by side (below).
LINT_PARTS := lint-types lint-web-types lint-layers lint-eslint lint-knip lint-format
.PHONY: $(LINT_PARTS) help setup deps build binaries test-binaries deploy-binaries cluster-binaries run cluster cluster-down cluster-wipe cluster-status test chaos lint format typecheck bench bench-legacy bench-peer deploy deploy-check clean

help:
	@echo "make build  - compile bin/*.ts into dist/*.mjs, the programs bin/monitor-backend, bin/monitor-agent and bin/monitorctl run"
	@echo "make run    - set up, then start a backend with embedded etcd and NATS plus a local agent (the backend stays when the agent stops)"
	@echo "             ports, each a variable (make run API_PORT=9080): API_PORT (8080) AGENT_PORT (8081) LEGACY_API_PORT (4567)"
	@echo "             ETCD_CLIENT_PORT (2379) ETCD_PEER_PORT (2380) NATS_PORT (4222) AGENT_API_PORT (3031) AGENT_SOCKET_PORT (3030) STATSD_PORT (8125)"
	@echo "make test   - set up, lint (types, layers) and run every test suite"
	@echo "make cluster - start a local cluster in the background: 3 etcd, 3 nats-server, 3 backends, haproxy, an agent"
	@echo "make cluster-status / cluster-down / cluster-wipe - look at it, stop it (data kept), stop it and remove its folder"
	@echo "make chaos  - the chaos suite as a soak: CHAOS_ROUNDS (3) rounds of its six faults, CHAOS_SOAK_S (60) s of load before each"
	@echo "make lint   - types, layer rules, eslint, unused exports, format check"
	@echo "make format - format the tree with prettier"
	@echo "make bench  - run the benchmarks and print their figures"
	@echo "make bench-legacy - the legacy benchmarks alone: the API next to core/v2, the client sockets next to the agent inputs"
	@echo "make bench-peer - Icinga 2 (installed when missing, as root) and monitor side by side: issue 17's goals table with the ratios"
	@echo "make setup  - install npm packages and the etcd / nats-server binaries when missing"
	@echo "make deploy - kubectl apply -k deploy/k8s/overlays/\$$OVERLAY (prod, or OVERLAY=dev) to the current cluster"
	@echo "make deploy-check - render every overlay of deploy/k8s offline and validate it (part of make test)"

setup: deps binaries

deps: node_modules/.installed

node_modules/.installed: package.json package-lock.json
	@npm ci --no-audit --no-fund --loglevel=error >/dev/null
	@touch $@

# Debian/Ubuntu packages, installed only when the binary is missing.
binaries:
	@missing=""; \
	[ -n "$(ETCD)" ] || missing="$$missing etcd-server"; \
	[ -n "$(NATS_SERVER)" ] || missing="$$missing nats-server"; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing"; \
	  $(SUDO) apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	    { $(SUDO) apt-get update -qq >/dev/null && $(SUDO) apt-get install -y -qq $$missing >/dev/null; }; \
	fi

# The tests also start an OpenLDAP server (slapd) for directory logins, drive Chromium through the
# dashboard, and agents run the Nagios plugins of monitoring-plugins-basic as checks; test/unit/metrics-nagios.test.ts also runs check_users
# and check_swap. A missing plugin fails those tests, so every one of them is checked here.
NAGIOS_PLUGINS := check_dummy check_load check_disk check_procs check_users check_swap

test-binaries:
	@if [ ! -x /usr/sbin/slapd ]; then \
	  echo "installing slapd"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slapd >/dev/null 2>&1 || \
	    { $(SUDO) apt-get update -qq >/dev/null && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slapd >/dev/null; }; \
	fi
	@if ! command -v chromium >/dev/null 2>&1 && [ -z "$$MONITOR_CHROMIUM" ]; then \
	  echo "installing chromium (the dashboard's tests drive it)"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
	    { $(SUDO) apt-get update -qq >/dev/null && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; \
	fi
	@missing=""; for p in $(NAGIOS_PLUGINS); do [ -x /usr/lib/nagios/plugins/$$p ] || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing monitoring-plugins-basic"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq monitoring-plugins-basic >/dev/null 2>&1 || \
	    { $(SUDO) apt-get update -qq >/dev/null && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq monitoring-plugins-basic >/dev/null; }; \
	fi

# kubectl renders deploy/k8s (kubectl kustomize). Debian's kubernetes-client is kubectl 1.20, whose
# built-in kustomize v2.0.3 the kustomizations are kept within (docs/operations-kubernetes.md#rendering).
deploy-binaries:
	@if ! command -v kubectl >/dev/null 2>&1; then \
	  echo "installing kubernetes-client"; \
	  $(SUDO) apt-get install -y -qq kubernetes-client >/dev/null 2>&1 || \
	    { $(SUDO) apt-get update -qq >/dev/null && $(SUDO) apt-get install -y -qq kubernetes-client >/dev/null; }; \
	fi

# The programs run compiled: bin/monitor-backend, bin/monitor-agent and bin/monitorctl import dist/*.mjs, bundled by
# esbuild (docs/operations.md#compiled-programs). Every target that starts them depends on this one; the
# test harness and test/run.ts also rebuild dist/ when it is older than the sources.
build: deps
	@node --import tsx deploy/build/main.ts

# The ports of `make run` (deploy/local/run.sh), one variable each: `make run API_PORT=9080`, or the
# same name in the environment. README, "Two commands", lists them.
API_PORT ?= 8080
AGENT_PORT ?= 8081
LEGACY_API_PORT ?= 4567
ETCD_CLIENT_PORT ?= 2379
ETCD_PEER_PORT ?= 2380
NATS_PORT ?= 4222
AGENT_API_PORT ?= 3031
AGENT_SOCKET_PORT ?= 3030
STATSD_PORT ?= 8125
RUN_PORTS := API_PORT AGENT_PORT LEGACY_API_PORT ETCD_CLIENT_PORT ETCD_PEER_PORT NATS_PORT AGENT_API_PORT AGENT_SOCKET_PORT STATSD_PORT

run: setup build
	@$(foreach v,$(RUN_PORTS),$(v)=$($(v))) deploy/local/run.sh

# A local cluster on 127.0.0.1 in the background (docs/operations-local-cluster.md): folder CLUSTER_DIR
# (.cluster/), ports from CLUSTER_BASE_PORT (18100) or one variable each.
cluster-binaries:
	@if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then \
	  echo "installing haproxy"; \
	  $(SUDO) apt-get install -y -qq haproxy >/dev/null 2>&1 || \
	    { $(SUDO) apt-get update -qq >/dev/null && $(SUDO) apt-get install -y -qq haproxy >/dev/null; }; \
	fi

cluster: setup cluster-binaries build
	@node --import tsx deploy/local/cluster/main.ts up

cluster-status: deps
	@node --import tsx deploy/local/cluster/main.ts status

cluster-down: deps
	@node --import tsx deploy/local/cluster/main.ts down

cluster-wipe: deps
	@node --import tsx deploy/local/cluster/main.ts down --wipe

typecheck: deps
	@node_modules/.bin/tsc -p tsconfig.json
	@node_modules/.bin/tsc -p web/tsconfig.json

# Types, the layer rules (docs/architecture.md#layers: a wrong-way import or a cycle fails with the
# rule's name), eslint, unused files/exports/dependencies (knip), and the format (prettier; `make format`
# rewrites). The six checks are independent and run side by side (each one's output kept together): one
# after the other they took 83 s of the test run's 30 minutes, side by side on 2 cores about half.
lint: deps
	@$(MAKE) --no-print-directory -j6 --output-sync=target $(LINT_PARTS)
	@echo "lint: types, layers, eslint, unused exports and format clean"

lint-types:
	@node_modules/.bin/tsc -p tsconfig.json
lint-web-types:
	@node_modules/.bin/tsc -p web/tsconfig.json
lint-layers:
	@node_modules/.bin/depcruise --config .dependency-cruiser.cjs --output-type err proto lib actors gateway agent cli web bin test bench deploy
lint-eslint:
	@node_modules/.bin/eslint --max-warnings 0 .
lint-knip:
	@node_modules/.bin/knip --no-progress
lint-format:
	@node_modules/.bin/prettier --check --log-level warn .

format: deps
	@node_modules/.bin/prettier --write --log-level warn .

test: setup test-binaries deploy-binaries cluster-binaries lint build
	@node --import tsx test/run.ts

# The chaos suite (test/chaos, also part of make test with one round) as a longer soak. Run straight
# with node rather than test/run.ts, whose suite timeout is sized for one round; the harness still
# kills every process it started when the suite ends.
CHAOS_ROUNDS ?= 3
CHAOS_SOAK_S ?= 60
chaos: setup cluster-binaries build
	@CHAOS_ROUNDS=$(CHAOS_ROUNDS) CHAOS_SOAK_S=$(CHAOS_SOAK_S) node --import tsx test/chaos/chaos.test.ts

# Offline by nature: no cluster can run here. KUBECTL="kubectl /path/to/other/kubectl" renders with each
# and requires the same objects (docs/operations-kubernetes.md#deploy-check).
deploy-check: deps binaries deploy-binaries
	@node --import tsx test/run.ts deploy-manifests

OVERLAY ?= prod
K := $(firstword $(KUBECTL) kubectl)
# An overlay that generates no Secret (prod) expects the operator's monitor-admin and monitor-agent.
deploy:
	@command -v $(K) >/dev/null 2>&1 || { echo "make deploy: $(K) not found (Debian/Ubuntu: apt-get install kubernetes-client)" >&2; exit 1; }
	@[ -f deploy/k8s/overlays/$(OVERLAY)/kustomization.yaml ] || { echo "make deploy: no overlay deploy/k8s/overlays/$(OVERLAY) (OVERLAY=dev or OVERLAY=prod)" >&2; exit 1; }
	@$(K) cluster-info --request-timeout=10s >/dev/null 2>&1 || { echo "make deploy: no Kubernetes cluster reachable ($(K) cluster-info failed; context: $$($(K) config current-context 2>/dev/null || echo none))" >&2; exit 1; }
	@$(K) kustomize deploy/k8s/overlays/$(OVERLAY) 2>/dev/null | grep -q '^kind: Secret$$' || \
	  for s in monitor-admin monitor-agent; do \
	    $(K) -n monitor get secret $$s >/dev/null 2>&1 || { echo "make deploy: create the Secret $$s in namespace monitor first (docs/operations-kubernetes.md#credentials)" >&2; exit 1; }; \
	  done
	$(K) apply -k deploy/k8s/overlays/$(OVERLAY)

bench: setup build
	@node --import tsx bench/run.ts

# The legacy API's benchmark alone (bench/legacy.ts), with the core/v2 figures of the same run beside it.
bench-legacy: setup build
	@node --import tsx bench/run.ts legacy legacy-client

# Icinga 2 and monitor on this machine in one run (bench/peer/index.ts, docs/performance.md); not part
# of make test. Installs Debian's icinga2 when missing (as root), starts and stops it itself.
bench-peer: setup build
	@node --import tsx bench/peer/index.ts

clean:
	rm -rf .state .cluster dist node_modules
