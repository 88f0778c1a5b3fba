# Attack: reach a host service on loopback (127.0.0.1:8001, started by root
# outside the run).  $1: the workspace.
cd "$1"
curl -s --max-time 10 http://127.0.0.1:8001/secret.txt >seen 2>/dev/null || echo "curl exit $?" >curl.txt
exit 0
