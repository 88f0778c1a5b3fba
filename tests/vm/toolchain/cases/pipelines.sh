# Shell pipelines: seq, awk, sort, uniq, head, find, xargs, grep, tee, cut,
# tr, paste, comm.  $1: the workspace.
cd "$1"
# 100000 = 97 * 1030 + 90: the residues 1..90 occur 1031 times, 0 and 91..96 1030 times
seq 1 100000 | awk '{ print $1 % 97 }' | sort -n | uniq -c | sort -k1,1nr -k2,2n | head -n 3 >top.txt
mkdir -p tree/a/b tree/c
for i in 1 2 3 4 5; do echo "line $i" >"tree/a/f$i.txt"; done
echo needle >tree/a/b/deep.txt
echo needle >tree/c/other.txt
find tree -name '*.txt' -print0 | xargs -0 grep -l needle | sort >found.txt
printf 'b 2\na 1\nc 3\n' | tee unsorted.txt | sort | cut -d' ' -f2 | tr '\n' ',' >cut.txt
paste -d: found.txt found.txt | head -n 1 >paste.txt
sort unsorted.txt >s1.txt
printf 'a 1\nd 4\n' >s2.txt
comm -12 s1.txt s2.txt >comm.txt
