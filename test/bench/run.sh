#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The benchmarks of issue 6, in one command (root):
#
#   sudo ./test/bench/run.sh
#
# 1. per-access cost of /proc/sys (read; write inside `unshare -n`) from an
#    unguarded cgroup, one with a trivial return-1 program, and guarded ones
#    (1, 100, 10,000 rules), interleaved;
# 2. `sysctl-guard hook` latency and peak RSS (no policy, 100 and 10,000
#    rules; new and already-used policy) against `true`, with a breakdown,
#    and `runc run` of a busybox `true` with and without the hook;
# 3. kernel memory per guard (20 and 10,000 rules);
# 4. 500 cgroups guarded at once: attach p50/p99, per-access cost in one.
#
# Prints a table of ratios measured in this run (medians of per-round paired
# ratios; variants interleaved). Knobs (environment): ROUNDS (default 15),
# ITERS (accesses per sample, 50000), HOOK_ROUNDS (2 x ROUNDS), SCALE_N
# (500), SCALE_BUDGET (seconds, 300), N10K (hook runs with 10,000 rules, 2;
# raised to HOOK_ROUNDS when one run takes under 5 s), KEEP_RAW=DIR (copy the
# raw samples there), BIG_RULES (10000; smaller only to smoke-test the script).
# Nothing host-global is written: writes happen in a fresh network namespace;
# every cgroup, pin, process and container made here is removed on exit.
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# The binary to deploy: the musl build's, where there is one (meson.build).
if [ -z "${BUILD:-}" ]; then
	BUILD=$ROOT/build
	[ -f "$ROOT/build-musl/build.ninja" ] && BUILD=$ROOT/build-musl
fi
ROUNDS=${ROUNDS:-15}
ITERS=${ITERS:-50000}
SCALE_N=${SCALE_N:-500}
SCALE_BUDGET=${SCALE_BUDGET:-300}
N10K=${N10K:-2}
HOOK_ROUNDS=${HOOK_ROUNDS:-$((ROUNDS * 2))} # hook runs are cheap and the process floor is noisy
BIG=${BIG_RULES:-10000} # only to smoke-test this script quickly: the "10k" rows then have BIG rules
T_START=$(date +%s)

die() { echo "bench: $*" >&2; exit 1; }
log() { printf '[%4ds] %s\n' $(($(date +%s) - T_START)) "$*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root (sudo $0)"
for tool in cc clang bpftool python3 runc; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done

# --- build: the hook through the existing build dir, our helpers into a temp dir ---
log "building with ninja -C $BUILD"
if ! ninja -C "$BUILD" >/tmp/sg-bench-ninja.$$ 2>&1; then
	tail -5 /tmp/sg-bench-ninja.$$ >&2
	if [ -x "$BUILD/sysctl-guard" ]; then
		log "WARNING: ninja failed (see above); benchmarking the existing $BUILD/sysctl-guard"
		BUILD_NOTE="ninja FAILED; existing binary used"
	else
		rm -f /tmp/sg-bench-ninja.$$
		die "ninja failed and there is no $BUILD/sysctl-guard"
	fi
else
	BUILD_NOTE="ninja ok"
fi
rm -f /tmp/sg-bench-ninja.$$
[ -x "$BUILD/sysctl-guard" ] || die "no $BUILD/sysctl-guard"

WORK=$(mktemp -d /tmp/sg-bench.XXXXXX)
BIN=$WORK/bin
mkdir -p "$BIN" "$WORK/raw" "$WORK/profiles"
SG=$BIN/sysctl-guard
CG2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || die "no cgroup2 mount in /proc/self/mountinfo"
PARENT=""
PIN_DIR=/sys/fs/bpf/sg-bench-$$
PINS=/sys/fs/bpf/sysctl-guard
PIDS=()
CONTAINERS=()
TRIVIAL_CGS=()

cleanup() {
	local pid id dir
	trap - EXIT INT TERM
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	for id in "${CONTAINERS[@]}"; do
		runc delete --force "$id" >/dev/null 2>&1
		# poststop by hand: removes any guard pinned for this container id
		printf '{"ociVersion":"1.0.2","id":"%s","status":"stopped","pid":0,"bundle":"%s"}' \
			"$id" "$WORK" | "$SG" hook poststop >/dev/null 2>&1
	done
	if [ -n "$PARENT" ] && [ -d "$PARENT" ]; then
		for dir in "${TRIVIAL_CGS[@]}"; do
			bpftool cgroup detach "$dir" sysctl pinned "$PIN_DIR/trivial" 2>/dev/null
		done
		while read -r dir; do
			"$SG" detach --cgroup "$dir" >/dev/null 2>&1
			rmdir "$dir" 2>/dev/null
		done < <(find "$PARENT" -mindepth 1 -depth -type d)
		rmdir "$PARENT" 2>/dev/null || echo "bench: WARNING: could not remove $PARENT" >&2
	fi
	rm -rf "$PIN_DIR"
	# The many policies made here: gc frees those no guard uses (a policy
	# that is needed again is made again in milliseconds), the preloaded one
	# once its mark is gone.
	rm -f "$PINS"/policies/*/preloaded:profile:b10kpre
	"$SG" gc --min-age 0 >/dev/null 2>&1
	if [ -n "${KEEP_RAW:-}" ]; then
		mkdir -p "$KEEP_RAW" && cp -r "$WORK/raw/." "$KEEP_RAW/"
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A private copy: others may relink the build dir's binary while this runs.
cp "$BUILD/sysctl-guard" "$SG" || die "cannot copy $BUILD/sysctl-guard"
# The breakdown times bpf(2) through LD_PRELOAD, which reaches only a
# dynamically linked glibc binary (the shim is built against glibc): its
# runs use such a twin, this build's or else the glibc build's.
SHIMMED=$SG
[ "$BUILD" != "$ROOT/build" ] && ninja -C "$ROOT/build" sysctl-guard-dynamic >/dev/null 2>&1
for twin in "$BUILD/sysctl-guard-dynamic" "$ROOT/build/sysctl-guard-dynamic"; do
	if [ -x "$twin" ] && ldd "$twin" 2>/dev/null | grep -q 'libc\.so\.6'; then
		SHIMMED=$BIN/sysctl-guard-dynamic
		cp "$twin" "$SHIMMED" || die "cannot copy $twin"
		break
	fi
done
SG_BUILT=$(date -r "$BUILD/sysctl-guard" +%H:%M:%S)

log "compiling the helpers into $BIN"
CFLAGS="-O2 -Wall -Wextra -Werror"
cc $CFLAGS -o "$BIN/access_bench" "$HERE/access_bench.c" || die "cannot build access_bench"
cc $CFLAGS -o "$BIN/spawn_time" "$HERE/spawn_time.c" || die "cannot build spawn_time"
cc $CFLAGS -nostdlib -static -fno-stack-protector -o "$BIN/noop_hook" "$HERE/noop_hook.c" ||
	die "cannot build noop_hook"
cc $CFLAGS -o "$BIN/bpf_stats" "$HERE/bpf_stats.c" || die "cannot build bpf_stats"
cc $CFLAGS -o "$BIN/floor" "$HERE/floor.c" || die "cannot build floor"
cc $CFLAGS -shared -fPIC -o "$BIN/bpf_timing.so" "$HERE/bpf_timing.c" -ldl ||
	die "cannot build bpf_timing.so"
clang -O2 -g -target bpf -I"/usr/include/$(cc -print-multiarch)" \
	-c "$HERE/trivial.bpf.c" -o "$BIN/trivial.bpf.o" || die "cannot build trivial.bpf.o"
ST=$BIN/spawn_time
GEN="python3 $HERE/gen_policy.py"

PARENT=$(mktemp -d "$CG2/sg-bench.XXXXXX") || die "cannot create a cgroup under $CG2"
new_cg() { mkdir "$PARENT/$1" && echo "$PARENT/$1"; }
cgid() { stat -c %i "$1"; }
# pdir CGROUP: where the tables of the cgroup's policy are pinned
pdir() {
	echo "$PINS/policies/$("$SG" status --cgroup "$1" --json 2>/dev/null |
		grep -o '"policy_hash": "[0-9a-f]*"' | cut -d'"' -f4)"
}

# attach_timed LABEL CGROUP POLICY: `sysctl-guard attach`, timed into raw/attach.txt.
attach_timed() {
	local out
	out=$("$ST" -e "$WORK/attach.err.$$" "$1" -- "$SG" attach --cgroup "$2" --policy "$3") || return 1
	cat "$WORK/attach.err.$$" >>"$WORK/attach.err"
	echo "$out" >>"$WORK/raw/attach.txt"
	[ "$(echo "$out" | awk '{print $4}')" = 0 ] || {
		tail -3 "$WORK/attach.err.$$" >&2
		return 1
	}
}

# Whichever run loads the node's program says what the verifier did.
export SYSCTL_GUARD_VERIFIER_STATS=1
# The node: a private config (no baseline) whose profiles_dir we fill.
export SYSCTL_GUARD_CONFIG=$WORK/node.json
# Debug lines on stderr: they say whether a hook found its policy by its
# inputs, which the hook runs below check (a few lines, in every variant).
echo '{ "version": 1, "profiles_dir": "'"$WORK"'/profiles", "log": {"level": "debug", "syslog": false} }' \
	>"$SYSCTL_GUARD_CONFIG"

log "generating policies"
$GEN 1 "$WORK/p1r.json" --only read
$GEN 1 "$WORK/p1w.json" --only write
$GEN 20 "$WORK/p20.json"
$GEN 100 "$WORK/p100.json"
$GEN "$BIG" "$WORK/p10k.json"
for p in p1r p1w p20 p100 p10k; do
	# every policy decides the accessed names by a rule, never by its default
	case $p in p1w) names="net.core.somaxconn" ;; p1r) names="kernel.ostype" ;;
	*) names="kernel.ostype net.core.somaxconn" ;; esac
	[ $p = p10k ] && continue # explain parses 10k rules in tens of seconds; checked below by access
	for n in $names; do
		"$SG" explain "$WORK/$p.json" "$n" --write 4096 | grep -q "rule:   rules\[" ||
			die "$p.json: $n is not decided by a rule"
	done
done
cp "$WORK/p100.json" "$WORK/profiles/b100.json"
cp "$WORK/p10k.json" "$WORK/profiles/b10k.json"
# Preloaded (`sysctl-guard preload`) before its first container: a profile of its own.
$GEN "$BIG" "$WORK/profiles/b10kpre.json" --nonce "pre$$"

# ---------------------------------------------------------------------------
log "1. per-access cost: setting up cgroups (the 10,000-rule attach parses for a while)"
CG_NONE=$(new_cg unguarded)
CG_TRIV=$(new_cg trivial)
CG_G1R=$(new_cg g1r)
CG_G1W=$(new_cg g1w)
CG_G100=$(new_cg g100)
CG_G10K=$(new_cg g10k)
mkdir -p "$PIN_DIR"
bpftool prog load "$BIN/trivial.bpf.o" "$PIN_DIR/trivial" type cgroup/sysctl ||
	die "bpftool cannot load the trivial program"
bpftool cgroup attach "$CG_TRIV" sysctl pinned "$PIN_DIR/trivial" multi ||
	die "bpftool cannot attach the trivial program"
TRIVIAL_CGS+=("$CG_TRIV")
attach_timed attach-1 "$CG_G1R" "$WORK/p1r.json" || die "attach p1r failed"
attach_timed attach-1 "$CG_G1W" "$WORK/p1w.json" || die "attach p1w failed"
attach_timed attach-100 "$CG_G100" "$WORK/p100.json" || die "attach p100 failed"
attach_timed attach-10k "$CG_G10K" "$WORK/p10k.json" || die "attach p10k failed"
# programs inherited from ancestors would run in every variant: there should be none
bpftool cgroup show "$CG_NONE" effective 2>/dev/null | grep -c sysctl >"$WORK/raw/inherited.txt"
CPU=$(($(nproc) - 1))
log "1. per-access: read, $ROUNDS rounds x $ITERS ops x 5 variants"
"$BIN/access_bench" --op read --iters "$ITERS" --rounds "$ROUNDS" --cpu "$CPU" \
	none="$CG_NONE" trivial="$CG_TRIV" g1="$CG_G1R" g100="$CG_G100" g10k="$CG_G10K" \
	>"$WORK/raw/access_read.txt" || die "access_bench read failed"
log "1. per-access: write in a new netns, $ROUNDS rounds x $ITERS ops x 5 variants"
"$BIN/access_bench" --op write --iters "$ITERS" --rounds "$ROUNDS" --cpu "$CPU" \
	none="$CG_NONE" trivial="$CG_TRIV" g1="$CG_G1W" g100="$CG_G100" g10k="$CG_G10K" \
	>"$WORK/raw/access_write.txt" || die "access_bench write failed"

log "1. program run time per access, from the kernel's BPF run-time statistics"
# prog_cost OP LABEL CGROUP: ns per program run over ITERS accesses (deltas of run_time_ns)
cat >"$WORK/prog_cost.sh" <<'SH'
snap() { bpftool -j prog show | python3 -c 'import json,sys
for p in json.load(sys.stdin):
    if p.get("type") == "cgroup_sysctl": print(p["id"], p.get("run_cnt", 0), p.get("run_time_ns", 0))'; }
while read -r op label cg; do
	snap >"$WORK/s0"
	"$BIN/access_bench" --op "$op" --iters "$ITERS" --rounds 1 --cpu "$CPU" x="$cg" >/dev/null || exit 1
	snap >"$WORK/s1"
	python3 -c 'import sys
a = {l.split()[0]: l.split()[1:] for l in open(sys.argv[1])}
for l in open(sys.argv[2]):
    i, c, t = l.split(); c0, t0 = a.get(i, ["0", "0"]); dc = int(c) - int(c0)
    if dc * 2 > int(sys.argv[3]): print(sys.argv[4], sys.argv[5], (int(t) - int(t0)) / dc)' \
		"$WORK/s0" "$WORK/s1" "$ITERS" "$op" "$label"
done
SH
printf '%s\n' "read trivial $CG_TRIV" "read g1 $CG_G1R" "read g100 $CG_G100" "read g10k $CG_G10K" \
	"write trivial $CG_TRIV" "write g1 $CG_G1W" "write g100 $CG_G100" "write g10k $CG_G10K" |
	WORK=$WORK BIN=$BIN ITERS=$ITERS CPU=$CPU "$BIN/bpf_stats" bash "$WORK/prog_cost.sh" \
		>"$WORK/raw/prog_cost.txt" || log "   (no run-time statistics: BPF_ENABLE_STATS refused)"

# ---------------------------------------------------------------------------
log "3. kernel memory: the node's program, each policy's tables, each guard"
gdir() { echo "$PINS/$(cgid "$1")"; }
mem() { python3 "$HERE/summarize.py" memory "$@"; }
# the program the guards of this run use (another build's may be pinned too)
NODE=$PINS/programs/$("$SG" status --cgroup "$CG_G100" --json 2>/dev/null |
	grep -o '"program": "[^"]*"' | cut -d'"' -f4)
[ -e "$NODE/prog" ] || die "no program pinned at $NODE"
mem "$NODE" >"$WORK/raw/mem_node.json" || die "cannot read the node program's memory"
# the program's verification, from the first attach of this run if it loaded the program
grep -h '^verified_insns' "$WORK/attach.err" 2>/dev/null | head -1 >"$WORK/raw/verifier.txt"
[ -s "$WORK/raw/verifier.txt" ] || bpftool -j prog show pinned "$NODE/prog" | python3 -c \
	'import json,sys; p=json.load(sys.stdin); print("verified_insns", p.get("verified_insns", "?"), "xlated", p["bytes_xlated"] // 8)' \
	>"$WORK/raw/verifier.txt"
CG_M20=$(new_cg m20)
CG_M20B=$(new_cg m20b)
attach_timed attach-20 "$CG_M20" "$WORK/p20.json" || die "attach p20 failed"
mem "$(gdir "$CG_M20")" "$(pdir "$CG_M20")" --base "$NODE" >"$WORK/raw/mem20.json" ||
	die "cannot read the 20-rule guard's memory"
attach_timed attach-20 "$CG_M20B" "$WORK/p20.json" || die "attach p20 (second cgroup) failed"
# what one more container with a policy already in use adds
mem "$(gdir "$CG_M20B")" --base "$(gdir "$CG_M20")" "$(pdir "$CG_M20")" "$NODE" \
	>"$WORK/raw/mem20_more.json" || die "cannot read the second 20-rule guard's memory"
mem "$(gdir "$CG_G10K")" "$(pdir "$CG_G10K")" --base "$NODE" >"$WORK/raw/mem10k.json" ||
	die "cannot read the 10k-rule guard's memory"
for cg in "$CG_M20" "$CG_M20B" "$CG_G1R" "$CG_G1W" "$CG_G100" "$CG_G10K"; do
	"$SG" detach --cgroup "$cg" >/dev/null || die "detach $cg failed"
done

# ---------------------------------------------------------------------------
log "2. hook latency: bundles, a sleeping target and a companion guard"
. "$ROOT/test/oci/bundle.sh"
make_rootfs "$WORK/rootfs" >/dev/null || die "cannot build a busybox rootfs"
ann() { [ -z "$1" ] && echo '{}' || echo '{"io.sysctl-guard.profile": "'"$1"'"}'; }
# bundle NAME STAGE PROFILE: a runc bundle running `true`, the hook at STAGE (or none)
bundle() { make_bundle "$WORK/$1" "$WORK/rootfs" "$SG" "$2" "$(ann "$3")" '["true"]' >/dev/null; }
bundle h-fast none ""
bundle h-100new none b100new
bundle h-100use none b100
bundle h-10k none b10knew
bundle h-10kuse none b10k
bundle h-10kpre none b10kpre
bundle r-none none ""
# Each runc variant runs its hook through a link of its own name, so that
# the scheduler's events below tell whose hook ran. The floor of any hook
# is noop_hook (static, no libc) at createRuntime and poststop; /bin/true
# there is the floor of a dynamically linked one.
rbundle() { # rbundle VARIANT PROFILE TARGET
	ln -s "$3" "$BIN/hook-$1"
	make_bundle "$WORK/r-$1" "$WORK/rootfs" "$BIN/hook-$1" createRuntime "$(ann "$2")" '["true"]' >/dev/null
}
rbundle noophook "" "$BIN/noop_hook"
rbundle truehook "" "$(type -P true)"
rbundle fast "" "$SG"
rbundle 100new b100new "$SG"
rbundle 100use b100 "$SG"
rbundle 10k b10knew "$SG"
rbundle 10kuse b10k "$SG"
rbundle 10kpre b10kpre "$SG"

# sleeper NAME: a sleeping process in a new cgroup NAME; sets SLEEPER_CG, SLEEPER_PID
sleeper() {
	SLEEPER_CG=$(new_cg "$1")
	sleep 100000 &
	SLEEPER_PID=$!
	PIDS+=("$SLEEPER_PID")
	echo "$SLEEPER_PID" >"$SLEEPER_CG/cgroup.procs" || die "cannot move sleep into $SLEEPER_CG"
}
state() { # state FILE ID PID BUNDLE
	printf '{"ociVersion":"1.0.2","id":"%s","status":"created","pid":%s,"bundle":"%s"}\n' \
		"$2" "$3" "$4" >"$1"
}
sleeper target
CG_TARGET=$SLEEPER_CG TARGET_PID=$SLEEPER_PID
for v in fast 100new 100use 10k 10kuse 10kpre; do state "$WORK/state-$v.json" bench-hook "$TARGET_PID" "$WORK/h-$v"; done
# Companions: the 100- and 10,000-rule policies already in use on the node,
# through the hook (which records the inputs that made them).
sleeper companion
CG_COMP=$SLEEPER_CG COMP_PID=$SLEEPER_PID
state "$WORK/state-comp.json" bench-companion "$COMP_PID" "$WORK/h-100use"
"$SG" hook createRuntime <"$WORK/state-comp.json" || die "the hook failed on the companion"
sleeper companion10k
CG_COMP10K=$SLEEPER_CG COMP10K_PID=$SLEEPER_PID
state "$WORK/state-comp10k.json" bench-companion10k "$COMP10K_PID" "$WORK/h-10kuse"
"$SG" hook createRuntime <"$WORK/state-comp10k.json" || die "the hook failed on the 10k companion"
# The other 10,000-rule profile has no container yet: it is preloaded, timed.
"$ST" -e "$WORK/preload.err" preload -- "$SG" preload b10kpre >"$WORK/raw/preload.txt" ||
	die "preload failed: $(tail -3 "$WORK/preload.err")"
# Policies no guard on the node has seen are made ahead: a python run right
# before a timed run slowed it by milliseconds. take_fresh NAME puts the one
# made for NAME in place (a rename); refill makes the next ones, after a
# timed run; settle lets what ran before a timed run finish, the same for
# every variant.
NONCE=0
refill() {
	local name rules
	for name in b100new:100 b10knew:$BIG; do
		rules=${name#*:}
		name=${name%%:*}
		[ -e "$WORK/fresh-$name.json" ] && continue
		NONCE=$((NONCE + 1))
		$GEN "$rules" "$WORK/fresh-$name.json" --nonce "$$x$NONCE"
	done
}
take_fresh() { mv "$WORK/fresh-$1.json" "$WORK/profiles/$1.json"; }
settle() { sleep 0.05; }
# free_made VARIANT: after a timed run that made a new policy and detached its
# guard, gc frees that policy (the companions' and the preloaded one stay),
# so that every round starts from the same node: the one a periodic gc
# keeps, whose vacancies (docs/design.md) a new policy of their size takes.
# Left pinned, thirty rounds of 10,000-rule policies would hold 150 MB.
free_made() {
	case $1 in
	100new | 10k) "$SG" gc --min-age 0 >/dev/null 2>&1 || die "gc after $1 failed" ;;
	esac
}
refill
TARGET_ENTRY=/sys/fs/bpf/sysctl-guard/$(cgid "$CG_TARGET")
detach_target() {
	[ -e "$TARGET_ENTRY" ] && "$SG" detach --cgroup "$CG_TARGET" >/dev/null
	[ ! -e "$TARGET_ENTRY" ] || die "detach of the target left $TARGET_ENTRY"
}
# hook_run ROUND VARIANT: one timed run; guarded variants must leave a guard.
hook_run() {
	local r=$1 v=$2 out
	case $v in
	100new) take_fresh b100new ;;
	10k) take_fresh b10knew ;;
	esac
	settle
	: >"$WORK/hook.err"
	case $v in
	true) out=$("$ST" -i "$WORK/state-fast.json" true -- true) ;;
	floor) out=$("$ST" floor -- "$BIN/floor" "$WORK/profiles/b10k.json" "$FLOOR_BYTES") ;;
	fast) out=$("$ST" -i "$WORK/state-fast.json" -e "$WORK/hook.err" fast -- "$SG" hook createRuntime) ;;
	100new) out=$("$ST" -i "$WORK/state-100new.json" -e "$WORK/hook.err" 100new -- "$SG" hook createRuntime) ;;
	100use) out=$("$ST" -i "$WORK/state-100use.json" -e "$WORK/hook.err" 100use -- "$SG" hook createRuntime) ;;
	10kuse) out=$("$ST" -i "$WORK/state-10kuse.json" -e "$WORK/hook.err" 10kuse -- "$SG" hook createRuntime) ;;
	10kpre) out=$("$ST" -i "$WORK/state-10kpre.json" -e "$WORK/hook.err" 10kpre -- "$SG" hook createRuntime) ;;
	10k) out=$("$ST" -i "$WORK/state-10k.json" -e "$WORK/hook.err" 10k -- "$SG" hook createRuntime) ;;
	esac
	[ "$(echo "$out" | awk '{print $4}')" = 0 ] || { tail -3 "$WORK/hook.err" >&2; die "hook $v failed"; }
	case $v in
	true | fast | floor) [ ! -e "$TARGET_ENTRY" ] || die "hook $v attached a guard" ;;
	*) [ -e "$TARGET_ENTRY" ] || die "hook $v left no guard" ;;
	esac
	# A policy in use or preloaded is found by its inputs, never parsed; a new one is made.
	case $v in
	100use | 10kuse | 10kpre) grep -q "found by its inputs" "$WORK/hook.err" ||
		die "hook $v did not find its policy by its inputs" ;;
	100new | 10k) ! grep -q "found by its inputs" "$WORK/hook.err" ||
		die "hook $v found its policy by its inputs: it was not new" ;;
	esac
	echo "$r $out" >>"$WORK/raw/hook.txt"
	detach_target
	free_made "$v"
	refill
}
log "2. hook latency: warm-up (probe cache, page cache)"
for v in true fast 100new; do hook_run -1 "$v"; done
sed -i '/^-1 /d' "$WORK/raw/hook.txt"
# "in use": the target's guard gets the same policy hash as the companion's
"$SG" hook createRuntime <"$WORK/state-100use.json" || die "hook 100use failed"
for cg in "$CG_TARGET" "$CG_COMP"; do
	"$SG" status --cgroup "$cg" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["policy_hash"])'
done >"$WORK/raw/hashes.txt"
detach_target
# The floor of a new 10,000-rule policy (floor.c): reading and lexing its
# text and making and filling mappable arrays as large as its tables (1.9
# MB), nothing the hook adds: what no hook can skip on this machine.
FLOOR_BYTES=$((1936 * 1000))
log "2. hook latency: $HOOK_ROUNDS rounds of true/floor/fast/100new/100use/10kuse/10kpre, 10k (new) in the first $N10K"
VARIANTS=(true floor fast 100new 100use 10k 10kuse 10kpre)
n10k_done=0
for ((r = 0; r < HOOK_ROUNDS; r++)); do
	for ((k = 0; k < ${#VARIANTS[@]}; k++)); do
		v=${VARIANTS[$(((k + r) % ${#VARIANTS[@]}))]}
		if [ "$v" = 10k ]; then
			[ "$n10k_done" -lt "$N10K" ] || continue
			t0=$(date +%s%N)
			hook_run "$r" 10k
			n10k_done=$((n10k_done + 1))
			# a parser that handles 10,000 rules quickly gets the full number of runs
			[ $(($(date +%s%N) - t0)) -lt 5000000000 ] && N10K=$HOOK_ROUNDS
			log "   10k run $n10k_done took $((($(date +%s%N) - t0) / 1000000)) ms"
		else
			hook_run "$r" "$v"
		fi
	done
done

log "2. breakdown: hook runs under the bpf(2) timing shim, and with the hook's own phase timing"
# shimmed VARIANT LOG: one hook run whose bpf(2) calls the shim times into raw/LOG
shimmed() {
	"$ST" -i "$WORK/state-$1.json" -e "$WORK/hook.err" shim -- env LD_PRELOAD="$BIN/bpf_timing.so" \
		SG_BENCH_BPF_LOG="$WORK/raw/$2" "$SHIMMED" hook createRuntime >/dev/null
	detach_target
}
# phased VARIANT LOG: one hook run of the binary itself, which times its phases
# (SYSCTL_GUARD_TIMING=1, timing.h) into raw/LOG
phased() {
	SYSCTL_GUARD_TIMING=1 "$SG" hook createRuntime <"$WORK/state-$1.json" 2>&1 >/dev/null |
		grep '^sysctl-guard: timing:' >>"$WORK/raw/$2"
	detach_target
}
# The twin is a build of its own: its program is loaded (verified) here, not in a timed run.
"$SHIMMED" hook createRuntime <"$WORK/state-100use.json" >/dev/null || die "the shimmed hook failed"
detach_target
for ((r = 0; r < ROUNDS; r++)); do
	take_fresh b100new
	settle
	shimmed 100new shim_100.txt
	free_made 100new
	refill
	take_fresh b100new
	settle
	phased 100new phases_100.txt
	free_made 100new
	refill
	settle
	shimmed 100use shim_100use.txt
	settle
	phased 100use phases_100use.txt
	if [ "$r" -lt 3 ]; then # a few 10,000-rule ones: each takes tens of ms
		take_fresh b10knew
		settle
		shimmed 10k shim_10k.txt
		free_made 10k
		refill
		take_fresh b10knew
		settle
		phased 10k phases_10k.txt
		free_made 10k
		refill
	fi
	"$ST" check -- "$SG" check "$WORK/profiles/b100new.json" >>"$WORK/raw/proxy.txt"
	"$ST" explain -- "$SG" explain "$WORK/profiles/b100new.json" kernel.ostype >>"$WORK/raw/proxy.txt"
	"$ST" version -- "$SG" --version >>"$WORK/raw/proxy.txt"
done
[ -x "$BUILD/test/bench/compile_bench" ] &&
	"$BUILD/test/bench/compile_bench" 5 >"$WORK/raw/compile_bench.txt" 2>&1

RUNC_ROUNDS=$((ROUNDS * 2)) # a container start is noisy: more rounds than the rest
log "2. runc run of busybox true: $RUNC_ROUNDS rounds of none/noophook/truehook/fast/100new/100use/10kuse/10kpre, 10k once"
RVARIANTS=(none noophook truehook fast 100new 100use 10k 10kuse 10kpre)
# A runc start varies by several milliseconds from one run to the next, far
# more than a hook costs: the scheduler's fork, exec and exit events time
# each hook process inside the real runs (fork to exit: what runc waits for).
SCHED_PID=""
if command -v perf >/dev/null; then
	perf record -q -a -o "$WORK/raw/sched.data" -e sched:sched_process_fork \
		-e sched:sched_process_exec -e sched:sched_process_exit >/dev/null 2>&1 &
	SCHED_PID=$!
	PIDS+=("$SCHED_PID")
	sleep 1 # perf is recording
fi
runc_done10k=0
for ((r = 0; r < RUNC_ROUNDS; r++)); do
	for ((k = 0; k < ${#RVARIANTS[@]}; k++)); do
		v=${RVARIANTS[$(((k + r) % ${#RVARIANTS[@]}))]}
		if [ "$v" = 10k ]; then
			[ "$runc_done10k" -lt 1 ] || [ "$N10K" = "$HOOK_ROUNDS" ] || continue
			runc_done10k=$((runc_done10k + 1))
		fi
		[ "$v" = 100new ] && take_fresh b100new
		[ "$v" = 10k ] && take_fresh b10knew
		settle
		id=sgb-$$-$v-$r
		CONTAINERS+=("$id")
		out=$("$ST" -e "$WORK/runc.err" "$v" -- runc run --bundle "$WORK/r-$v" "$id")
		[ "$(echo "$out" | awk '{print $4}')" = 0 ] || { tail -5 "$WORK/runc.err" >&2; die "runc run $v failed"; }
		echo "$r $out" >>"$WORK/raw/runc.txt"
		free_made "$v"
		refill
	done
done
if [ -n "$SCHED_PID" ]; then
	kill -INT "$SCHED_PID" && wait "$SCHED_PID" 2>/dev/null
	perf script -i "$WORK/raw/sched.data" -F comm,pid,time,event,trace >"$WORK/raw/sched.txt" 2>/dev/null
	rm -f "$WORK/raw/sched.data"
fi
# poststop removed every container's guard
"$SG" status --json 2>/dev/null | grep -q "\"sgb-$$-" && die "a runc container's guard outlived poststop"
kill "$TARGET_PID" "$COMP_PID" "$COMP10K_PID" 2>/dev/null
"$SG" detach --cgroup "$CG_COMP" >/dev/null
"$SG" detach --cgroup "$CG_COMP10K" >/dev/null

# ---------------------------------------------------------------------------
log "4. scale: per-access with 1 guard, then $SCALE_N guards (budget ${SCALE_BUDGET}s)"
SCALE=$(new_cg scale)
mkdir "$SCALE/s1" || die "cannot create $SCALE/s1"
attach_timed scale "$SCALE/s1" "$WORK/p100.json" || die "attach $SCALE/s1 failed"
SCALE_ROUNDS=$ROUNDS
"$BIN/access_bench" --op read --iters "$ITERS" --rounds "$SCALE_ROUNDS" --cpu "$CPU" \
	trivial="$CG_TRIV" g="$SCALE/s1" >"$WORK/raw/scale_access_1.txt" || die "access_bench failed"
mem "$(gdir "$SCALE/s1")" "$(pdir "$SCALE/s1")" --base "$NODE" >"$WORK/raw/mem100.json" ||
	die "cannot read the 100-rule guard's memory"
t_scale=$(date +%s)
n=1
stop_reason=""
for ((i = 2; i <= SCALE_N; i++)); do
	if [ $(($(date +%s) - t_scale)) -ge "$SCALE_BUDGET" ]; then
		stop_reason="time budget of ${SCALE_BUDGET}s reached"
		break
	fi
	mkdir "$SCALE/s$i" || { stop_reason="mkdir of cgroup $i failed"; break; }
	out=$("$ST" -e "$WORK/scale.err" scale -- "$SG" attach --cgroup "$SCALE/s$i" --policy "$WORK/p100.json")
	echo "$out" >>"$WORK/raw/scale_attach.txt"
	if [ "$(echo "$out" | awk '{print $4}')" != 0 ]; then
		stop_reason="attach $i failed (exit $(echo "$out" | awk '{print $4}')): $(tail -1 "$WORK/scale.err")"
		break
	fi
	n=$i
done
guards=$(ls /sys/fs/bpf/sysctl-guard | grep -c '^[0-9]')
echo "$n $guards ${stop_reason:-all attached}" >"$WORK/raw/scale_n.txt"
dirs=()
for ((i = 1; i <= n; i++)); do dirs+=("$(gdir "$SCALE/s$i")"); done
mem "${dirs[@]}" "$(pdir "$SCALE/s1")" --base "$NODE" >"$WORK/raw/mem_scale.json" ||
	die "cannot read the memory of the $n guards"
log "4. scale: $n guards attached (${stop_reason:-all}); $guards guards pinned on the node"
"$BIN/access_bench" --op read --iters "$ITERS" --rounds "$SCALE_ROUNDS" --cpu "$CPU" \
	trivial="$CG_TRIV" g="$SCALE/s1" >"$WORK/raw/scale_access_n.txt" || die "access_bench failed"
log "4. scale: detaching $n guards"
for ((i = 1; i <= SCALE_N; i++)); do
	[ -d "$SCALE/s$i" ] || break
	"$SG" detach --cgroup "$SCALE/s$i" >/dev/null 2>&1
	rmdir "$SCALE/s$i" 2>/dev/null
done

# ---------------------------------------------------------------------------
{
	echo "kernel=$(uname -r) cpus=$(nproc) rounds=$ROUNDS iters=$ITERS"
	echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD -- hook bpf 2>/dev/null || echo +dirty)"
	echo "build=$(basename "$BUILD") ($BUILD_NOTE), binary built $SG_BUILT sha256 $(sha256sum "$SG" | cut -c1-12)"
	echo "elapsed=$(($(date +%s) - T_START))"
} >"$WORK/raw/meta.txt"
python3 "$HERE/summarize.py" report "$WORK/raw"
