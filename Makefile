# tracekit: one build for the library, the programs, the tests and the demo.
#
#   make              programs into bin/
#   make check        the whole suite (installs missing Debian packages first)
#   make bench        figures side by side with the peer tools
#   make demo         the main job on bundled inputs
#   make fuzz         libFuzzer targets, run for FUZZ_SECONDS each
#   make install PREFIX=/usr/local DESTDIR=

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
CFLAGS ?= -O2 -g
FUZZ_SECONDS ?= 60

WARN := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wno-missing-field-initializers
CHECK_WARN := -Werror
LIBS := -lsnappy -lbrotlienc -lbrotlidec -lyaml -lz -lm
INC := -Ilib

LIB_SRC := $(wildcard lib/*.c)
LIB_HDR := $(wildcard lib/*.h)
PROG_SRC := $(wildcard filters/*.c)
PROGS := $(patsubst filters/%.c,bin/%,$(PROG_SRC))
UNIT_SRC := $(wildcard tests/unit/*.c)

# The sanitizer build: every program and unit test again, under ASan+UBSan.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
ASAN_PROGS := $(patsubst filters/%.c,build/asan/bin/%,$(PROG_SRC))

all: $(PROGS)

build/lib/%.o: lib/%.c $(LIB_HDR) | build/lib
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) $(INC) -c -o $@ $<

build/libtrace.a: $(patsubst lib/%.c,build/lib/%.o,$(LIB_SRC))
	rm -f $@
	ar rcs $@ $^

bin/%: filters/%.c build/libtrace.a $(LIB_HDR) | bin
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) $(INC) -o $@ $< build/libtrace.a $(LIBS)

build/asan/lib/%.o: lib/%.c $(LIB_HDR) | build/asan/lib
	$(CC) $(WARN) $(CHECK_WARN) $(ASAN_FLAGS) $(INC) -c -o $@ $<

build/asan/libtrace.a: $(patsubst lib/%.c,build/asan/lib/%.o,$(LIB_SRC))
	rm -f $@
	ar rcs $@ $^

build/asan/bin/%: filters/%.c build/asan/libtrace.a $(LIB_HDR) | build/asan/bin
	$(CC) $(WARN) $(CHECK_WARN) $(ASAN_FLAGS) $(INC) -o $@ $< build/asan/libtrace.a $(LIBS)

build/unit/%: tests/unit/%.c build/libtrace.a $(LIB_HDR) | build/unit
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) $(INC) -o $@ $< build/libtrace.a $(LIBS)

build/asan/unit/%: tests/unit/%.c build/asan/libtrace.a $(LIB_HDR) | build/asan/unit
	$(CC) $(WARN) $(CHECK_WARN) $(ASAN_FLAGS) $(INC) -o $@ $< build/asan/libtrace.a $(LIBS)

bin build/lib build/asan/lib build/asan/bin build/unit build/asan/unit build/fuzz:
	mkdir -p $@

UNITS := $(patsubst tests/unit/%.c,build/unit/%,$(UNIT_SRC))
ASAN_UNITS := $(patsubst tests/unit/%.c,build/asan/unit/%,$(UNIT_SRC))

# ------------------------------------------------------------------
# --- Vulkan schema and capture layer (issue 3) ---
# (rules for the generated schema in build/gen and the layer in build/layer)
# --- end Vulkan schema and capture layer ---

# ------------------------------------------------------------------
# --- Example Vulkan programs (examples/*.c, shaders in examples/shaders) ---
# Headless Vulkan programs the capture and replay tests run.  GLSL in
# examples/shaders/NAME.STAGE becomes the C array NAME_STAGE in
# build/examples/shaders/NAME_STAGE.h (glslangValidator, glslang-tools).
# EXAMPLES is what `make check` needs built before the bats suites.
EXAMPLES := build/examples/vkexample
EXAMPLE_LIBS := -lvulkan -lz -lm
VKEXAMPLE_SHADERS := build/examples/shaders/vkexample_vert.h \
	build/examples/shaders/vkexample_frag.h build/examples/shaders/vkexample_comp.h

examples: $(EXAMPLES)

build/examples/shaders/vkexample_%.h: examples/shaders/vkexample.% | build/examples/shaders
	glslangValidator -V --vn vkexample_$* -o $@ $<

build/examples/vkexample: examples/vkexample.c $(VKEXAMPLE_SHADERS) | build/examples
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) -Ibuild/examples/shaders -o $@ $< $(EXAMPLE_LIBS)

build/examples build/examples/shaders:
	mkdir -p $@

.PHONY: examples
# --- end example Vulkan programs ---

# ------------------------------------------------------------------
# Fuzzing (clang's libFuzzer), one target per parser.

FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_LIB_SRC := $(filter-out lib/cli.c,$(LIB_SRC))
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))

build/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRC) $(LIB_HDR) | build/fuzz
	clang $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined $(INC) -o $@ $< \
		$(FUZZ_LIB_SRC) $(LIBS)

fuzz-build: deps-check $(FUZZ_TARGETS)

fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# ------------------------------------------------------------------

deps-build:
	@tools/deps.sh build

deps-check:
	@tools/deps.sh check

deps-demo:
	@tools/deps.sh demo

deps-bench:
	@tools/deps.sh bench

check: deps-check
	$(MAKE) all $(UNITS) $(ASAN_PROGS) $(ASAN_UNITS) $(FUZZ_TARGETS) $(EXAMPLES)
	tests/run-units.sh $(UNITS) $(ASAN_UNITS)
	tests/fuzz/run.sh 10 $(FUZZ_TARGETS)
	bats --formatter tap tests/*.bats

bench: deps-bench all
	tests/bench.sh

demo: deps-demo all
	examples/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(wildcard man/*.5) $(DESTDIR)$(PREFIX)/share/man/man5/

clean:
	rm -rf bin build

.PHONY: all check bench demo install clean fuzz fuzz-build deps-build deps-check deps-demo deps-bench
.SECONDARY:
