#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# fsbench-chart.sh - a chart of one fsbench.sh run: each row's median on
# every system as a speed relative to a reference system (default
# fuse-overlayfs: 1 is "as fast as a FUSE passthrough without crypto",
# higher is better; for the rows in seconds the reference's time over
# the system's). Writes the numbers as text beside the PNG (PNG with
# .dat for .png), so the chart can be checked and made again.
#
# Usage: tests/bench/fsbench-chart.sh RUN.json PNG [REFERENCE [SYSTEM...]]
# SYSTEMs: which to draw (default: every one in the run but the reference
# and bare).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
json=$1 png=$2 ref=${3:-fuse-overlayfs}
shift $(($# < 3 ? $# : 3))
dat=${png%.png}.dat
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

python3 - "$json" "$ref" "$@" >"$dat" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
ref = sys.argv[2]
systems = sys.argv[3:] or [s for s in run["meta"]["systems"] if s not in (ref, "bare")]
short = {"seq_write": "seq write", "seq_read_cold": "seq read cold",
         "seq_read_warm": "seq read warm", "rand_read_1j": "rand read 1j",
         "rand_read_2j": "rand read 2j", "rand_write_1j": "rand write 1j",
         "rand_write_2j": "rand write 2j", "tree_extract": "tar -x",
         "tree_find": "find, cold", "tree_lsR": "ls -lR", "tree_du": "du -s",
         "tree_rm": "rm -rf", "tree_rsync": "rsync -a"}
m = run["meta"]
print(f"# fsbench {m['date']}, {m['kernel']}, {m['cpu']}, {m['nproc']} CPUs, "
      f"{m['runs']} runs (medians), load at start {m['loadavg_start']}")
print(f"# speed relative to {ref} (higher is better; seconds rows: {ref}'s time / the system's)")
print("\t".join(["row"] + systems))
for w, d in run["workloads"].items():
    res = d["results"]
    r = res.get(ref, {}).get("median")
    if not r:
        continue
    cells = []
    for s in systems:
        v = res.get(s, {}).get("median")
        if not v:  # failed or not run: no bar (gnuplot's missing value)
            cells.append("-")
        elif d["unit"] == "s":
            cells.append(f"{r / v:.2f}")
        else:
            cells.append(f"{v / r:.2f}")
    print("\t".join([short.get(w, w)] + cells))
PY
"$here/plot-bars.sh" "$dat" "$png" \
	"fsbench $(sed -n '1s/^# fsbench \([0-9-]*\).*/\1/p' "$dat"): speed relative to $ref (medians)" \
	"x $ref (higher is better; log scale)" log
