# Attack: change the host's /tmp, /var/tmp and /dev/shm.  Root made
# DIR/host-owned-by-1000 in each, owned by the run's own uid (so only tether
# stands in the way), before the run.  Every attempt may fail; what did not
# is written to the workspace.  $1: the workspace.
cd "$1"
for d in /tmp /var/tmp /dev/shm; do
	f=$d/host-owned-by-1000
	(echo run-wrote >"$f") 2>/dev/null && echo "truncated $f" >>did || true
	(echo run-appended >>"$f") 2>/dev/null && echo "appended $f" >>did || true
	chmod 0644 "$f" 2>/dev/null && echo "chmod $f" >>did || true
	mv "$f" "$f.moved" 2>/dev/null && echo "moved $f" >>did || true
	rm -f "$f" 2>/dev/null && echo "removed $f" >>did || true
	(echo new >"$d/made-by-run") 2>/dev/null && echo "created $d/made-by-run" >>did || true
	mkdir "$d/dir-by-run" 2>/dev/null && echo "mkdir $d/dir-by-run" >>did || true
done
exit 0
