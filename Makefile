# One entry point: `make demo` to see it work, `make test` before you push.
# Runs one step at a time on purpose: the Rust builds want every core.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# maturin installs into the environment named here, whoever calls make.
export VIRTUAL_ENV := $(abspath $(VENV))

# Rebuild the core only when its sources or the packaging change.
BPF_SOURCES := $(wildcard crates/bpf/bpf/*)
BPF_PACKAGES := clang-19 bpftool libbpf-dev libelf-dev zlib1g-dev pkg-config
RUST_SOURCES := Cargo.toml $(wildcard Cargo.lock) $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)

# Runtime and dev dependencies, read from pyproject.toml so they are listed in one place.
define LIST_DEPENDENCIES
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["dev"]))
endef
export LIST_DEPENDENCIES

# The charting library the HTML pages inline (python/tcpeval/report/charts.py) and the driver
# of their browser test, from the npm registry at the versions package-lock.json pins. uPlot's
# build is committed in the package, so that `pip install .` and a wheel need no Node; `make
# vendor` copies it in after the lock changes, and `make test` checks the two are the same.
UPLOT_FILES := uPlot.iife.min.js uPlot.min.css
VENDOR := python/tcpeval/report/vendor

.PHONY: demo test bench lint fmt clean vendor dist

# Where Cargo builds (CARGO_TARGET_DIR when set): `make dist` packs what `make test` built there.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
BINARIES := tcpeval-probe tcpeval-lab tcpeval-bpf
# The static probe server for hosts without Python: musl links everything in.
MUSL := x86_64-unknown-linux-musl
STATIC_PROBE := tcpeval-probe-x86_64-linux-static
# maturin packs <module-name>.data/ as the wheel's data: scripts/ lands on the user's PATH.
WHEEL_DATA := tcpeval._core.data

demo: $(VENV)/.core
	$(BIN)/tcpeval demo examples --out out/demo

test: $(VENV)/.core node_modules/.installed dist
	for file in $(UPLOT_FILES); do cmp node_modules/uplot/dist/$$file $(VENDOR)/$$file; done
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test --workspace
	$(BIN)/ruff check
	$(BIN)/ruff format --check
	$(BIN)/mypy
	$(BIN)/python -m mypy.stubtest tcpeval._core
	$(BIN)/pytest

# What a user installs (docs/probe.md, "Installing it"): dist/ holds the wheel, which carries
# the three binaries, the static probe and SHA256SUMS over both. The wheel reuses the release
# build of $(VENV)/.core (maturin finds the extension module compiled for that interpreter,
# and the binaries are copied, not rebuilt); only the static probe is compiled here.
dist: $(VENV)/.core
	rm -rf dist $(WHEEL_DATA)
	mkdir -p $(WHEEL_DATA)/scripts
	cp $(BINARIES:%=$(TARGET_DIR)/release/%) $(WHEEL_DATA)/scripts/
	$(BIN)/maturin build --release --quiet --interpreter $(BIN)/python --out dist
	rustup target list --installed | grep -qx $(MUSL) || rustup target add $(MUSL)
	cargo build --release --quiet --target $(MUSL) -p tcpeval-probe
	cp $(TARGET_DIR)/$(MUSL)/release/tcpeval-probe dist/$(STATIC_PROBE)
	cd dist && sha256sum -- * > SHA256SUMS

bench: $(VENV)/.core
	$(BIN)/python bench/bench_sim.py
	$(BIN)/python bench/bench_plots.py

lint: $(VENV)/requirements.txt
	$(BIN)/ruff check
	$(BIN)/ruff format --check

fmt: $(VENV)/requirements.txt
	cargo fmt --all
	$(BIN)/ruff check --fix
	$(BIN)/ruff format

clean:
	rm -rf $(VENV) target out node_modules dist $(WHEEL_DATA)

vendor: node_modules/.installed
	cp $(addprefix node_modules/uplot/dist/,$(UPLOT_FILES)) $(VENDOR)/
	cp node_modules/uplot/LICENSE $(VENDOR)/uPlot.LICENSE

# --ignore-scripts: no package runs code at install (playwright-core would fetch no browser
# anyway; the test uses Debian's /usr/bin/chromium).
node_modules/.installed: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# The virtualenv with every Python dependency; the file is written only once pip succeeded.
$(VENV)/requirements.txt: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PYTHON) -c "$$LIST_DEPENDENCIES" > $@.tmp
	$(BIN)/pip install --quiet --disable-pip-version-check -r $@.tmp
	mv $@.tmp $@

# The Rust core built in release and the package installed (editable: Python edits need no rebuild).
# The probe endpoint, the lab's emulator and its BPF loader are binaries of their own (no
# Python inside); copied next to `tcpeval` so the Python drivers find them
# (python/tcpeval/probe/binary.py).
$(VENV)/.core: $(VENV)/requirements.txt $(VENV)/.bpf-tools $(RUST_SOURCES) $(BPF_SOURCES)
	$(BIN)/maturin develop --release
	cargo build --release -p tcpeval-probe -p tcpeval-lab -p tcpeval-bpf
	cp $(BINARIES:%=$(TARGET_DIR)/release/%) $(BIN)/
	touch $@

# The lab's BPF congestion controls (crates/bpf) compile with clang-19 against the running
# kernel's BTF, dumped by bpftool; Debian's packages, installed here when missing (as root).
$(VENV)/.bpf-tools: $(VENV)/requirements.txt
	command -v clang-19 >/dev/null && command -v bpftool >/dev/null \
		&& command -v pkg-config >/dev/null && [ -e /usr/include/bpf/bpf_helpers.h ] \
		&& [ -e /usr/include/gelf.h ] && [ -e /usr/include/zlib.h ] \
		|| { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $(BPF_PACKAGES) >/dev/null; }
	touch $@
