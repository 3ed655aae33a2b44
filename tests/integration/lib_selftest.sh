#!/bin/sh
# tests/lib.sh's expect_error must be able to fail: a command that succeeds, a
# command killed by a signal, and two stderr lines are each reported.
. "$(dirname "$0")/../lib.sh"
must_fail() { # runs expect_error in a subshell; it must exit non-zero
    ( expect_error "$@" ) >"$TMP/self.out" 2>&1 && fail "expect_error accepted: $*"
    return 0
}
must_fail "boom" sh -c 'echo boom >&2; exit 0'                 # no failure at all
must_fail "boom" sh -c 'echo boom >&2; kill -SEGV $$'           # a crash (exit 139)
grep -q "crashed with signal" "$TMP/self.out" || fail "the crash was not named: $(cat "$TMP/self.out")"
must_fail "boom" sh -c 'echo boom >&2; echo more >&2; exit 1'  # two lines
( expect_error "boom" sh -c 'echo boom >&2; exit 1' ) || fail "a clean one-line failure was rejected"
exit 0
