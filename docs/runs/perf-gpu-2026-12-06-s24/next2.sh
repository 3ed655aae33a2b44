# For the next session, sent at once after next1.sh so the machine is still warm (carry .carry and
# .peers; not run): session 23's next.sh (the GDN layer beside FLA, then the 50 % hybrid step beside
# torch + FLA compiled, three pairs) on the code next1.sh chose on this machine (/tmp/graft-winner):
# with nt4f.patch applied when it chose nt4f, else the head as it is.
if [ "$(cat /tmp/graft-winner 2>/dev/null)" = nt4f ]; then
    patch -s -p1 <.carry/nt4f.patch && echo "== nt4f.patch applied" || exit 1
else
    echo "== the head as it is ($(cat /tmp/graft-winner 2>/dev/null || echo 'no next1.sh on this machine'))"
fi
. docs/runs/perf-gpu-2026-12-06-s23/next.sh
