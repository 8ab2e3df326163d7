#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lever4-ab.sh [ROUNDS] [OUTDIR]: issue 20 lever 4, A/B/C on this machine
# (doc/PERFORMANCE.md, "Lever 4"). Runs tests/bench/fsbench.sh for xtsfs
# alone (--workloads seq,fio --runs 1) with three mount configurations,
# interleaved round by round: -o nowriteback (write-through), -o writeback
# (the writeback cache with its guard), -o writeback,nowbguard (the cache
# without it); then prints the median of the rounds per row and
# configuration, with the ratios to write-through. Each fsbench run keeps
# its JSON and text in OUTDIR (default /var/tmp/xtsfs-lever4).
# Extra fsbench arguments may follow in FSBENCH_ARGS (e.g. --workdir).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
out=${2:-/var/tmp/xtsfs-lever4}
# shellcheck disable=SC2054 # one config is two mount options
configs=(nowriteback writeback writeback,nowbguard)
read -r -a extra <<<"${FSBENCH_ARGS:-}"

mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
	for c in "${configs[@]}"; do
		opts=(--xtsfs-opts "$c")
		echo "lever4-ab: round $r, $c ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
		"$here/fsbench.sh" --systems xtsfs --workloads seq,fio --runs 1 \
			${opts[@]+"${opts[@]}"} ${extra[@]+"${extra[@]}"} \
			--json "$out/$c.$r.json" >"$out/$c.$r.txt" 2>&1
	done
done

python3 - "$out" "$rounds" "${configs[@]}" <<'PY'
import json, statistics, sys
out, rounds, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
labels = {}
for c in configs:
    for r in range(1, rounds + 1):
        d = json.load(open(f"{out}/{c}.{r}.json"))
        for w, v in d["workloads"].items():
            labels[w] = f'{v["label"]} ({v["unit"]})'
            runs = v["results"]["xtsfs"]["runs"]
            rows.setdefault(w, {}).setdefault(c, []).extend(
                x for x in runs if x is not None)
print("| row | " + " | ".join(configs) + " | " +
      " | ".join(f"{c} / {configs[0]}" for c in configs[1:]) + " |")
print("| --- |" + " ---: |" * (2 * len(configs) - 1))
for w in rows:
    med = {c: statistics.median(rows[w][c]) if rows[w].get(c) else None
           for c in configs}
    cells = []
    for c in configs:
        vals = rows[w].get(c, [])
        cells.append(f"{med[c]:g} [{' '.join(f'{x:g}' for x in vals)}]"
                     if med[c] is not None else "-")
    base = med[configs[0]]
    ratios = [f"{med[c] / base:.2f}" if med[c] and base else "-"
              for c in configs[1:]]
    print(f"| {labels[w]} | " + " | ".join(cells) + " | " +
          " | ".join(ratios) + " |")
PY
