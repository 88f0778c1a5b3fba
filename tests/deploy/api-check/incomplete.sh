# Calls some operations of spec.yaml, and some that are not in it.
# (scripts/api-check --self-test expects these line numbers.)
api GET /v1/health
api POST /v1/runs -d '{"argv":["true"]}'
api GET /v1/runs/run-1
#
#
api DELETE /v1/runs/$id
api GET /v1/run/$id
api GET /v1/runs/$id/stdout/extra
api GET /v1/$what/x
api $m /v1/health
api GET v1/health
