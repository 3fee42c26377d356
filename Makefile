# sluice developer entry points. On a fresh Debian/Ubuntu machine:
#   make run    installs what is missing, builds, and benchmarks the loader on a sample dataset
#   make test   installs what is missing, builds, and runs every C++ and Python test
#   make asan   the C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer
PYTHON ?= python3
BUILD ?= build/dev
JOBS ?= $(shell nproc)
CMAKE_FLAGS = -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(shell command -v $(PYTHON))
export PYTHONPATH := $(CURDIR)/python$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: deps build test test-cpp test-python run asan install clean

deps:
	./scripts/install_deps.sh

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

test-cpp: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-python: build
	$(PYTHON) -m pytest -q tests/python

test: test-cpp test-python

run: build
	$(PYTHON) -m sluice bench

asan: deps
	cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=ON -DSLUICE_BUILD_PYTHON=OFF
	cmake --build build/asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build/asan --output-on-failure -j $(JOBS)

install: deps
	$(PYTHON) -m pip install --no-build-isolation .

clean:
	rm -rf build python/sluice/_core*.so
