#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# plot-bars.sh - a grouped bar chart (PNG) of a small table, with
# gnuplot: the data behind a chart in doc/ is kept beside it as text, so
# the chart can be made again and checked against the numbers.
#
# Usage: tests/bench/plot-bars.sh DATA PNG TITLE YLABEL [log]
# DATA: tab-separated columns, a header line first ("row" and one name
# per series), then one line a row: its label, then one number a series.
# Lines starting with '#' are comments. "log": a logarithmic y axis.
set -euo pipefail
[ $# -eq 4 ] || [ $# -eq 5 ] || { sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
data=$1 png=$2 title=$3 ylabel=$4
yaxis="set yrange [0:*]"
[ "${5:-}" = log ] && yaxis="set logscale y 2"
command -v gnuplot >/dev/null || { echo "plot-bars.sh: needs gnuplot (Debian: gnuplot-nox)" >&2; exit 2; }
ncol=$(grep -v '^#' "$data" | head -n 1 | awk -F'\t' '{print NF}')
gnuplot <<GP
set terminal pngcairo size 1000,520 font "sans,10"
set output "$png"
set title "$title"
set ylabel "$ylabel"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xtics rotate by -25 noenhanced
$yaxis
set datafile commentschars "#"
set datafile separator "\t"
set datafile missing "-"
plot for [i=2:$ncol] "$data" using i:xtic(1) title columnheader(i)
GP
echo "wrote $png"
