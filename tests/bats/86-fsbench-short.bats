#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# tests/bench/fsbench.sh keeps working (issue #6: "a short mode runs in
# CI"): one --short run of every system installed (32 MiB files, fio 1 s,
# 500 small files; about 1 min with all five) must exit 0, print a
# number for every workload and system, the daemon table, the targets
# table and valid JSON, and leave nothing mounted. The numbers are not
# checked: --short sizes are too small to mean anything, and a test is
# not a benchmark. Bad usage must exit 2, a tmpfs work dir is refused.

bats_require_minimum_version 1.5.0

load helpers

FSBENCH="$BATS_TEST_DIRNAME/../bench/fsbench.sh"

# bare, xtsfs and memfs (the floor, built from tests/bench/proto/memfs.c
# and the build's glue: its tar -d and rsync -c checks test it) always;
# each peer when its Debian package is installed (.ci/run installs them
# all: contrib/debian-packages.txt)
systems() {
	local s list=bare
	for s in fuse-overlayfs gocryptfs securefs; do
		command -v "$s" >/dev/null && list+=",$s"
	done
	echo "$list,xtsfs,memfs"
}

setup_file() {
	local wd
	read -r -a wd <<<"$(bench_workdir_args)"
	systems >"$BATS_FILE_TMPDIR/systems"
	# the run mounts only under its work dir: that is all we look at
	# (other programs may mount and unmount elsewhere meanwhile)
	echo "${wd[1]:-/var/tmp/xtsfs-bench}" >"$BATS_FILE_TMPDIR/workdir"
	set +e
	"$FSBENCH" --short --systems "$(systems)" --xtsfs-bin "$BIN" \
		"${wd[@]}" --json "$BATS_FILE_TMPDIR/out.json" \
		>"$BATS_FILE_TMPDIR/out" 2>&1
	echo $? >"$BATS_FILE_TMPDIR/rc"
	set -e
	findmnt -rn -o TARGET >"$BATS_FILE_TMPDIR/mounts-after"
}

# own_mounts: the mount points under the run's work dir still mounted.
own_mounts() {
	local wd
	wd=$(cat "$BATS_FILE_TMPDIR/workdir")
	awk -v wd="$wd/" 'index($0, wd) == 1' "$BATS_FILE_TMPDIR/mounts-after"
}

# out: the short run's output, shown if a test fails.
out() {
	cat "$BATS_FILE_TMPDIR/out"
}

@test "fsbench --short: exit 0" {
	out
	[ "$(cat "$BATS_FILE_TMPDIR/rc")" = 0 ]
}

@test "fsbench --short: leaves nothing mounted" {
	[ -s "$BATS_FILE_TMPDIR/mounts-after" ] # findmnt worked
	[ -z "$(own_mounts)" ] || {
		echo "still mounted:"
		own_mounts
		return 1
	}
}

@test "fsbench --short: the table has every workload, a number per system" {
	out
	local row n
	n=$(tr ',' '\n' <"$BATS_FILE_TMPDIR/systems" | wc -l)
	for row in 'seq write 32 MiB' 'seq read 32 MiB, cold' 'seq read 32 MiB, warm' \
		'rand read 4k, 1 job' 'rand read 4k, 2 jobs' \
		'rand write 4k, 1 job' 'rand write 4k, 2 jobs' \
		'tar -x 500 small files' 'find tree' 'ls -lR tree' 'du -s tree' \
		'rm -rf tree' 'rsync -a tree'; do
		# the first table line of that row: n numbers after the unit
		# and the direction, then xtsfs's ratios
		local line
		line=$(grep -F -m 1 "$row" "$BATS_FILE_TMPDIR/out" | sed "s/^.*  \(s\|MB\/s\|IOPS\)  *\(higher\|lower\)  *//")
		[ -n "$line" ] || { echo "no row: $row"; false; }
		# shellcheck disable=SC2086
		set -- $line
		[ $# -ge "$n" ] || { echo "row $row: $line"; false; }
		local i
		for ((i = 1; i <= n; i++)); do
			[[ ${!i} =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "row $row: $line"; false; }
		done
	done
}

@test "fsbench --short: daemon table and the issue #20 targets table" {
	out
	grep -Eq '^daemon +CPU s/GiB written +CPU s/GiB read +peak RSS MiB$' "$BATS_FILE_TMPDIR/out"
	grep -Eq '^xtsfs( +[0-9]+\.[0-9]+){3}$' "$BATS_FILE_TMPDIR/out"
	grep -Eq '^target +xtsfs +reference +xtsfs/ref +target +verdict +xtsfs/fuse-overlayfs +verdict$' "$BATS_FILE_TMPDIR/out"
	grep -Eq '^xtsfs daemon peak RSS .* <=43 MiB +(met|NOT MET)$' "$BATS_FILE_TMPDIR/out"
	grep -Eq '^xtsfs daemon CPU per GiB write .* <=0\.5 s +(met|NOT MET)$' "$BATS_FILE_TMPDIR/out"
	grep -Eq '^xtsfs daemon CPU per GiB read .* <=0\.5 s +(met|NOT MET)$' "$BATS_FILE_TMPDIR/out"
	# every workload has a target (13), with a verdict, and the verdict
	# against fuse-overlayfs (n/a when it is not installed)
	[ "$(grep -Ec ' (met|met\(>=1\.1x:fuse-overlayfs\)|NOT MET) +([0-9]+\.[0-9]+|-) +(met|NOT MET|n/a)$' "$BATS_FILE_TMPDIR/out")" -eq 13 ]
	if grep -qw fuse-overlayfs "$BATS_FILE_TMPDIR/systems"; then
		[ "$(grep -Ec ' [0-9]+\.[0-9]+ +(met|NOT MET)$' "$BATS_FILE_TMPDIR/out")" -eq 13 ]
	fi
}

@test "fsbench --short: --json has every raw number" {
	python3 - "$BATS_FILE_TMPDIR/out.json" "$(cat "$BATS_FILE_TMPDIR/systems")" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
systems = sys.argv[2].split(",")
assert j["meta"]["short"] is True and j["meta"]["runs"] == 1, j["meta"]
assert j["meta"]["systems"] == systems, (j["meta"]["systems"], systems)
want = ["seq_write", "seq_read_cold", "seq_read_warm", "rand_read_1j",
        "rand_read_2j", "rand_write_1j", "rand_write_2j", "tree_extract",
        "tree_find", "tree_lsR", "tree_du", "tree_rm", "tree_rsync"]
assert sorted(j["workloads"]) == sorted(want), list(j["workloads"])
for w in want:
    res = j["workloads"][w]["results"]
    for s in systems:
        r = res[s]
        assert len(r["runs"]) == 1 and r["median"] > 0, (w, s, r)
d = j["daemons"]["xtsfs"]
assert d["peak_rss_kib"] > 0 and d["cpu_write_s_per_gib"][0] > 0 \
    and d["cpu_read_s_per_gib"][0] > 0, d
PY
}

@test "fsbench: each run starts one system further on, raw numbers stay by run" {
	local wd
	read -r -a wd <<<"$(bench_workdir_args)"
	run "$FSBENCH" --short --runs 3 --systems bare,xtsfs --workloads tree \
		--xtsfs-bin "$BIN" "${wd[@]}" --json "$BATS_TEST_TMPDIR/rot.json"
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"run 1/3, tree (in this order: bare xtsfs):"* ]]
	[[ $output == *"run 2/3, tree (in this order: xtsfs bare):"* ]]
	[[ $output == *"run 3/3, tree (in this order: bare xtsfs):"* ]]
	python3 - "$BATS_TEST_TMPDIR/rot.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["meta"]["runs"] == 3 and j["meta"]["systems"] == ["bare", "xtsfs"]
for w, v in j["workloads"].items():
    for s in ("bare", "xtsfs"):
        assert len(v["results"][s]["runs"]) == 3, (w, s, v["results"][s])
PY
}

@test "fsbench: bad usage exits 2 and says why" {
	run -2 "$FSBENCH" --runs many
	[[ $output == *"--runs: not a positive number"* ]]
	run -2 "$FSBENCH" --systems nosuchfs
	[[ $output == *"unknown system 'nosuchfs'"* ]]
	run -2 "$FSBENCH" --workloads nosuchgroup
	[[ $output == *"unknown group 'nosuchgroup'"* ]]
	run -2 "$FSBENCH" --no-such-option
}

@test "fsbench: refuses a tmpfs work dir" {
	bench_refuses_tmpfs "$FSBENCH"
}
