# sort with more input than its buffer: it spills to temporary files in
# $TMPDIR.  $1: the workspace.
cd "$1"
seq 1 200000 | shuf >shuffled.txt
sort -n -S 1M shuffled.txt >sorted.txt
sort -n -c sorted.txt
