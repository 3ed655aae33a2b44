"""The decoding table of tests/gpu/bench/decode.sh: graft bench-decode --json
objects (one per file) beside peer_decode.py's JSON lines, one row per
(context, batch, model): decode tokens/s of graft and transformers and their
ratio, the student's speed-up over its teacher (graft's, then the peer's), and
memory per sequence (KV cache + GDN state, as each allocated it).

  python3 decode_table.py graft-teacher.json graft-s50.json ... peer.jsonl"""
import json
import sys


def mib(b):
    return f"{b / 1048576:.2f}"


def load(paths):
    graft, peer = {}, {}
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                o = json.loads(line)
                if "points" in o:  # graft bench-decode
                    label = "teacher" if o["kind"] == "teacher" else f"student {o['gdn_layers']}/{o['layers']} GDN"
                    for pt in o["points"]:
                        graft[(label, pt["context"], pt["batch"])] = pt
                    graft.setdefault(("_labels",), []).append((label, o["model"], o["gdn_layers"]))
                elif o.get("impl") == "transformers":
                    peer[(o["kind"], o["model"], o["context"], o["batch"])] = o
    return graft, peer


def main():
    graft, peer = load(sys.argv[1:])
    labels = graft.pop(("_labels",), [])
    # the peer names a student by its folder, the teacher by the first student's folder
    peer_key = {}
    for label, model, n_gdn in labels:
        if label == "teacher":
            continue
        peer_key[label] = ("student", model)
    teacher_peer = next(((k[0], k[1]) for k in peer if k[0] == "teacher"), None)
    if teacher_peer:
        peer_key["teacher"] = teacher_peer
    points = sorted({(c, b) for (_, c, b) in graft})
    hdr = ("context", "batch", "model", "graft tok/s", "hf tok/s", "graft/hf", "vs teacher (graft, hf)",
           "graft MiB/seq", "hf MiB/seq", "prefill s (graft, hf)")
    rows = [hdr]
    for c, b in points:
        tg = graft.get(("teacher", c, b))
        tp = peer.get(peer_key.get("teacher", ("", ""))[0:2] + (c, b)) if "teacher" in peer_key else None
        for label, _, _ in sorted(labels, key=lambda x: (x[0] != "teacher", -x[2])):
            g = graft.get((label, c, b))
            if not g:
                continue
            pk = peer_key.get(label)
            p = peer.get(pk + (c, b)) if pk else None
            p_ok = p is not None and "decode_tok_s" in p
            vs = "" if label == "teacher" or not tg else f"{g['decode_tok_s'] / tg['decode_tok_s']:.2f}x"
            if label != "teacher" and p_ok and tp and "decode_tok_s" in tp:
                vs += f", {p['decode_tok_s'] / tp['decode_tok_s']:.2f}x"
            rows.append((
                str(c), str(b), label, f"{g['decode_tok_s']:.0f}",
                f"{p['decode_tok_s']:.0f}" if p_ok else (p or {}).get("skipped", "-")[:24],
                f"{g['decode_tok_s'] / p['decode_tok_s']:.2f}x" if p_ok else "-",
                vs or "-",
                mib(g["memory_per_seq"]["total"]),
                mib(p["memory_per_seq"]["total"]) if p_ok else "-",
                f"{g['prefill_s']:.3f}, {p['prefill_s']:.3f}" if p_ok else f"{g['prefill_s']:.3f}, -",
            ))
    w = [max(len(r[i]) for r in rows) for i in range(len(hdr))]
    for r in rows:
        print("  ".join(x.rjust(w[i]) if i != 2 else x.ljust(w[i]) for i, x in enumerate(r)))


if __name__ == "__main__":
    main()
