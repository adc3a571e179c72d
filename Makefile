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
# Snappy and Brotli are opened when a trace needs them (lib/stream/codec.c)
LIBS := -lzstd -lyaml -lz -lm -pthread

# The programs, and the objects of libtrace they link, are not
# position-independent (the layer's are: build/pic).  The schema's tables
# are 760 KB of pointers: in a PIE every one is relocated at start, each
# page of them copied on write, and a process paid 3.6 ms for it before
# its first call (trace-encode --version: 8.5 ms against /bin/true's 4.4
# ms here; 4.9 ms without); a pipeline of five programs pays it five
# times.  The sanitizer build below does the same for the same reason.
EXE_FLAGS := -fno-pie -no-pie

# lib/ is one folder a concern (README "Layout"); a folder's files build
# by one pattern.  libtrace is base, stream, vulkan and vma: what every
# program links.  trim and replay are linked only into the program that
# uses them (replay drives a device: libvulkan).
LIB_DIRS := base stream vulkan vma
LIB_SRC := $(foreach d,$(LIB_DIRS),$(wildcard lib/$(d)/*.c))
TRIM_SRC := $(wildcard lib/trim/*.c)
REPLAY_SRC := $(wildcard lib/replay/*.c)
LIB_HDR := $(wildcard lib/*/*.h)
INC := $(addprefix -Ilib/,$(LIB_DIRS) trim replay) -Ibuild/gen
PROG_SRC := $(wildcard filters/*.c)
PROGS := $(patsubst filters/%.c,bin/%,$(PROG_SRC))
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_HDR := $(wildcard tests/unit/*.h)

# objs(VARIANT,SOURCES): the objects of lib/ SOURCES in build VARIANT
objs = $(patsubst lib/%.c,$(1)/lib/%.o,$(2))

# The sanitizer build: every program and unit test again, under ASan+UBSan.
# Not position-independent, the sanitizers' runtimes linked in: the
# schema's tables of pointers then need no relocation at start, nor the
# runtimes' symbols a lookup, and a run of --help took 47 ms where it took
# 84 ms; the suites make many.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -fno-pie -no-pie -static-libasan -static-libubsan
ASAN_PROGS := $(patsubst filters/%.c,build/asan/bin/%,$(PROG_SRC))

all: $(PROGS)

# The Vulkan schema: lib/vulkan/vkschema_gen.py writes the tables, the
# argument structs and the call thunks from the registry.
VK_REGISTRY ?= /usr/share/vulkan/registry
VK_GEN := build/gen/vkschema_gen.c build/gen/vkschema_cmds.h build/gen/vkcall_gen.c

$(VK_GEN) &: lib/vulkan/vkschema_gen.py $(VK_REGISTRY)/vk.xml
	python3 lib/vulkan/vkschema_gen.py --registry $(VK_REGISTRY) build/gen

build/lib/%.o: lib/%.c $(LIB_HDR) build/gen/vkschema_cmds.h
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) $(EXE_FLAGS) $(INC) -c -o $@ $<

build/asan/lib/%.o: lib/%.c $(LIB_HDR) build/gen/vkschema_cmds.h
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CHECK_WARN) $(ASAN_FLAGS) $(INC) -c -o $@ $<

build/pic/lib/%.o: lib/%.c $(LIB_HDR) build/gen/vkschema_cmds.h
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) -fPIC $(INC) -c -o $@ $<

build/gen/%.o: build/gen/%.c $(VK_GEN) $(LIB_HDR)
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) $(EXE_FLAGS) $(INC) -c -o $@ $<

build/asan/gen/%.o: build/gen/%.c $(VK_GEN) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CHECK_WARN) $(ASAN_FLAGS) $(INC) -c -o $@ $<

build/pic/gen/%.o: build/gen/%.c $(VK_GEN) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) -fPIC $(INC) -c -o $@ $<

build/libtrace.a: $(call objs,build,$(LIB_SRC)) build/gen/vkschema_gen.o
	rm -f $@
	ar rcs $@ $^

build/asan/libtrace.a: $(call objs,build/asan,$(LIB_SRC)) build/asan/gen/vkschema_gen.o
	rm -f $@
	ar rcs $@ $^

# PROG_OBJ: the objects of one program that call into libtrace (before it)
bin/%: filters/%.c build/libtrace.a $(LIB_HDR) | bin
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) $(EXE_FLAGS) $(INC) -o $@ $< $(PROG_OBJ) build/libtrace.a $(LIBS)

build/asan/bin/%: filters/%.c build/asan/libtrace.a $(LIB_HDR) | build/asan/bin
	$(CC) $(WARN) $(CHECK_WARN) $(ASAN_FLAGS) $(INC) -o $@ $< $(PROG_OBJ) build/asan/libtrace.a $(LIBS)

# replay: lib/replay and the generated call thunks, over libvulkan
REPLAY_OBJ := $(call objs,build,$(REPLAY_SRC)) build/gen/vkcall_gen.o
ASAN_REPLAY_OBJ := $(call objs,build/asan,$(REPLAY_SRC)) build/asan/gen/vkcall_gen.o
bin/trace-replay: $(REPLAY_OBJ)
bin/trace-replay: PROG_OBJ := $(REPLAY_OBJ)
bin/trace-replay: LIBS += -lvulkan
build/asan/bin/trace-replay: $(ASAN_REPLAY_OBJ)
build/asan/bin/trace-replay: PROG_OBJ := $(ASAN_REPLAY_OBJ)
build/asan/bin/trace-replay: LIBS += -lvulkan

# trim: lib/trim
TRIM_OBJ := $(call objs,build,$(TRIM_SRC))
ASAN_TRIM_OBJ := $(call objs,build/asan,$(TRIM_SRC))
bin/trace-trim: $(TRIM_OBJ)
bin/trace-trim: PROG_OBJ := $(TRIM_OBJ)
build/asan/bin/trace-trim: $(ASAN_TRIM_OBJ)
build/asan/bin/trace-trim: PROG_OBJ := $(ASAN_TRIM_OBJ)

build/unit/%: tests/unit/%.c $(UNIT_HDR) build/libtrace.a $(LIB_HDR) | build/unit
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) $(EXE_FLAGS) $(INC) -o $@ $< build/libtrace.a $(LIBS)

build/asan/unit/%: tests/unit/%.c $(UNIT_HDR) build/asan/libtrace.a $(LIB_HDR) | build/asan/unit
	$(CC) $(WARN) $(CHECK_WARN) $(ASAN_FLAGS) $(INC) -o $@ $< build/asan/libtrace.a $(LIBS)

bin build/asan/bin build/unit build/asan/unit build/fuzz build/unit/shaders:
	mkdir -p $@

# test_spirv's shaders (tests/unit/shaders/iface.STAGE): SPIR-V 1.0 as
# iface_STAGE10, 1.5 as iface_STAGE15, C arrays in build/unit/shaders
UNIT_SHADERS := $(foreach v,10 15,$(foreach s,frag comp,build/unit/shaders/iface_$(s)$(v).h))
build/unit/shaders/iface_%10.h: tests/unit/shaders/iface.% | build/unit/shaders
	glslangValidator --target-env vulkan1.0 --vn iface_$*10 -o $@ $< >/dev/null
build/unit/shaders/iface_%15.h: tests/unit/shaders/iface.% | build/unit/shaders
	glslangValidator --target-env vulkan1.2 --vn iface_$*15 -o $@ $< >/dev/null
build/unit/test_spirv build/asan/unit/test_spirv: $(UNIT_SHADERS)
build/unit/test_spirv build/asan/unit/test_spirv: INC += -Ibuild/unit/shaders

UNITS := $(patsubst tests/unit/%.c,build/unit/%,$(UNIT_SRC))
ASAN_UNITS := $(patsubst tests/unit/%.c,build/asan/unit/%,$(UNIT_SRC))

# ------------------------------------------------------------------
# --- Vulkan capture layer ---
# The capture layer: a shared object over a position-independent build of
# libtrace, its wrappers generated by layer/layer_gen.py; the build-tree
# manifest points at the built library (VK_LAYER_PATH=build/layer), the
# installed one at $(PREFIX)/lib.  -z nodelete: the loader unloads layers
# at vkDestroyInstance, and the trace must outlive instances.
LAYER_LIB := libVkLayer_tracekit_capture.so
# Relative relocations packed (DT_RELR, binutils 2.38, glibc 2.36): the
# schema's 40,000 pointers took 950 KB of .rela.dyn, which every program
# under the layer read at its start; loading the layer took 6.8 ms, 6.3 ms
# packed (medians of 10 loads).  Left out where the linker does not know
# the option.
RELR := $(shell printf 'int main(void){return 0;}' | $(CC) -Wl,-z,pack-relative-relocs \
	-x c -o /dev/null - 2>/dev/null && echo -Wl,-z,pack-relative-relocs)
LAYER_SO := build/layer/$(LAYER_LIB)
LAYER_JSON := build/layer/VK_LAYER_TRACEKIT_capture.json
LAYER_SRC := $(wildcard layer/*.c)
LAYER_GEN := build/gen/layer_gen.c build/gen/layer_gen.h

# the layer's memory tracking, compiled into its unit test
build/unit/test_layer_memory build/asan/unit/test_layer_memory: layer/memory.c layer/watch.c layer/layer.h $(LAYER_GEN)

PIC_OBJ := $(call objs,build/pic,$(LIB_SRC)) build/pic/gen/vkschema_gen.o

$(LAYER_GEN) &: layer/layer_gen.py lib/vulkan/vkschema_gen.py $(VK_REGISTRY)/vk.xml
	python3 layer/layer_gen.py --registry $(VK_REGISTRY) build/gen

build/pic/libtrace.a: $(PIC_OBJ)
	rm -f $@
	ar rcs $@ $^

$(LAYER_SO): $(LAYER_SRC) $(wildcard layer/*.h) layer/layer.map $(LAYER_GEN) $(VK_GEN) build/pic/libtrace.a | build/layer
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) -fPIC -shared $(INC) -Ilayer -o $@ \
		$(LAYER_SRC) build/pic/libtrace.a $(LIBS) -lpthread \
		-Wl,--version-script=layer/layer.map -Wl,-z,nodelete -Wl,-z,defs $(RELR)

$(LAYER_JSON): layer/VK_LAYER_TRACEKIT_capture.json | build/layer
	sed 's|@LIBRARY_PATH@|$(CURDIR)/$(LAYER_SO)|' $< > $@

build/layer:
	mkdir -p $@

layer: $(LAYER_SO) $(LAYER_JSON)
all: layer
install: install-layer

install-layer: layer
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/share/vulkan/explicit_layer.d \
		$(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(LAYER_SO) $(DESTDIR)$(PREFIX)/lib/
	sed 's|@LIBRARY_PATH@|$(PREFIX)/lib/$(LAYER_LIB)|' layer/VK_LAYER_TRACEKIT_capture.json \
		> $(DESTDIR)$(PREFIX)/share/vulkan/explicit_layer.d/VK_LAYER_TRACEKIT_capture.json
	install -m 644 $(wildcard man/*.7) $(DESTDIR)$(PREFIX)/share/man/man7/

.PHONY: layer install-layer
# --- end Vulkan schema and capture layer ---

# ------------------------------------------------------------------
# --- Example Vulkan programs (examples/*.c, shaders in examples/shaders) ---
# Vulkan programs the capture and replay tests run (headless, or, with
# vkexample --present, in an X window through xcb).  GLSL in
# examples/shaders/NAME.STAGE becomes the C array NAME_STAGE in
# build/examples/shaders/NAME_STAGE.h (glslangValidator, glslang-tools).
# EXAMPLES is what `make check` needs built before the bats suites.
EXAMPLE_PROGS := build/examples/vkexample build/examples/vkthreads
EXAMPLES := $(EXAMPLE_PROGS) \
	build/tests/crashlayer/libVkLayer_tracekit_test_crash.so \
	build/tests/crashlayer/VK_LAYER_TRACEKIT_test_crash.json
EXAMPLE_LIBS := -lvulkan -lxcb -lz -lm -pthread
VKEXAMPLE_SHADERS := build/examples/shaders/vkexample_vert.h \
	build/examples/shaders/vkexample_frag.h build/examples/shaders/vkexample_comp.h \
	build/examples/shaders/mipdown_comp.h build/examples/shaders/hud_vert.h \
	build/examples/shaders/hud_frag.h \
	build/examples/shaders/vkexample_ro_vert.h build/examples/shaders/vkexample_ro_frag.h \
	build/examples/shaders/vkexample_rw_frag.h build/examples/shaders/vkexample_unsampled_frag.h

examples: $(EXAMPLES)

# A layer for the tests only (tests/crashlayer/crash.c): it crashes inside
# the call TRACEKIT_TEST_CRASH names, under the capture layer.
build/tests/crashlayer/libVkLayer_tracekit_test_crash.so: tests/crashlayer/crash.c | build/tests/crashlayer
	$(CC) $(WARN) $(CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $<

build/tests/crashlayer/VK_LAYER_TRACEKIT_test_crash.json: tests/crashlayer/VK_LAYER_TRACEKIT_test_crash.json | build/tests/crashlayer
	cp $< $@

build/tests/crashlayer:
	mkdir -p $@

# The per-call figure's program (tests/bench-layer.sh), and what a
# submission boundary costs a GPU (tests/bench-gaps.c, run by hand on a
# GPU); `make check` builds them too, so that they keep compiling.
BENCH_PROGS := build/tests/bench-calls build/tests/bench-gaps

build/tests/bench-calls: tests/bench-calls.c tests/bench-vk.h | build/tests
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) -o $@ $< -lvulkan

build/tests/bench-gaps: tests/bench-gaps.c tests/bench-vk.h | build/tests
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) -o $@ $< -lvulkan -pthread

build/tests:
	mkdir -p $@

build/examples/shaders/vkexample_%.h: examples/shaders/vkexample.% | build/examples/shaders
	glslangValidator -V --vn vkexample_$* -o $@ $<

# (--uniform-storage: the frame's uniforms in a storage buffer, readonly or not)
build/examples/shaders/vkexample_ro_%.h: examples/shaders/vkexample.% | build/examples/shaders
	glslangValidator -V -DFRAME_STORAGE_RO --vn vkexample_ro_$* -o $@ $<
build/examples/shaders/vkexample_rw_%.h: examples/shaders/vkexample.% | build/examples/shaders
	glslangValidator -V -DFRAME_STORAGE_RW --vn vkexample_rw_$* -o $@ $<
# (--anim-unsampled: the compute pattern declared, not sampled)
build/examples/shaders/vkexample_unsampled_%.h: examples/shaders/vkexample.% | build/examples/shaders
	glslangValidator -V -DANIM_UNSAMPLED --vn vkexample_unsampled_$* -o $@ $<

build/examples/shaders/mipdown_comp.h: examples/shaders/mipdown.comp | build/examples/shaders
	glslangValidator -V --vn mipdown_comp -o $@ $<

build/examples/shaders/hud_%.h: examples/shaders/hud.% | build/examples/shaders
	glslangValidator -V --vn hud_$* -o $@ $<

# Each program is its file over what the programs share: every other
# examples/*.c (common.c: errors, instance, device, buffers; scene.c:
# vkexample's cube, texture and matrices; window.c: its --present window
# and swapchain), in an archive, so that a program links only what it
# calls.  vkexample has its shaders, its own files examples/vkexample_*.c
# (vkexample.h) and lib/base/png.c besides.  vkthreads: threads that
# record and submit at once (headless, no shaders).
VKEXAMPLE_SRC := $(wildcard examples/vkexample_*.c)
EXAMPLE_LIB_SRC := $(filter-out $(patsubst build/%,%.c,$(EXAMPLE_PROGS)) $(VKEXAMPLE_SRC), \
	$(wildcard examples/*.c))
EXAMPLE_HDR := $(wildcard examples/*.h)
EXAMPLE_LIB := build/examples/libexamples.a

build/obj/examples/%.o: examples/%.c $(EXAMPLE_HDR)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) -c -o $@ $<

$(EXAMPLE_LIB): $(patsubst examples/%.c,build/obj/examples/%.o,$(EXAMPLE_LIB_SRC)) | build/examples
	rm -f $@
	ar rcs $@ $^

build/examples/vkexample: $(VKEXAMPLE_SRC) lib/base/png.c lib/base/png.h $(VKEXAMPLE_SHADERS)

build/examples/%: examples/%.c $(EXAMPLE_LIB) $(EXAMPLE_HDR) | build/examples
	$(CC) $(WARN) $(CHECK_WARN) $(CFLAGS) -Ibuild/examples/shaders -Ilib/base -o $@ \
		$(filter %.c,$^) $(EXAMPLE_LIB) $(EXAMPLE_LIBS)

build/examples build/examples/shaders:
	mkdir -p $@

.PHONY: examples
# --- end example Vulkan programs ---

# ------------------------------------------------------------------
# Fuzzing (clang's libFuzzer), one target per parser.

FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_LIB_SRC := $(filter-out lib/base/cli.c,$(LIB_SRC))
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))

# libtrace once with the fuzzing instrumentation, then each target links it;
# the text form reads Vulkan values by the schema, so the schema is fuzzed too
FUZZ_CFLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined
FUZZ_OBJ := $(call objs,build/fuzz,$(FUZZ_LIB_SRC)) build/fuzz/gen/vkschema_gen.o

build/fuzz/lib/%.o: lib/%.c $(LIB_HDR) build/gen/vkschema_cmds.h
	@mkdir -p $(@D)
	clang $(WARN) $(FUZZ_CFLAGS) $(INC) -c -o $@ $<

build/fuzz/gen/%.o: build/gen/%.c $(VK_GEN) $(LIB_HDR)
	@mkdir -p $(@D)
	clang $(WARN) $(FUZZ_CFLAGS) $(INC) -c -o $@ $<

build/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ) $(LIB_HDR) | build/fuzz
	clang $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined $(INC) -o $@ $< $(FUZZ_PROG_OBJ) \
		$(FUZZ_OBJ) $(LIBS)

# the record check of trace-replay --check: lib/replay over libvulkan (no
# instance is made, no driver loaded), and the messages' cli.c
FUZZ_REPLAY_OBJ := $(call objs,build/fuzz,$(REPLAY_SRC) lib/base/cli.c) build/fuzz/gen/vkcall_gen.o
build/fuzz/fuzz_check: $(FUZZ_REPLAY_OBJ)
build/fuzz/fuzz_check: FUZZ_PROG_OBJ := $(FUZZ_REPLAY_OBJ)
build/fuzz/fuzz_check: LIBS += -lvulkan

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

# the build in parallel, one job a core, unless make was given -j already
# (expanded in the recipe: only there does MAKEFLAGS hold -j)
CHECK_JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc))

check: deps-check
	$(MAKE) $(CHECK_JOBS) all $(UNITS) $(ASAN_PROGS) $(ASAN_UNITS) $(FUZZ_TARGETS) $(EXAMPLES) $(BENCH_PROGS)
	tests/run-units.sh $(UNITS) $(ASAN_UNITS)
	tests/fuzz/run.sh 10 $(FUZZ_TARGETS)
	tests/run-bats.sh tests/*.bats

bench: deps-bench all $(BENCH_PROGS)
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
