#!/usr/bin/env python3
"""A fake Hugging Face Hub on 127.0.0.1 for graft's Hub client tests.

Standard library only. Two HTTP servers on random free ports:
  the Hub  - GET /api/models/{org}/{name}[/revision/{rev}]  (model info, ?blobs=true fields)
             GET /api/models/{org}/{name}/tree/{rev}[/{path}]  (file list, as huggingface_hub lists it)
             HEAD/GET /{org}/{name}/resolve/{rev}/{path}
                 regular files: 200, ETag "<git blob sha1>", X-Repo-Commit, Content-Length
                 LFS files:     302 to the CDN, X-Linked-Etag "<sha256>", X-Linked-Size, X-Repo-Commit
             GET  /_control/stats          counters (GETs per file, HEADs, ranges, Authorization leaks)
             POST /_control/faults         replace the fault list (JSON list, see below)
             POST /_control/reset          zero the counters
  the CDN  - GET /lfs/{sha256}?file=...     LFS bytes; Range supported; refuses (403) and counts
             any request carrying an Authorization header.

Faults ({"file": path or "*", "kind": ..., "times": n (default 1), ...}) apply to the GETs that
serve a file's bytes (the CDN for LFS files, resolve for regular ones); "file": "@api" targets
the model-info API:
  drop          send "after" bytes (default: half) then close the connection
  stall         send "after" bytes then send nothing for "seconds" (default 60)
  slow          send "chunk" bytes (default 16384) every "delay" seconds (default 0.2)
  status        answer "status" (e.g. 429, 500), with Retry-After "retry_after" if given
  ignore_range  answer 200 with the whole file even when a Range was asked
  corrupt       flip one byte of the body (sha256 mismatch)
  huge          announce Content-Length "length" (default 10**18; "announce": false sends none and
                closes the connection at the end instead), then send the file and zeros after it
                until the client hangs up (at most "max_bytes", default 256 MB)
  hide_size     (not used up by GETs; "times" counts nothing) the model info gives no size for the
                file and its HEAD no X-Linked-Size / Content-Length, or "head_size" as that size

Repos served:
  karpathy/tinyllamas   stories260K/stories260K.bin, stories260K/tok512.bin (LFS) from
                        $GRAFT_SHARED/models/tinyllamas, and a README.md
  graft-test/tiny-llama a generated Hugging Face Llama folder (config, generation config,
                        tokenizer, tokenizer config, 2 safetensors shards + index, extras)
  graft-test/gated      the same files; 401 (GatedRepo) without the token, 403 with a wrong one
  graft-test/X-fixture  each folder X of --fixtures (default $GRAFT_ROOT/tests/fixtures/hf),
                        *.safetensors as LFS files
Revisions: "main", the tag "v1.0" and the full commit hash; others answer 404 RevisionNotFound.

Usage: fakehub.py --port-file FILE [--token TOKEN] [--faults JSON] [--shared DIR]
FILE receives {"url": hub URL, "cdn": CDN URL} once both servers listen.
"""
import argparse
import hashlib
import http.server
import json
import os
import random
import socket
import struct
import sys
import threading
import time
import urllib.parse

STOP = threading.Event()
LOCK = threading.Lock()
STATS = {"gets": {}, "heads": {}, "api": 0, "auth_leaks": 0, "ranges": {}, "times": {}, "faults_fired": []}
FAULTS = []
TOKEN = "hf_fake_gated_token"


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(data):
    return ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
            % (hashlib.sha256(data).hexdigest(), len(data))).encode()


def safetensors_bytes(tensors):
    """tensors: list of (name, shape, float list) -> safetensors file bytes (F32)."""
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, shape, values in tensors:
        raw = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def tiny_llama_files():
    rng = random.Random(1234)
    D, F, V, H, KV = 16, 32, 1024, 2, 1
    hd = D // H

    def t(name, *shape):
        n = 1
        for s in shape:
            n *= s
        return (name, list(shape), [rng.uniform(-0.1, 0.1) for _ in range(n)])

    shard1 = [t("model.embed_tokens.weight", V, D),
              t("model.layers.0.input_layernorm.weight", D),
              t("model.layers.0.self_attn.q_proj.weight", H * hd, D),
              t("model.layers.0.self_attn.k_proj.weight", KV * hd, D),
              t("model.layers.0.self_attn.v_proj.weight", KV * hd, D),
              t("model.layers.0.self_attn.o_proj.weight", D, H * hd),
              t("model.layers.0.post_attention_layernorm.weight", D),
              t("model.layers.0.mlp.gate_proj.weight", F, D),
              t("model.layers.0.mlp.up_proj.weight", F, D),
              t("model.layers.0.mlp.down_proj.weight", D, F)]
    shard2 = [t("model.norm.weight", D), t("lm_head.weight", V, D)]
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    s1, s2 = safetensors_bytes(shard1), safetensors_bytes(shard2)
    index = {"metadata": {"total_size": len(s1) + len(s2)},
             "weight_map": {**{n: names[0] for n, _, _ in shard1}, **{n: names[1] for n, _, _ in shard2}}}
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": D,
              "intermediate_size": F, "num_hidden_layers": 1, "num_attention_heads": H,
              "num_key_value_heads": KV, "vocab_size": V, "max_position_embeddings": 128,
              "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
              "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float32"}
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for i in range(3, V):
        vocab["t%d" % i] = i
    tokenizer = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
                 "model": {"type": "BPE", "vocab": vocab, "merges": []}}
    js = lambda o: (json.dumps(o, indent=2) + "\n").encode()
    return {
        "config.json": (js(config), False),
        "generation_config.json": (js({"bos_token_id": 1, "eos_token_id": 2}), False),
        "tokenizer.json": (js(tokenizer), False),
        "tokenizer_config.json": (js({"model_max_length": 128, "bos_token": "<s>", "eos_token": "</s>"}), False),
        "model.safetensors.index.json": (js(index), False),
        names[0]: (s1, True),
        names[1]: (s2, True),
        "README.md": (b"# tiny-llama\nA generated fixture for graft's Hub tests.\n", False),
        "extras/notes/deep.txt": (b"a file three folders deep\n", False),
        "onnx/model.onnx": (b"not an onnx model\n", True),
    }


def folder_files(folder):
    """A model folder served as a repo: *.safetensors as LFS files, the rest regular."""
    files = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                files[os.path.relpath(p, folder).replace(os.sep, "/")] = (f.read(), n.endswith(".safetensors"))
    return files


def tinyllamas_files(shared):
    base = os.path.join(shared, "models", "tinyllamas", "stories260K")
    files = {"README.md": (b"# tinyllamas (fake hub copy)\n", False)}
    for n in ("stories260K.bin", "tok512.bin"):
        with open(os.path.join(base, n), "rb") as f:
            files["stories260K/" + n] = (f.read(), True)
    return files


class Repo:
    def __init__(self, files, gated=False):
        self.files = {}  # path -> dict(data, lfs, sha256, etag)
        for path, (data, lfs) in files.items():
            sha = hashlib.sha256(data).hexdigest()
            self.files[path] = {"data": data, "lfs": lfs, "sha256": sha,
                                "blob": git_blob_sha1(lfs_pointer(data) if lfs else data)}
        self.gated = gated
        h = hashlib.sha1()
        for p in sorted(self.files):
            h.update(p.encode() + b"\0" + self.files[p]["sha256"].encode())
        self.commit = h.hexdigest()

    def revision(self, rev):
        return self.commit if rev in ("main", "v1.0", self.commit) else None


REPOS = {}
CDN_URL = [""]


def size_fault(target):
    """The hide_size fault of a file (peeked, never used up), or None."""
    with LOCK:
        for f in FAULTS:
            if f["kind"] == "hide_size" and f.get("file") == target:
                return dict(f)
    return None


def take_fault(target):
    with LOCK:
        for f in FAULTS:
            if f["kind"] == "hide_size":
                continue
            if f.get("file", "*") in ("*", target) and f.get("times", 1) > 0:
                if target == "@api" and f.get("file") != "@api":
                    continue
                f["times"] = f.get("times", 1) - 1
                STATS["faults_fired"].append({"file": target, "kind": f["kind"]})
                return dict(f)
    return None


def bump(kind, key):
    with LOCK:
        STATS[kind][key] = STATS[kind].get(key, 0) + 1


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakehub/1"

    def log_message(self, fmt, *args):
        if os.environ.get("FAKEHUB_VERBOSE"):
            sys.stderr.write("fakehub: " + fmt % args + "\n")

    def reply(self, status, headers=None, body=b"", head=False):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def error(self, status, code, message, head=False):
        body = json.dumps({"error": message}).encode()
        self.reply(status, {"X-Error-Code": code, "X-Error-Message": message,
                            "Content-Type": "application/json"}, body, head)

    def serve_bytes(self, data, target, extra):
        """Serves a file's bytes with Range support and the configured faults."""
        fault = take_fault(target) or {}
        kind = fault.get("kind")
        rng = self.headers.get("Range")
        with LOCK:
            STATS["ranges"].setdefault(target, []).append(rng or "")
            STATS["times"].setdefault(target, []).append(time.monotonic())
        if kind == "status":
            hdr = dict(extra)
            if "retry_after" in fault:
                hdr["Retry-After"] = str(fault["retry_after"])
            self.reply(int(fault.get("status", 500)), hdr, b"fault injected\n")
            return
        start = 0
        if rng and kind != "ignore_range":
            try:
                unit, spec = rng.split("=", 1)
                a, b = spec.split("-", 1)
                start = int(a)
                assert unit.strip() == "bytes" and b == ""
            except (ValueError, AssertionError):
                self.reply(400, {}, b"bad range\n")
                return
            if start >= len(data):
                self.reply(416, {"Content-Range": "bytes */%d" % len(data)}, b"")
                return
        body = data[start:]
        if kind == "huge":
            self.send_huge(body, fault)
            return
        if kind == "corrupt" and body:
            i = len(body) // 2
            body = body[:i] + bytes([body[i] ^ 0xFF]) + body[i + 1:]
        status = 206 if start > 0 else 200
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            if kind in ("drop", "stall"):
                after = int(fault.get("after", len(body) // 2))
                self.wfile.write(body[:after])
                self.wfile.flush()
                if kind == "stall":
                    end = time.time() + float(fault.get("seconds", 60))
                    while time.time() < end and not STOP.is_set():
                        time.sleep(0.05)
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if kind == "slow":
                chunk, delay = int(fault.get("chunk", 16384)), float(fault.get("delay", 0.2))
                for i in range(0, len(body), chunk):
                    if STOP.is_set():
                        return
                    self.wfile.write(body[i:i + chunk])
                    self.wfile.flush()
                    time.sleep(delay)
                return
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


    def send_huge(self, body, fault):
        """A body far larger than the file: the file, then zeros, until the client hangs up."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if fault.get("announce", True):
            self.send_header("Content-Length", str(int(fault.get("length", 10 ** 18))))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        limit, sent, zeros = int(fault.get("max_bytes", 256 << 20)), 0, bytes(65536)
        try:
            self.wfile.write(body)
            sent = len(body)
            while sent < limit and not STOP.is_set():
                self.wfile.write(zeros)
                sent += len(zeros)
        except (BrokenPipeError, ConnectionResetError):
            pass
        with LOCK:
            STATS.setdefault("huge_sent", {})[fault.get("file", "*")] = sent


class HubHandler(Handler):
    def auth_error(self, repo, head=False):
        if not repo.gated:
            return False
        auth = self.headers.get("Authorization", "")
        if auth == "Bearer " + TOKEN:
            return False
        if auth:
            self.error(403, "GatedRepo", "Access to this gated repo is restricted; your token has no access.", head)
        else:
            self.error(401, "GatedRepo", "Access to this gated repo is restricted. You must be authenticated.", head)
        return True

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.path == "/_control/faults":
            faults = json.loads(body or b"[]")
            with LOCK:
                FAULTS[:] = faults
            self.reply(200, {}, b"ok\n")
        elif self.path == "/_control/reset":
            with LOCK:
                STATS.update({"gets": {}, "heads": {}, "api": 0, "auth_leaks": 0, "ranges": {},
                              "times": {}, "faults_fired": []})
            self.reply(200, {}, b"ok\n")
        else:
            self.reply(404, {}, b"")

    def do_HEAD(self):
        self.handle_hub(head=True)

    def do_GET(self):
        self.handle_hub(head=False)

    def handle_hub(self, head):
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if parts[:2] == ["_control", "stats"]:
            with LOCK:
                body = json.dumps(STATS).encode()
            self.reply(200, {"Content-Type": "application/json"}, body, head)
            return
        if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "tree":
            self.tree(parts[2] + "/" + parts[3], parts[5], "/".join(parts[6:]), head)
            return
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            self.model_info(parts[2] + "/" + parts[3], parts[5] if len(parts) >= 6 and parts[4] == "revision" else "main",
                            head)
            return
        if len(parts) >= 5 and parts[2] == "resolve":
            self.resolve(parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:]), head)
            return
        self.reply(404, {}, b"not found\n", head)

    def model_info(self, repo_id, rev, head):
        with LOCK:
            STATS["api"] += 1
        repo = REPOS.get(repo_id)
        if repo is None:
            self.error(404, "RepoNotFound", "Repository not found", head)
            return
        if self.auth_error(repo, head):
            return
        fault = take_fault("@api")
        if fault and fault["kind"] == "status":
            hdr = {"Retry-After": str(fault["retry_after"])} if "retry_after" in fault else {}
            self.reply(int(fault.get("status", 500)), hdr, b"fault injected\n", head)
            return
        commit = repo.revision(rev)
        if commit is None:
            self.error(404, "RevisionNotFound", "Invalid rev id: %s" % rev, head)
            return
        siblings = []
        for path, f in sorted(repo.files.items()):
            s = {"rfilename": path, "size": len(f["data"]), "blobId": f["blob"]}
            if f["lfs"]:
                s["lfs"] = {"sha256": f["sha256"], "size": len(f["data"]),
                            "pointerSize": len(lfs_pointer(f["data"]))}
            if size_fault(repo_id + "/" + path):
                del s["size"]
                s.get("lfs", {}).pop("size", None)
            siblings.append(s)
        info = {"_id": "fake", "id": repo_id, "modelId": repo_id, "sha": commit, "private": False,
                "gated": "manual" if repo.gated else False, "siblings": siblings}
        self.reply(200, {"Content-Type": "application/json"}, json.dumps(info).encode(), head)

    def tree(self, repo_id, rev, prefix, head):
        """The tree API huggingface_hub's snapshot_download lists files with (one page, recursive)."""
        repo = REPOS.get(repo_id)
        if repo is None:
            self.error(404, "RepoNotFound", "Repository not found", head)
            return
        if self.auth_error(repo, head):
            return
        if repo.revision(rev) is None:
            self.error(404, "RevisionNotFound", "Invalid rev id: %s" % rev, head)
            return
        out, folders = [], set()
        for path, f in sorted(repo.files.items()):
            if prefix and not path.startswith(prefix + "/"):
                continue
            parts = path.split("/")
            for i in range(1, len(parts)):
                folders.add("/".join(parts[:i]))
            e = {"type": "file", "oid": f["blob"], "size": len(f["data"]), "path": path}
            if f["lfs"]:
                e["lfs"] = {"oid": f["sha256"], "size": len(f["data"]), "pointerSize": len(lfs_pointer(f["data"]))}
            out.append(e)
        out += [{"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "path": d}
                for d in sorted(folders) if not prefix or d.startswith(prefix + "/")]
        self.reply(200, {"Content-Type": "application/json"}, json.dumps(out).encode(), head)

    def resolve(self, repo_id, rev, path, head):
        repo = REPOS.get(repo_id)
        if repo is None:
            self.error(404, "RepoNotFound", "Repository not found", head)
            return
        if self.auth_error(repo, head):
            return
        commit = repo.revision(rev)
        if commit is None:
            self.error(404, "RevisionNotFound", "Invalid rev id: %s" % rev, head)
            return
        f = repo.files.get(path)
        if f is None:
            self.error(404, "EntryNotFound", "%s does not exist on %s" % (path, rev), head)
            return
        key = repo_id + "/" + path
        if head:
            bump("heads", key)
        hidden = size_fault(key)
        if f["lfs"]:
            loc = "%s/lfs/%s?file=%s" % (CDN_URL[0], f["sha256"], urllib.parse.quote(key))
            hdr = {"Location": loc, "X-Repo-Commit": commit, "ETag": '"%s"' % f["blob"],
                   "X-Linked-Etag": '"%s"' % f["sha256"], "X-Linked-Size": str(len(f["data"]))}
            if hidden:
                del hdr["X-Linked-Size"]
                if "head_size" in hidden:
                    hdr["X-Linked-Size"] = str(int(hidden["head_size"]))
            self.reply(302, hdr, b"", head)
            return
        hdr = {"X-Repo-Commit": commit, "ETag": '"%s"' % f["blob"], "Content-Type": "application/octet-stream"}
        if head:
            hdr["Accept-Ranges"] = "bytes"
            self.send_response(200)
            for k, v in hdr.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(f["data"])))
            self.end_headers()
            return
        bump("gets", key)
        self.serve_bytes(f["data"], key, hdr)


class CdnHandler(Handler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        key = q.get("file", [""])[0]
        if self.headers.get("Authorization"):
            with LOCK:
                STATS["auth_leaks"] += 1
            self.reply(403, {}, b"<Error>Authorization header not allowed on signed URLs</Error>\n")
            return
        sha = url.path.rsplit("/", 1)[-1]
        for repo_id, repo in REPOS.items():
            for path, f in repo.files.items():
                if f["sha256"] == sha and repo_id + "/" + path == key:
                    bump("gets", key)
                    self.serve_bytes(f["data"], key, {"Content-Type": "application/octet-stream",
                                                      "ETag": '"%s"' % sha})
                    return
        self.reply(404, {}, b"no such object\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global TOKEN
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--token", default=TOKEN)
    ap.add_argument("--faults", default=os.environ.get("FAKEHUB_FAULTS", "[]"))
    ap.add_argument("--shared", default=os.environ.get("GRAFT_SHARED", ""))
    ap.add_argument("--fixtures", default=os.path.join(os.environ.get("GRAFT_ROOT", ""), "tests", "fixtures", "hf"),
                    help="each folder FOO here is served as graft-test/FOO-fixture")
    args = ap.parse_args()
    TOKEN = args.token
    FAULTS[:] = json.loads(args.faults)
    tiny = tiny_llama_files()
    REPOS["graft-test/tiny-llama"] = Repo(tiny)
    REPOS["graft-test/gated"] = Repo(tiny, gated=True)
    if args.shared and os.path.isdir(os.path.join(args.shared, "models", "tinyllamas")):
        REPOS["karpathy/tinyllamas"] = Repo(tinyllamas_files(args.shared))
    if args.fixtures and os.path.isdir(args.fixtures):
        for name in sorted(os.listdir(args.fixtures)):
            if os.path.isdir(os.path.join(args.fixtures, name)):
                REPOS["graft-test/%s-fixture" % name] = Repo(folder_files(os.path.join(args.fixtures, name)))
    hub = Server(("127.0.0.1", 0), HubHandler)
    cdn = Server(("127.0.0.1", 0), CdnHandler)
    CDN_URL[0] = "http://127.0.0.1:%d" % cdn.server_address[1]
    for s in (hub, cdn):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    info = {"url": "http://127.0.0.1:%d" % hub.server_address[1], "cdn": CDN_URL[0],
            "commits": {k: r.commit for k, r in REPOS.items()}, "pid": os.getpid()}
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.replace(tmp, args.port_file)
    import signal
    # timeout(1) delivers SIGTERM twice (to us and to its process group): a
    # handler taking a lock (Event.set) could deadlock on itself; just leave.
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    try:
        while not STOP.is_set():
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    STOP.set()
    # Handler threads may sit in a stall; nothing needs a graceful end.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
