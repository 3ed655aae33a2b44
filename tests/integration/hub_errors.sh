#!/bin/sh
# One clear line and a non-zero exit for: an unknown repo, an unknown file,
# an unknown revision, a refused connection, a malformed repo id; and the
# free-space check refuses a download that cannot fit before any GET.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
need_tinyllamas
start_hub
g download nobody/nothing
expect_fail "unknown repo" "not found"
grep -q "nobody/nothing" "$T/err" || fail "the error does not name the repo"

g download karpathy/tinyllamas:stories260K/missing.bin
expect_fail "unknown file" "no file 'stories260K/missing.bin'"

g download graft-test/tiny-llama@no-such-branch
expect_fail "unknown revision" "unknown revision 'no-such-branch'"

g download 'not a repo'
[ "$RC" -eq 2 ] || fail "a malformed repo id should be a usage error (got $RC)"
g download 'a--b/c'
[ "$RC" -eq 2 ] || fail "'--' in a repo id should be refused (got $RC)"
g download 'org/name:../../etc/passwd'
[ "$RC" -eq 2 ] || fail "a path escaping the repo should be refused (got $RC)"

# nothing listens on the port: refused connections are retried, then one line
PORT=$(python3 -S -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
HF_ENDPOINT=http://127.0.0.1:$PORT g download graft-test/tiny-llama
expect_fail "no server" "cannot connect"
grep -q "HF_HUB_OFFLINE" "$T/err" || fail "the no-network error does not mention HF_HUB_OFFLINE"

# not enough space: the cache on a tiny file system (needs root for tmpfs)
MNT="$T/small"
mkdir -p "$MNT"
if mount -t tmpfs -o size=256k tmpfs "$MNT" 2>/dev/null; then
    EXTRA_CLEANUP="umount '$MNT'"
    reset_stats
    HF_HUB_CACHE="$MNT/hub" g download karpathy/tinyllamas:stories260K/stories260K.bin
    expect_fail "no space" "not enough disk space"
    [ "$(hubstat gets karpathy/tinyllamas/stories260K/stories260K.bin)" -eq 0 ] || fail "bytes were fetched before the space check"
else
    echo "(tmpfs not mountable here: free-space check not exercised)"
fi
echo ok
