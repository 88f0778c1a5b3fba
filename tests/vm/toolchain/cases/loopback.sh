# A development server and its client in one run, over loopback, with no
# network rule: python3 -m http.server on 127.0.0.1:8000, then curl.
# $1: the workspace.
cd "$1"
mkdir -p site
echo hello-loopback >site/hello.txt
python3 -m http.server 8000 --bind 127.0.0.1 --directory site >server.log 2>&1 &
server=$!
i=0
until curl -s -o /dev/null --max-time 5 http://127.0.0.1:8000/; do
	kill -0 "$server" 2>/dev/null || { echo "the server died:"; cat server.log; exit 1; }
	i=$((i + 1))
	[ "$i" -lt 60 ] || { echo "the server never answered"; kill "$server"; exit 1; }
	sleep 0.5
done
curl -s --max-time 20 http://127.0.0.1:8000/hello.txt >got.txt || { echo "curl failed: $?"; kill "$server"; exit 1; }
kill "$server"
wait "$server" || true
[ "$(cat got.txt)" = hello-loopback ]
