# sort -T /tmp, as scripts write it: temporary files in /tmp by name.
# $1: the workspace.
cd "$1"
seq 1 200000 | shuf >shuffled.txt
sort -n -S 1M -T /tmp shuffled.txt >sorted.txt
sort -n -c sorted.txt
