# Session 24's second call, sent at once after lease1.sh so the machine is still warm (carry .carry and
# .peers): session 23's next.sh (the GDN layer beside FLA, then the 50 % hybrid step beside torch + FLA
# compiled, three pairs) on the code to be submitted: with nt4.patch applied here when lease1.sh on this
# machine chose it (/tmp/graft-winner), else the head as it is.
if [ "$(cat /tmp/graft-winner 2>/dev/null)" = nt4 ]; then
    patch -s -p1 <.carry/nt4.patch && echo "== nt4.patch applied" || exit 1
else
    echo "== the head as it is ($(cat /tmp/graft-winner 2>/dev/null || echo 'no lease1 on this machine'))"
fi
. docs/runs/perf-gpu-2026-12-06-s23/next.sh
