# SPDX-License-Identifier: Apache-2.0
# Shared by examples/demo.sh and the oci suite: a busybox rootfs and runc
# bundles whose config.json runs our hook.

# make_rootfs DIR: a static busybox with its applets.
make_rootfs() {
	local dir=$1 busybox
	busybox=$(command -v busybox || echo /bin/busybox)
	[ -x "$busybox" ] || { echo "busybox-static is not installed" >&2; return 1; }
	mkdir -p "$dir/bin" "$dir/proc" "$dir/sys" "$dir/dev" "$dir/tmp" "$dir/etc"
	cp "$busybox" "$dir/bin/busybox"
	chroot "$dir" /bin/busybox --install -s /bin
	echo "root:x:0:0:root:/root:/bin/sh" >"$dir/etc/passwd"
}

# make_bundle DIR ROOTFS HOOK_BINARY STAGE ANNOTATIONS_JSON ARGS_JSON [SYSCTLS_JSON]
# A runc bundle: /proc/sys writable (as privileged and system containers have
# it), the hook at STAGE (prestart|createRuntime|none), poststop cleanup.
make_bundle() {
	local dir=$1 rootfs=$2 hook=$3 stage=$4 annotations=$5 args=$6 sysctls=${7:-"{}"}
	mkdir -p "$dir"
	(cd "$dir" && runc spec)
	python3 - "$dir/config.json" "$rootfs" "$hook" "$stage" "$annotations" "$args" "$sysctls" <<'PY'
import json, sys
path, rootfs, hook, stage, annotations, args, sysctls = sys.argv[1:]
c = json.load(open(path))
c["root"] = {"path": rootfs, "readonly": True}
c["process"]["terminal"] = False
c["process"]["args"] = json.loads(args)
c["linux"]["readonlyPaths"] = [p for p in c["linux"].get("readonlyPaths", []) if p != "/proc/sys"]
c["linux"]["sysctl"] = json.loads(sysctls)
c["annotations"] = json.loads(annotations)
import os
env = [k + "=" + os.environ[k] for k in ("SYSCTL_GUARD_CONFIG", "SYSCTL_GUARD_CONFINE") if os.environ.get(k)]
if stage != "none":
    entry = lambda s: {"path": hook, "args": ["sysctl-guard", "hook", s], "env": env}
    c["hooks"] = {stage: [entry(stage)], "poststop": [entry("poststop")]}
json.dump(c, open(path, "w"), indent=2)
PY
}
