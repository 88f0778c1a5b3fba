# The attacker of the cross-run attacks, running while the victim waits:
# reads, lists and writes the victim's /tmp, /var/tmp and /dev/shm by name
# and through /proc/VICTIM/root, and connects to its listener.  What it saw
# goes to "seen", what it changed to "did".  $1: the workspace, $2: the
# victim's pid.
cd "$1"
v=$2
for d in /tmp /var/tmp /dev/shm; do
	cat "$d/victim-secret" >>seen 2>/dev/null || true
	ls -A "$d" >>seen 2>/dev/null || true
	cat "/proc/$v/root$d/victim-secret" >>seen 2>/dev/null || true
	ls -A "/proc/$v/root$d" >>seen 2>/dev/null || true
	(printf pwned >"/proc/$v/root$d/victim-secret") 2>/dev/null && echo "wrote /proc/$v/root$d/victim-secret" >>did || true
	rm -f "/proc/$v/root$d/victim-secret" 2>/dev/null && [ ! -e "/proc/$v/root$d/victim-secret" ] &&
		echo "removed /proc/$v/root$d/victim-secret" >>did || true
	# by name: with a /tmp of its own this changes only the attacker's
	(printf pwned >"$d/victim-secret") 2>/dev/null || true
done
ls -A /run/tether/tmp >>seen 2>/dev/null || true
curl -s --max-time 10 http://127.0.0.1:8002/secret.txt >>seen 2>/dev/null || true
exit 0
