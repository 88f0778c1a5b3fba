# The host's /tmp, /var/tmp and /dev/shm are not what the run sees: root's
# files there (DIR/host-owned-by-1000, DIR/host-owned-by-root) are invisible.
# $1: the workspace.
cd "$1"
for d in /tmp /var/tmp /dev/shm; do
	for f in host-owned-by-1000 host-owned-by-root; do
		if [ -e "$d/$f" ] || ls -A "$d" 2>/dev/null | grep -qx "$f"; then
			echo "the run sees the host's $d/$f"
			bad=1
		fi
	done
done
[ -z "${bad:-}" ]
