# The places a command writes are claimed before any work starts: an
# unwritable --ckpt / --out / --ckpt-dir / --log-windows is refused at once
# with one line (no training step, no conversion); a place of the wrong kind
# is refused; a second writer of the same place is refused while the first
# holds it, and the lock goes with the first writer (also when it ends by
# SIGINT, and then a stopped conversion or half-life fix writes nothing).
. "$(dirname "$0")/../lib.sh"
need_stories
TS=$SHARED/data/tinystories.txt
: >"$TMP/file"
TRAIN="--teacher $STORIES --keep 0.5 --data $TS --ctx 32 --batch 2 --tokens 640 --log-every 1 --threads 1"

# unwritable: /proc takes no new files (for root too); a path under a file
expect_error "--ckpt /proc/x.ckpt: cannot write in /proc" "$G" train "$STORIES" $TRAIN --ckpt /proc/x.ckpt
[ -s "$TMP/out" ] && fail "train wrote progress before refusing its --ckpt: $(cat "$TMP/out")"
expect_error "--ckpt $TMP/file/x.ckpt: $TMP/file is not a folder" "$G" train "$STORIES" $TRAIN --ckpt "$TMP/file/x.ckpt"
expect_error "--log-windows /proc/w.log: cannot write in /proc" "$G" train "$STORIES" $TRAIN --log-windows /proc/w.log
expect_error "--out /proc/stu: cannot write in /proc" "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random \
    --calib "$TS" --out /proc/stu
expect_error "--out $TMP/nope/stu: folder $TMP/nope" "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random \
    --calib "$TS" --out "$TMP/nope/stu"
expect_error "--ckpt-dir /proc/ck" "$G" race "$STORIES" --inits random,copy --data "$TS" --ctx 32 --tokens 640 --ckpt-dir /proc/ck
# the wrong kind of place
expect_error "--ckpt $TMP is a folder" "$G" train "$STORIES" $TRAIN --ckpt "$TMP"
expect_error "--out $TMP/file exists and is not a folder" "$G" convert "$STORIES" --keep 0.5 --strategy uniform \
    --init random --calib "$TS" --out "$TMP/file"

# train --out of a student folder into an unwritable place: before training
"$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TS" --out "$TMP/stu" --threads 1 \
    >/dev/null 2>"$TMP/err" || fail "convert: $(cat "$TMP/err")"
[ -e "$TMP/stu.lock" ] && fail "convert left its lock file"
# a new folder named with a trailing slash: its parent is where it is made
"$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TS" --out "$TMP/slash/" --threads 1 \
    >/dev/null 2>"$TMP/err" || fail "convert --out DIR/: $(cat "$TMP/err")"
[ -f "$TMP/slash/config.json" ] || fail "convert --out DIR/ wrote no student"
expect_error "--out /proc/trained: cannot write in /proc" "$G" train "$TMP/stu" --teacher "$STORIES" --data "$TS" \
    --ctx 32 --tokens 640 --out /proc/trained

expect_error "--out /proc/fixed: cannot write in /proc" "$G" halflife "$TMP/stu" --fix 2:0=64 --out /proc/fixed --text "$TS"
expect_error "--dump /proc/d.jsonl: cannot write in /proc" "$G" recall "$STORIES" --dump /proc/d.jsonl

# a second writer: refused while another process holds the place
flock "$TMP/stu.lock" sleep 60 &
holder=$!
i=0
until [ -e "$TMP/stu.lock" ]; do i=$((i + 1)); [ $i -gt 100 ] && fail "flock did not start"; sleep 0.1; done
sleep 0.2
expect_error "--out $TMP/stu is being written by another graft process" "$G" convert "$STORIES" --keep 0.5 \
    --strategy uniform --init random --calib "$TS" --out "$TMP/stu"
# the same folder spelled another way (relative, with a trailing slash) meets the same lock
(cd "$TMP" && expect_error "--out ./stu/ is being written by another graft process" "$G" convert "$STORIES" \
    --keep 0.5 --strategy uniform --init random --calib "$TS" --out ./stu/) || exit 1
kill "$holder"
wait "$holder" 2>/dev/null

# Commands stopped by SIGINT (sigint.py MODE PLACE GRAFT-COMMAND..., PLACE the path the command claims):
#   two: two trainings on one --ckpt: the second is refused and names the first's pid; the first,
#        stopped by SIGINT after its first step, writes its checkpoint and removes its lock;
#   early: a SIGINT as soon as the lock is taken (while the model loads, before the first step): the
#        command ends by SIGINT and leaves no lock (until session 38 for train, 39 for convert,
#        halflife and recall, the default action, before graft caught the signal, left it);
#   early-none: the same, and nothing is written at PLACE (a cancelled conversion or fix writes no
#        folder; the default action could leave a half-written model file's temporary beside it).
cat >"$TMP/sigint.py" <<'PY'
import os, signal, subprocess, sys, time
mode, ckpt, g = sys.argv[1], sys.argv[2], sys.argv[3:]
lock, log = ckpt + ".lock", ckpt + ".log"

def start(stdout):
    # (tests/run.sh starts tests in the background, where SIGINT is ignored, and graft then leaves it so)
    return subprocess.Popen(g, stdout=stdout, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

def wait_for(p, ready, what, poll):
    t0 = time.time()
    while not ready():
        if time.time() - t0 > 60 or p.poll() is not None:
            sys.exit(what)
        time.sleep(poll)

def interrupt(p, what):
    p.send_signal(signal.SIGINT)
    try:
        p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()  # no training left running after the test
        sys.exit(what + " still runs 60 s after SIGINT")

if mode == "two":
    first = start(open(log, "w"))
    # its lock, and its first step (the SIGINT below is to land in the training, not in the teacher's load)
    wait_for(first, lambda: os.path.exists(lock) and os.path.getsize(lock) > 0 and "step 1/" in open(log).read(),
             "the first training did not take its lock and start", 0.05)
    second = subprocess.run(g, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    interrupt(first, "the first training")
    err = second.stderr.decode().strip()
    want = "--ckpt %s is being written by another graft process (pid %d)" % (ckpt, first.pid)
    if second.returncode != 1 or want not in err or len(err.splitlines()) != 1:
        sys.exit("second writer: exit %d, %r" % (second.returncode, err))
    if first.returncode != -signal.SIGINT:
        sys.exit("first writer: exit %d (%s)" % (first.returncode, first.stderr.read().decode()))
else:
    p = start(subprocess.DEVNULL)
    wait_for(p, lambda: os.path.exists(lock), "the command did not take its lock", 0.001)
    interrupt(p, "the command")
    if p.returncode != -signal.SIGINT:
        sys.exit("exit %d, not by SIGINT (%s)" % (p.returncode, p.stderr.read().decode()))
if os.path.exists(lock):
    sys.exit("the lock outlived its writer")
if mode == "two" and not os.path.getsize(ckpt):
    sys.exit("no checkpoint")
if mode == "early-none" and os.path.exists(ckpt):
    sys.exit("a stopped command wrote %s: %s" % (ckpt, sorted(os.listdir(ckpt)) if os.path.isdir(ckpt) else "a file"))
PY
python3 "$TMP/sigint.py" two "$TMP/run.ckpt" "$G" train "$STORIES" --teacher "$STORIES" --keep 0.5 --data "$TS" \
    --ctx 32 --batch 2 --tokens 10000000 --log-every 1 --threads 1 --ckpt "$TMP/run.ckpt" || fail "two writers on one --ckpt"
python3 "$TMP/sigint.py" early "$TMP/early.ckpt" "$G" train "$STORIES" --teacher "$STORIES" --keep 0.5 --data "$TS" \
    --ctx 32 --batch 2 --tokens 10000000 --threads 1 --ckpt "$TMP/early.ckpt" || fail "a SIGINT before the first step"
# a conversion with Stage 2 (seconds of work, so the SIGINT lands in it), a half-life fix, a recall run
python3 "$TMP/sigint.py" early-none "$TMP/early-stu" "$G" convert "$STORIES" --keep 0.5 --strategy uniform \
    --init taylor-calibrate --calib "$TS" --out "$TMP/early-stu" --threads 1 || fail "convert stopped by SIGINT"
python3 "$TMP/sigint.py" early-none "$TMP/early-fix" "$G" halflife "$TMP/stu" --fix 2:0=64 --out "$TMP/early-fix" \
    --text "$TS" --threads 1 || fail "halflife --fix stopped by SIGINT"
python3 "$TMP/sigint.py" early "$TMP/early.jsonl" "$G" recall "$STORIES" --tasks passkey,niah-number,vt \
    --lengths 384,512 --depths 0,50,100 --samples 8 --dump "$TMP/early.jsonl" --threads 1 || fail "recall --dump stopped by SIGINT"
exit 0
