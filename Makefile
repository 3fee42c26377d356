# sluice developer entry points. On a fresh Debian/Ubuntu machine:
#   make run    installs what is missing, builds, and benchmarks the loader on a sample dataset
#   make test   installs what is missing, builds, and runs every C++ and Python test
#   make asan   the C++ tests, and the Python stress tests on a sanitized module, under ASan + UBSan
#   make tsan   the thread pool, pools, reader, batch ring, queues and loaders under ThreadSanitizer
#   make fuzz   the libFuzzer targets, each for FUZZ_SECONDS on its corpus (Clang; docs/fuzzing.md)
#   make wheel  a manylinux wheel in dist/ (codecs bundled); make wheel-test installs it into a
#               clean virtual environment and runs a loader there (scripts/wheel.sh)
PYTHON ?= python3
BUILD ?= build/dev
JOBS ?= $(shell nproc)
CMAKE_FLAGS = -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(shell command -v $(PYTHON))
export PYTHONPATH := $(CURDIR)/python$(if $(PYTHONPATH),:$(PYTHONPATH))

FUZZ_SECONDS ?= 20

.PHONY: deps build test test-cpp test-python run asan tsan fuzz wheel wheel-test install clean

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

# The Python tests of threads, close races and bad input, on a module built with the sanitizers
# (the interpreter is not: the ASan runtime is preloaded, with libstdc++ so that its exception
# interceptors find it, and Python's leaks at exit are not reported).
ASAN_PYTEST = tests/python/test_stress.py tests/python/test_lifecycle.py tests/python/test_hostile.py \
              tests/python/test_webdataset_stream.py tests/python/test_video_decode.py tests/python/test_videos.py
STRESS_SECONDS ?= 20

asan: deps
	cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=address -DSLUICE_BUILD_PYTHON=ON
	cmake --build build/asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build/asan --output-on-failure -j $(JOBS)
	LD_PRELOAD="$$($(CXX) -print-file-name=libasan.so) $$($(CXX) -print-file-name=libstdc++.so)" ASAN_OPTIONS=detect_leaks=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 PYTHONMALLOC=malloc SLUICE_SANITIZED=1 \
	  SLUICE_PYTHON_DIR=$(CURDIR)/build/asan/python SLUICE_STRESS_SECONDS=$(STRESS_SECONDS) \
	  $(PYTHON) -m pytest -q -p no:cacheprovider $(ASAN_PYTEST)

# The tests of what runs on several threads: the thread pool, the loader's drive lock, the host
# pool, the reader, the batch ring, the CPU loader (executor, lifecycle and close races), the
# route scheduler, the engines' gather queue, the memory cache, and streamed shards (the session,
# the disk cache, pipes).
TSAN_TESTS = ThreadPool|TimedMutex|HostPool|Reader|BatchRing|Loader|RouteScheduler|GatherQueue|MemoryCache|StreamSession|ShardDiskCache|PipeInput

tsan: deps
	cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=thread -DSLUICE_BUILD_PYTHON=OFF
	cmake --build build/tsan -j $(JOBS)
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir build/tsan --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)'

fuzz:
	./scripts/install_deps.sh fuzz
	CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_SANITIZE=fuzz \
	  -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_PYTHON=OFF
	cmake --build build/fuzz -j $(JOBS)
	$(PYTHON) scripts/make_fuzz_corpus.py build/fuzz/seeds
	./scripts/run_fuzzers.sh build/fuzz $(FUZZ_SECONDS)

wheel: deps
	./scripts/wheel.sh build

wheel-test: wheel
	./scripts/wheel.sh test

install: deps
	$(PYTHON) -m pip install --no-build-isolation .

clean:
	rm -rf build dist python/sluice/_core*.so
