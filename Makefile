# Build, then install, as two steps: `make && sudo make install`.
# Variables: PREFIX, DESTDIR, FSCK_LINKS (scripts/install.sh), VERSION,
# DATE, GO (scripts/build.sh), BUILDDIR (both).
BUILDDIR ?= build

.PHONY: all build install test clean
all: build

build:
	BUILDDIR="$(BUILDDIR)" scripts/build.sh

install:
	BUILDDIR="$(BUILDDIR)" scripts/install.sh

test:
	go test ./...

clean:
	rm -rf "$(BUILDDIR)"
