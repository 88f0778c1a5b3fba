# Calls every operation of spec.yaml, in the ways the daemon's tests write them.
api() { curl -sS --unix-socket "$SOCK" -X "$1" "http://localhost$2" "${@:3}"; }
# api DELETE /v1/nothing  (a comment: not a call)
api GET /v1/health
out=$(api GET '/metrics')
api POST /v1/runs -d @body.json | jq -r .id
[ "$(api GET "/v1/runs?state=running&tenant=ci" | jq '.runs|length')" = 1 ]
if api GET "/v1/runs/${id}" >/dev/null; then :; fi
api GET "/v1/runs/$id/stdout?offset=0&follow=true" > "$T/out"
x=1; api POST /v1/runs/"$id"/cancel; y=2
api DELETE /v1/health   # api-check: not-in-spec (the 405 case)
api GET /v1/no/such/path  # api-check: not-in-spec (the 404 case)
