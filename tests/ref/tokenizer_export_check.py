"""Checks a tokenizer.json graft wrote against graft's own ids.

    python tokenizer_export_check.py TOKENIZER_DIR TEXT GRAFT_IDS.json [--auto]

GRAFT_IDS.json is `student_tool tokenize` output for the same TEXT bytes with
the tokenizer graft read (llama2.c tokenizer.bin, GGUF metadata):
{"ids": [...], "ids_bos": [...], "bos": id or -1}. The text is decoded as
UTF-8 with errors="replace", the rule graft applies before a tokenizer.json
pipeline. Checks, with the Hugging Face `tokenizers` library:
  encode(text, add_special_tokens=False).ids == graft's ids (id for id)
  encode(text).ids == graft's ids with BOS (the post-processor adds BOS
  exactly when graft does)
and with --auto, transformers' AutoTokenizer gives the same ids
(tokenizer_config.json: class, special tokens), called both ways:
from_pretrained(DIR, trust_remote_code=True), the documented call for a
folder with custom model code, and plain from_pretrained(DIR) as a
non-interactive session makes it (transformers 5 first loads config.json,
asks whether to run the folder's custom code, and without an answer falls
back to a generic config: the tokenizer does not need the model code).
Exit 1 with the first differing position on failure.
"""
import json
import sys


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def compare(what, got, want):
    if got != want:
        i = first_diff(got, want)
        print(f"FAIL {what}: {len(got)} ids vs graft's {len(want)}; first difference at {i}: "
              f"{got[max(0, i - 3):i + 4]} vs {want[max(0, i - 3):i + 4]}")
        sys.exit(1)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 3:
        sys.exit(__doc__)
    folder, text_path, ids_path = args
    text = open(text_path, "rb").read().decode("utf-8", errors="replace")
    ref = json.load(open(ids_path))
    from tokenizers import Tokenizer, __version__

    tok = Tokenizer.from_file(f"{folder}/tokenizer.json")
    compare("tokenizers, no special tokens", tok.encode(text, add_special_tokens=False).ids, ref["ids"])
    compare("tokenizers, with special tokens", tok.encode(text).ids, ref["ids_bos"])
    line = f"ok {folder}: {len(ref['ids'])} ids equal graft's (tokenizers {__version__})"
    if "--auto" in sys.argv:
        import transformers
        from transformers import AutoTokenizer

        import io

        at = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)
        compare("AutoTokenizer", at(text)["input_ids"], ref["ids_bos"])
        compare("AutoTokenizer, no special tokens", at(text, add_special_tokens=False)["input_ids"], ref["ids"])
        if ref["bos"] >= 0 and at.bos_token_id != ref["bos"]:
            print(f"FAIL AutoTokenizer bos_token_id {at.bos_token_id} != graft's {ref['bos']}")
            sys.exit(1)
        stdin, sys.stdin = sys.stdin, io.StringIO("")  # no one to answer transformers' prompt
        try:
            plain = AutoTokenizer.from_pretrained(folder)
        finally:
            sys.stdin = stdin
        compare("AutoTokenizer without trust_remote_code", plain(text)["input_ids"], ref["ids_bos"])
        line += f"; AutoTokenizer ({type(at).__name__}, transformers {transformers.__version__}) too"
    print(line)


if __name__ == "__main__":
    main()
