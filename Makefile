# btlayout: PGXS build
#
#   make && make install          build and install into the server found by pg_config
#   scripts/test.sh               the whole test suite on temporary clusters (see README)

MODULE_big = btlayout
OBJS = \
	src/handler.o \
	src/binops.o \
	src/bincmp.o \
	src/conflict.o \
	src/validate.o \
	src/build.o \
	src/build_parallel.o \
	src/spool.o \
	src/layout.o \
	src/page.o \
	src/relayout.o \
	src/wal.o \
	src/stats.o \
	src/checker.o \
	src/compare.o \
	src/search.o \
	src/recent.o \
	src/indexstate.o \
	src/upper.o \
	src/normkey.o \
	src/collhint.o \
	src/scan.o \
	src/scan_pg15.o \
	src/scan_pg18.o

EXTENSION = btlayout
DATA = sql/btlayout--1.0.sql sql/btlayout--1.0--1.1.sql sql/btlayout--1.1--1.2.sql sql/btlayout--1.2--1.3.sql sql/btlayout--1.3--1.4.sql sql/btlayout--1.4--1.5.sql sql/btlayout--1.5--1.6.sql sql/btlayout--1.6--1.7.sql

REGRESS = btlayout opclasses oracle layouts check queries arrays types search recent upper normkey normkey_libc collhint manyindexes bin sortsupport roles badinput update review

# make installcheck runs REGRESS against a running server (PGHOST, PGPORT,
# ...) where btlayout is installed, in a database made as scripts/test.sh
# makes it: UTF8 and the C locale, whatever the cluster's defaults (in a
# SQL_ASCII database oracle, types and bin fail)
REGRESS_OPTS = --encoding=UTF8 --no-locale

TAP_TESTS = 1

PG_CPPFLAGS = -I$(srcdir)/src

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Export only what the server looks up by name (btlayout.map): a new
# backend's dlopen() then resolves 266 symbols instead of 329, dropping 63
# of our own, the costliest (each looked up through every library of the
# server before ours), and internal calls go direct instead of through the
# PLT.  GNU ld (Linux) only.
ifeq ($(PORTNAME),linux)
SHLIB_LINK += -Wl,--version-script=$(srcdir)/btlayout.map
$(shlib): $(srcdir)/btlayout.map
endif

# The servers' PGXS builds track no header dependencies: every object is
# rebuilt when one of ours changes (a struct laid out differently in two
# objects is a crash, not a build error)
$(OBJS): $(wildcard $(srcdir)/src/*.h)

# The sortsupport test loads a test-only extension that make install does
# not install (make -C test/sortsupport install does); make installcheck
# leaves the test out, and says so, on a server without it
ifneq ($(filter installcheck,$(MAKECMDGOALS)),)
ifeq ($(wildcard $(datadir)/extension/btlayout_test_sortsupport.control),)
$(info sortsupport not run: test/sortsupport is not installed (make -C test/sortsupport install))
REGRESS := $(filter-out sortsupport,$(REGRESS))
endif
endif

# Unit tests (plain C, no server): scripts/test.sh runs them.  They link
# libpgport_shlib, which every server's development files have: the
# wheels' libpgport.a is not position-independent, and gcc here builds
# executables PIE.  The layouts:
test/layout_test: test/layout_test.c src/layout.c src/layout.h
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ test/layout_test.c src/layout.c -L$(libdir) -L$(pkglibdir) -lpgport_shlib -lm
# The compare core, at every instruction set this machine has:
test/bincmp_test: test/bincmp_test.c src/bincmp.c src/bincmp.h
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ test/bincmp_test.c src/bincmp.c -L$(libdir) -L$(pkglibdir) -lpgport_shlib
# Page planning, on synthetic pages:
test/page_test: test/page_test.c src/page.c src/layout.c src/btlayout.h src/layout.h
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ test/page_test.c src/page.c src/layout.c -L$(libdir) -L$(pkglibdir) -lpgport_shlib -lm
# The layouts' walks confirmed over pages in every placement:
test/walk_test: test/walk_test.c src/layout.c src/walk.h src/btlayout.h src/layout.h
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ test/walk_test.c src/layout.c -L$(libdir) -L$(pkglibdir) -lpgport_shlib -lm
EXTRA_CLEAN = test/layout_test test/bincmp_test test/page_test test/walk_test

# Print the regression test list for scripts/test.sh
print-regress:
	@echo $(REGRESS)
.PHONY: print-regress
