# The victim of the cross-run attacks: writes a secret into its /tmp,
# /var/tmp and /dev/shm, listens on 127.0.0.1:8002, says it is ready and
# waits for root's stop file, then checks that its secrets are intact.
# $1: the workspace, $2: the secret, $3: the stop file.
cd "$1"
for d in /tmp /var/tmp /dev/shm; do
	if (printf '%s' "$2" >"$d/victim-secret") 2>/dev/null; then echo "$d" >>made; fi
done
mkdir -p site
printf '%s' "$2" >site/secret.txt
python3 -m http.server 8002 --bind 127.0.0.1 --directory site >server.log 2>&1 &
server=$!
i=0
while [ "$i" -lt 40 ] && kill -0 "$server" 2>/dev/null; do
	if [ "$(curl -s --max-time 5 http://127.0.0.1:8002/secret.txt 2>/dev/null)" = "$2" ]; then
		echo listening >>made
		break
	fi
	i=$((i + 1))
	sleep 0.5
done
echo $$ >pid
touch ready
i=0
while [ ! -e "$3" ] && [ "$i" -lt 3000 ]; do
	sleep 0.2
	i=$((i + 1))
done
for d in /tmp /var/tmp /dev/shm; do
	[ "$(cat "$d/victim-secret" 2>/dev/null)" != "$2" ] || echo "$d" >>intact
done
kill "$server" 2>/dev/null || true
exit 0
