# moat — build.  `make` builds build/moat; `make SAN=1` builds the ASan+UBSan
# variant into build-san/; `make check` runs the whole test suite;
# `make install` (PREFIX=/usr/local, DESTDIR) installs the binary, libmoat.so
# with its header and pkg-config file, the Python module and moat(1).
# Every .c under src/ except src/cli/ is part of libmoat; src/cli/ is the
# thin command-line front end.

CC      ?= cc
SAN     ?= 0
ifeq ($(SAN),1)
BUILD   ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD   ?= build
SANFLAGS =
endif

PKGS      := libseccomp jansson
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# Linked statically: moat starts before every sandboxed command, and the
# dynamic loader's work for two libraries is a visible part of that start.
PKG_DYNLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lseccomp -ljansson)
PKG_LIBS   := -Wl,-Bstatic $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lseccomp -ljansson) -Wl,-Bdynamic

WARN = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wformat=2 -Wno-format-nonliteral -Wconversion -Wno-sign-conversion -Wvla \
       -Wundef -Wpointer-arith -Wcast-align -Wwrite-strings -Wimplicit-fallthrough
# -Os: as fast as -O2 here at start-up (moat's run is system calls more
# than code; 4.69 against 4.73 ms for strict, by alternation), and 128 kB
# less of the static binary's text resident in the supervisor
# (docs/performance.md, memory).
CFLAGS ?= -Os -g
# -ffunction-sections: each function its own input section, so the link can
# place the code a run touches together (src/link/hot.ld, below).
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -fvisibility=hidden \
             -ffunction-sections -fPIC -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Isrc -Iinclude $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS) -Wl,-z,relro,-z,now

LIB_SRC  := $(sort $(wildcard src/*/*.c))
LIB_SRC  := $(filter-out src/cli/%,$(LIB_SRC))
CLI_SRC  := $(wildcard src/cli/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/seccomp_prebuilt.o
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# Test helpers run inside sandboxes: built without sanitizers (their
# runtime wants memory maps and /proc the sandbox may refuse), static where
# the libc allows, so they do not depend on the sandbox's library view.
HELPER_SRC := $(wildcard tests/helpers/*.c)
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/helpers/%)
HELPER_CFLAGS = -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Isrc

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
# The git revision, for `moat --version`: from git when this is a checkout
# (only then: a copy inside some other repository must not take its
# revision), else from .git-revision (written by .ci/run into its copy),
# else "unknown".
REVISION := $(shell if [ -e .git ]; then git describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null; \
	    elif [ -f .git-revision ]; then head -c 64 .git-revision; fi)
REVISION := $(or $(REVISION),unknown)

# Where `make install` puts things.  PYTHON's own version names the module
# directory Debian's python3 searches (/usr/local/lib/python3.N/dist-packages).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PYTHON     ?= $(firstword $(wildcard /usr/bin/python3) python3)
PYTHONDIR  ?= $(LIBDIR)/python$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)/dist-packages
INSTALL    ?= install
SOVERSION  := 0

.PHONY: all clean check demo bench bench-load bench-net bench-startup evaluation conformance unit-tests helpers fuzz-toml format install uninstall man
all: $(BUILD)/moat $(BUILD)/libmoat.a $(BUILD)/libmoat.so $(BUILD)/moat.1 $(BUILD)/moat.pc helpers unit-tests

# Made afresh: `ar r` into an old archive keeps the members of files that
# are gone (a renamed source), which then clash at link time.
$(BUILD)/libmoat.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# The shared library exports only what include/moat/moat.h marks MOAT_EXPORT.
$(BUILD)/libmoat.so: $(LIB_OBJ)
	$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,libmoat.so.0 -o $@ $^ $(PKG_DYNLIBS)

# The moat binary is a static PIE (STATIC=1, the default): it starts before
# every sandboxed command, and the dynamic loader's work (opening libc,
# relocating, binding with -z now) cost ~0.3-0.5 ms per run, and ~0.6 MiB
# of resident memory, measured by alternation (docs/performance.md).  A
# static glibc must not load NSS modules (a module brings the host's
# shared libc with it: Debian's "passwd: files systemd" crashed such a
# moat, tests/blackbox/nss.sh), so moat makes no passwd lookup through
# glibc (util/account.h runs getent for what /etc/passwd lacks) and keeps
# getaddrinfo to the built-in files and dns (util/nss.h).  STATIC=0 links
# it dynamically.  ASan cannot be linked statically, so SAN=1 stays
# dynamic.  glibc's link warning about getaddrinfo, and only it, is
# dropped from the link's output.  Its relative relocations are packed
# (DT_RELR, binutils 2.38 and glibc 2.36): the 3400 RELA entries a static
# PIE applies to itself at start were an 80 KB segment read on every run,
# resident for the whole run; packed they are 700 bytes
# (docs/performance.md, section 4).
#
# The code and read-only data a run touches are placed first
# (src/link/hot.ld, written by scripts/hot-text, added to the default
# script with INSERT): the kernel maps a binary's cached pages 64 KiB
# around each one touched, and with that code spread over the whole text
# nearly all of it was resident (docs/performance.md, section 4).  HOT_LD=
# links without it.
, := ,
STATIC ?= 1
HOT_LD ?= src/link/hot.ld
MOAT_LINK := $(PKG_LIBS)
ifeq ($(STATIC)$(SAN),10)
MOAT_LINK := -static-pie -Wl,-z,pack-relative-relocs $(if $(HOT_LD),-Wl$(,)-T$(,)$(HOT_LD)) $(PKG_DYNLIBS)
endif
NSS_WARNING := in statically linked applications requires at runtime the shared libraries
# The link's libraries as a stamp, as the objects' flags are (below): make
# STATIC=0 relinks a static moat.
LINK_STAMP := $(BUILD)/.moat-link
$(LINK_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(MOAT_LINK)' | cmp -s - $@ 2>/dev/null || echo '$(MOAT_LINK)' >$@

$(BUILD)/moat: $(CLI_OBJ) $(BUILD)/libmoat.a $(LINK_STAMP) $(HOT_LD)
	@$(if $(findstring s,$(firstword -$(MAKEFLAGS))),:,echo) "$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libmoat.a $(MOAT_LINK)"; \
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libmoat.a $(MOAT_LINK) 2>$@.ld; rc=$$?; \
	awk -v w='$(NSS_WARNING)' 'index($$0, w) { held = ""; next } \
		held != "" { print held } { held = /: in function `/ ? $$0 : ""; if (held == "") print } \
		END { if (held != "") print held }' $@.ld >&2; rm -f $@.ld; exit $$rc

# The seccomp filters, compiled once at build time (src/kernel/seccomp.c).
GEN_SRC := tools/gen-seccomp.c src/kernel/seccomp.c src/util/err.c src/util/mem.c
$(BUILD)/gen/gen-seccomp: $(GEN_SRC) src/kernel/seccomp.h
	@mkdir -p $(@D)
	@echo "  GEN     $@"
	@$(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -DMOAT_SECCOMP_NO_PREBUILT -o $@ $(GEN_SRC) $(ALL_LDFLAGS) $(PKG_LIBS)

$(BUILD)/gen/seccomp_prebuilt.c: $(BUILD)/gen/gen-seccomp
	@$< >$@.tmp && mv $@.tmp $@

$(BUILD)/gen/seccomp_prebuilt.o: $(BUILD)/gen/seccomp_prebuilt.c
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Objects depend on the flags they were built with: changing CFLAGS or SAN
# rebuilds them instead of linking stale ones.
FLAGS_STAMP := $(BUILD)/.cflags
$(FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(ALL_CFLAGS)' | cmp -s - $@ 2>/dev/null || echo '$(ALL_CFLAGS)' >$@
.PHONY: FORCE
FORCE:

# Only main.o carries the revision, and it is rebuilt when the revision moves.
REVISION_STAMP := $(BUILD)/.revision
$(REVISION_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(REVISION)' | cmp -s - $@ 2>/dev/null || echo '$(REVISION)' >$@
$(BUILD)/src/cli/main.o: $(REVISION_STAMP)
$(BUILD)/src/cli/main.o: REVISION_DEF = -DMOAT_REVISION='"$(REVISION)"'

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -DMOAT_VERSION='"$(VERSION)"' $(REVISION_DEF) -c -o $@ $<

# A test may link helper objects of tests/unit (UNIT_OBJ) before libmoat.a,
# and a fake there replaces the library object that defines the same
# symbols; UNIT_LDFLAGS are its own link flags.
$(BUILD)/tests/%: tests/unit/%.c tests/unit/tap.h $(BUILD)/libmoat.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Wno-write-strings -Itests/unit -o $@ $< $(UNIT_OBJ) $(BUILD)/libmoat.a $(ALL_LDFLAGS) \
		$(UNIT_LDFLAGS) $(PKG_LIBS)

$(BUILD)/tests/%.o: tests/unit/%.c tests/unit/%.h $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -Itests/unit -c -o $@ $<

# The verdict matrix plans for hosts this kernel need not be: a fake
# Landlock of any ABI (tests/unit/fake_landlock.c), and access(2) wrapped so
# that the test can hide the external backends' tools.
$(BUILD)/tests/test_verdict_matrix: UNIT_OBJ = $(BUILD)/tests/fake_landlock.o
$(BUILD)/tests/test_verdict_matrix: UNIT_LDFLAGS = -Wl,--wrap=access
$(BUILD)/tests/test_verdict_matrix: $(BUILD)/tests/fake_landlock.o
# The seccomp programs run by a BPF interpreter (tests/unit/bpf_interp.c).
$(BUILD)/tests/test_seccomp_interp: private UNIT_OBJ = $(BUILD)/tests/bpf_interp.o
$(BUILD)/tests/test_seccomp_interp: $(BUILD)/tests/bpf_interp.o
$(BUILD)/tests/test_seccomp_interp: UNIT_OBJ = $(BUILD)/tests/bpf_interp.o
$(BUILD)/tests/test_seccomp_interp: $(BUILD)/tests/bpf_interp.o
# The kafel policy evaluated against the same programs.
$(BUILD)/tests/test_seccomp_kafel: UNIT_OBJ = $(BUILD)/tests/bpf_interp.o
$(BUILD)/tests/test_seccomp_kafel: $(BUILD)/tests/bpf_interp.o

$(BUILD)/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(CC) $(HELPER_CFLAGS) -static -o $@ $< 2>/dev/null || $(CC) $(HELPER_CFLAGS) -o $@ $<
# jsonget runs beside the tests, never in a sandbox: jansson, dynamic.
$(BUILD)/helpers/jsonget: tests/helpers/jsonget.c
	@mkdir -p $(@D)
	$(CC) $(HELPER_CFLAGS) -o $@ $< $(PKG_DYNLIBS)

# moat(1) comes from the binary itself: `moat help man` prints it from the
# tables --help is made of.
$(BUILD)/moat.1: $(BUILD)/moat
	$(BUILD)/moat help man >$@.tmp && mv $@.tmp $@
man: $(BUILD)/moat.1

# The pkg-config file carries the installed paths: rewritten when they change.
PC_LINES = 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' 'Name: moat' \
	   'Description: run an untrusted command in the strongest sandbox the host gives' \
	   'Version: $(VERSION)' 'Libs: -L$${libdir} -lmoat' 'Cflags: -I$${includedir}'
$(BUILD)/moat.pc: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' $(PC_LINES) | cmp -s - $@ 2>/dev/null || printf '%s\n' $(PC_LINES) >$@

# The installed files, each listed once: install writes them, uninstall
# removes exactly them (and the directories only moat uses).
INSTALLED = $(BINDIR)/moat $(LIBDIR)/libmoat.so.$(VERSION) $(LIBDIR)/libmoat.so.$(SOVERSION) \
	    $(LIBDIR)/libmoat.so $(INCLUDEDIR)/moat/moat.h $(PKGCONFIGDIR)/moat.pc \
	    $(PYTHONDIR)/moat.py $(MANDIR)/man1/moat.1

install: $(BUILD)/moat $(BUILD)/libmoat.so $(BUILD)/moat.1 $(BUILD)/moat.pc
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/moat \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(PYTHONDIR) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 0755 $(BUILD)/moat $(DESTDIR)$(BINDIR)/moat
	$(INSTALL) -m 0755 $(BUILD)/libmoat.so $(DESTDIR)$(LIBDIR)/libmoat.so.$(VERSION)
	ln -sf libmoat.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmoat.so.$(SOVERSION)
	ln -sf libmoat.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libmoat.so
	$(INSTALL) -m 0644 include/moat/moat.h $(DESTDIR)$(INCLUDEDIR)/moat/moat.h
	$(INSTALL) -m 0644 $(BUILD)/moat.pc $(DESTDIR)$(PKGCONFIGDIR)/moat.pc
	$(INSTALL) -m 0644 bindings/python/moat.py $(DESTDIR)$(PYTHONDIR)/moat.py
	$(INSTALL) -m 0644 $(BUILD)/moat.1 $(DESTDIR)$(MANDIR)/man1/moat.1
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rm -f $(DESTDIR)$(PYTHONDIR)/__pycache__/moat.*.pyc
	-rmdir $(DESTDIR)$(INCLUDEDIR)/moat 2>/dev/null
	-rmdir $(DESTDIR)$(PYTHONDIR)/__pycache__ 2>/dev/null
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

unit-tests: $(UNIT_BIN)
helpers: $(HELPER_BIN)

# The whole suite: builds both variants and runs every test in each.
check:
	./tests/run-all

# Build moat and run a command under the default profile, showing the report.
demo:
	./scripts/demo

# Benchmarks against bare exec and the peers (not part of `check`); then
# docs/evaluation.md, which quotes them.
bench:
	./bench/run
	./tools/gen-evaluation.py >docs/evaluation.md

# docs/evaluation.md from docs/conformance.json and docs/performance.md
# (tests/repo/evaluation.sh checks it is current).
evaluation:
	./tools/gen-evaluation.py >docs/evaluation.md

# Only the load test of `make bench` (5,000 runs in a row, 500 at once, then
# what they left behind): bench/results/load.json; BENCH_QUICK=1 for fewer.
bench-load:
	./bench/run load

# Only the network fence of `make bench` (connect latency, bulk throughput,
# start-up, direct against fenced): bench/results/netfence.json.
bench-net:
	./bench/run net

# Only start-up of `make bench`: every backend beside its tool alone, bare
# exec and the namespace floor, by alternating rounds; the targets' verdicts
# on stderr, bench/results/startup*.json.  BENCH_QUICK=1: a smoke run.
bench-startup:
	./bench/run startup

# The escape suite: every probe against every installed backend, as root and
# as uid 65534 (when run as root); writes docs/conformance.md and .json.
conformance: $(BUILD)/moat
	ROOT=$(CURDIR) BUILD=$(abspath $(BUILD)) MOAT=$(abspath $(BUILD)/moat) /usr/bin/python3 tests/escape/run-conformance --out-dir docs
	./tools/gen-evaluation.py >docs/evaluation.md

fuzz-toml:
	./tests/fuzz/run-fuzz-toml $(FUZZ_SECONDS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-san build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
