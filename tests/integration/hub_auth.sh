#!/bin/sh
# A gated repo: without a token a clear error that says how to set HF_TOKEN;
# a wrong token is refused; the right one from HF_TOKEN or from $HF_HOME/token
# works; the token never reaches the CDN the LFS files are redirected to.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
start_hub
R=graft-test/gated
g download $R
expect_fail "gated without a token" "HF_TOKEN"
grep -q "gated" "$T/err" || fail "the error does not say the repo is gated: $(cat "$T/err")"
[ ! -d "$CACHE/models--graft-test--gated/snapshots" ] || fail "something was linked"

HF_TOKEN=hf_wrong g download $R
expect_fail "gated with a wrong token" "has no access"

HF_TOKEN=$TOKEN g download $R --quiet
expect_ok "gated with HF_TOKEN"
[ -f "$(snapshot_file $R model-00001-of-00002.safetensors)" ] || fail "shard missing"
[ "$(hubstat auth_leaks)" -eq 0 ] || fail "the token was forwarded to the CDN on the LFS redirect"
[ "$(hubstat gets $R/model-00001-of-00002.safetensors)" -eq 1 ] || fail "the CDN did not serve the shard once"
check_cache $R

# the token file, with a trailing newline as huggingface-cli writes it
rm -rf "$CACHE"
mkdir -p "$HF_HOME"
printf '%s\n' "$TOKEN" >"$HF_HOME/token"
g download $R --quiet
expect_ok "gated with \$HF_HOME/token"
[ "$(hubstat auth_leaks)" -eq 0 ] || fail "the token was forwarded to the CDN"
# HF_TOKEN wins over the file
HF_TOKEN=hf_wrong g download $R --include README.md --quiet
expect_fail "HF_TOKEN before the token file" "HTTP 403"
check_cache $R
echo ok
