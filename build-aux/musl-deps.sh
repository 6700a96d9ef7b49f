#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds the hook's libraries (zlib, libelf, libbpf, libseccomp)
# against musl, from the distribution's own source packages with its patches,
# into PREFIX, with a gcc specs file and a meson native file that use them:
#
#   build-aux/musl-deps.sh PREFIX
#   meson setup build-musl --native-file PREFIX/native.ini
#
# Why musl: glibc's startup asks the CPU for its features and caches some 70
# times with CPUID, which a virtual machine traps (7.6 us each here, more in
# confidential VMs): half a millisecond of every run of a static glibc
# binary, and the hook runs twice per container start (meson.build).
#
# A complete PREFIX is kept as it is: remove it to build newer sources.
#
# Needs: gcc, make, pkg-config, gperf, dpkg-dev, musl-dev, and apt-get
# reaching the distribution's source index. Prints the prefix's state and
# exits 0 when PREFIX is already complete; exits 77 (what test harnesses
# count as skipped) when apt-get cannot reach the sources, 1 when a tool is
# missing or anything else fails; saying why.
set -euo pipefail

PREFIX=${1:?usage: build-aux/musl-deps.sh PREFIX}
PACKAGES="zlib elfutils libbpf libseccomp"
ARCH=$(uname -m)
MUSL_LIB=/usr/lib/$ARCH-linux-musl
MUSL_INC=/usr/include/$ARCH-linux-musl

die() {
	echo "musl-deps: $*" >&2
	exit 1
}

# Complete, and built for this path (the specs and native file name it).
if [ -f "$PREFIX/.complete" ] && grep -qF "$(cd "$PREFIX" && pwd)/musl.specs" "$PREFIX/native.ini" 2>/dev/null; then
	echo "musl-deps: $PREFIX is complete: $(tr '\n' ' ' <"$PREFIX/.complete")"
	exit 0
fi
rm -f "$PREFIX/.complete"
for tool in gcc make pkg-config gperf dpkg-source apt-get; do
	command -v "$tool" >/dev/null || die "$tool is missing: apt-get install gcc make pkg-config gperf dpkg-dev"
done
[ -f "$MUSL_LIB/libc.a" ] && [ -f "$MUSL_LIB/rcrt1.o" ] ||
	die "no musl in $MUSL_LIB: apt-get install musl-dev"

mkdir -p "$PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
WORK=$(mktemp -d "$PREFIX/.work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LOG=$WORK/log
: >"$LOG"

# step NAME COMMAND...: runs a build step; on failure shows its log's end.
step() {
	local name=$1
	shift
	"$@" >>"$LOG" 2>&1 || {
		tail -30 "$LOG" >&2
		die "$name failed"
	}
}

# fetch NAME COMMAND...: a step that reaches the network. When apt-get says
# it could not reach the archive (or has no source index, which an offline
# update leaves) there is nothing to build from: a skip. Anything else fails.
fetch() {
	local name=$1 mark
	shift
	mark=$(wc -l <"$LOG")
	"$@" >>"$LOG" 2>&1 && return
	tail -10 "$LOG" >&2
	if tail -n +"$((mark + 1))" "$LOG" | grep -qE "Failed to fetch|Temporary failure resolving|Could not resolve|Unable to connect|Could not connect|You must put some 'deb-src' URIs"; then
		echo "musl-deps: $name failed: no sources to build from (exit 77)" >&2
		exit 77
	fi
	die "$name failed"
}

# --- The toolchain: gcc with musl's headers and libraries instead of glibc's ---
# The kernel's UAPI headers (linux/, asm/), which musl does not ship, come
# from the distribution's, without the rest of /usr/include (glibc's).
mkdir -p "$PREFIX/kernel-include" "$PREFIX/lib/pkgconfig" "$PREFIX/include"
ln -sfn /usr/include/linux "$PREFIX/kernel-include/linux"
ln -sfn /usr/include/asm-generic "$PREFIX/kernel-include/asm-generic"
ln -sfn "/usr/include/$(gcc -print-multiarch)/asm" "$PREFIX/kernel-include/asm"
# As musl's own musl-gcc.specs, and static-pie (rcrt1.o, no interpreter).
cat >"$PREFIX/musl.specs" <<EOF
%rename cpp_options old_cpp_options

*cpp_options:
-nostdinc -isystem $MUSL_INC -isystem include%s -idirafter $PREFIX/kernel-include %(old_cpp_options)

*cc1:
%(cc1_cpu) -nostdinc -isystem $MUSL_INC -isystem include%s -idirafter $PREFIX/kernel-include

*link_libgcc:
-L$MUSL_LIB -L .%s

*libgcc:
libgcc.a%s %:if-exists(libgcc_eh.a%s)

*startfile:
%{static-pie:$MUSL_LIB/rcrt1.o;!shared:$MUSL_LIB/Scrt1.o} $MUSL_LIB/crti.o crtbeginS.o%s

*endfile:
crtendS.o%s $MUSL_LIB/crtn.o

*link:
%{static-pie:-static -pie --no-dynamic-linker -z text;:-dynamic-linker /lib/ld-musl-$ARCH.so.1} -nostdlib %{shared:-shared} %{static:-static} %{rdynamic:-export-dynamic}
EOF
CC="gcc -specs=$PREFIX/musl.specs"
echo 'int main(void) { return 0; }' >"$WORK/t.c"
$CC -static-pie -fPIE -o "$WORK/t" "$WORK/t.c" && "$WORK/t" || die "gcc cannot build a static-pie musl binary with $PREFIX/musl.specs"
export CC CFLAGS="-O2 -fPIE -g"

# --- Sources: the distribution's, fetched through a private apt state ---
# The host's package sources, as source sources, in a list of our own: the
# host's apt configuration is left as it was.
APT=$WORK/apt
mkdir -p "$APT/lists/partial" "$APT/parts" "$APT/cache/archives/partial"
: >"$APT/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && sed -n 's/^deb \(.*\)/deb-src \1/p' "$f" >>"$APT/sources.list"
done
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$APT/parts/$(basename "$f")"
done
APT_OPTS=(-o "Dir::Etc::SourceList=$APT/sources.list" -o "Dir::Etc::SourceParts=$APT/parts"
	-o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o "Debug::NoLocking=1" -qq)
echo "musl-deps: fetching the sources of: $PACKAGES"
fetch "apt-get update (source index)" apt-get "${APT_OPTS[@]}" update
mkdir -p "$WORK/src"
# The newest version of each; where a mirror lacks it (security archives are
# not always mirrored with their sources), the release's own.
. /etc/os-release
CODENAME=${VERSION_CODENAME:?/etc/os-release names no VERSION_CODENAME}
for pkg in $PACKAGES; do
	(cd "$WORK/src" && { apt-get "${APT_OPTS[@]}" source "$pkg" >>"$LOG" 2>&1 ||
		fetch "apt-get source $pkg" apt-get "${APT_OPTS[@]}" source "$pkg/$CODENAME"; }) ||
		exit
done
src() { find "$WORK/src" -maxdepth 1 -type d -name "$1-*" | head -1; }
versions() { (cd "$WORK/src" && ls -- *.dsc) | sed 's/\.dsc$//'; }

echo "musl-deps: building into $PREFIX"
# zlib
(cd "$(src zlib)" && step zlib ./configure --static --prefix="$PREFIX" &&
	step zlib make -j"$(nproc)" && step zlib make install)

# libelf (elfutils): only the library; configure looks for argp, fts and
# obstack, which only the tools use, so empty stand-ins satisfy its checks.
mkdir -p "$WORK/stub"
for lib in argp:argp_parse fts:fts_close obstack:_obstack_free; do
	echo "void ${lib#*:}(void) {}" >"$WORK/stub/${lib%%:*}.c"
	$CC -c -o "$WORK/stub/${lib%%:*}.o" "$WORK/stub/${lib%%:*}.c"
	ar rc "$WORK/stub/lib${lib%%:*}.a" "$WORK/stub/${lib%%:*}.o"
done
(cd "$(src elfutils)" &&
	step "elfutils configure" env CPPFLAGS="-I$PREFIX/include" LDFLAGS="-L$PREFIX/lib -L$WORK/stub" \
		./configure --prefix="$PREFIX" --disable-debuginfod --disable-libdebuginfod \
		--without-bzlib --without-lzma --without-zstd &&
	step libelf make -j"$(nproc)" -C libelf libelf.a &&
	cp libelf/libelf.a "$PREFIX/lib/" && cp libelf/libelf.h libelf/gelf.h libelf/nlist.h "$PREFIX/include/" &&
	sed -e "s|^prefix=.*|prefix=$PREFIX|" -e "s|^exec_prefix=.*|exec_prefix=$PREFIX|" \
		-e "s|^libdir=.*|libdir=$PREFIX/lib|" -e "s|^includedir=.*|includedir=$PREFIX/include|" \
		config/libelf.pc >"$PREFIX/lib/pkgconfig/libelf.pc")

# libbpf
(cd "$(src libbpf)/src" &&
	step libbpf make -j"$(nproc)" BUILD_STATIC_ONLY=1 EXTRA_CFLAGS="$CFLAGS -I$PREFIX/include" \
		PREFIX="$PREFIX" LIBDIR="$PREFIX/lib" install)

# libseccomp
(cd "$(src libseccomp)" &&
	step "libseccomp configure" ./configure --prefix="$PREFIX" --enable-static --disable-shared &&
	step libseccomp make -j"$(nproc)" -C src && step libseccomp make -C src install &&
	step libseccomp make -C include install &&
	cp libseccomp.pc "$PREFIX/lib/pkgconfig/")

cat >"$PREFIX/native.ini" <<EOF
# meson setup BUILD --native-file $PREFIX/native.ini: the hook against musl
[binaries]
c = ['gcc', '-specs=$PREFIX/musl.specs']

[properties]
pkg_config_libdir = ['$PREFIX/lib/pkgconfig']
EOF
versions >"$PREFIX/.complete"
echo "musl-deps: done: $(tr '\n' ' ' <"$PREFIX/.complete")"
