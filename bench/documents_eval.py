#!/usr/bin/python3
"""Documents, measured (issue 63's targets), with the attn binary and a trained model:

  paragraphs  N paragraphs of 3-8 consecutive test verses (joined with spaces): BLEU of the verses
              translated line by line and joined, of each paragraph given as one line (attn before
              documents), and of the paragraphs translated as a document (--format text).
  cost        the same verses as plain text, as HTML with inline tags, as .docx with bold runs:
              the time of each translation against the plain text's (median of interleaved rounds).

  bench/documents_eval.py paragraphs --model runs/en-es/model --source corpus/test.kjv --reference corpus/test.es
  bench/documents_eval.py cost --model runs/en-es/model --source corpus/test.kjv --verses 200

Prints Markdown tables; the CPU is named in the first line.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def run(cmd, **kw):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, **kw)
    return time.perf_counter() - t


def bleu(attn, hyp, ref):
    out = subprocess.run([attn, "bleu", "--json", hyp, ref], check=True, capture_output=True, text=True).stdout
    scores = {s["name"]: s["score"] for s in json.loads(out)}
    return scores["BLEU"], scores["chrF2"]


def write(path, lines):
    with open(path, "w") as f:
        f.write("".join(line + "\n" for line in lines))


def paragraphs(a):
    src = open(a.source).read().splitlines()
    ref = open(a.reference).read().splitlines()
    rng = random.Random(a.seed)
    spans = []
    for _ in range(a.paragraphs):
        n = rng.randint(3, 8)
        start = rng.randrange(0, len(src) - n)
        spans.append((start, start + n))
    d = tempfile.mkdtemp(prefix="attn-paragraphs-")
    common = ["--beam", str(a.beam), "--alpha", str(a.alpha), "-q"]
    # The reference: each paragraph's verses joined with spaces.
    write(f"{d}/ref", [" ".join(ref[s:e]) for s, e in spans])
    # 1. line by line: every verse once, then joined per paragraph.
    verses = sorted({i for s, e in spans for i in range(s, e)})
    write(f"{d}/verses.src", [src[i] for i in verses])
    t_lines = run([a.attn, "translate", "-m", a.model, "-i", f"{d}/verses.src", "-o", f"{d}/verses.hyp"] + common)
    hyp = dict(zip(verses, open(f"{d}/verses.hyp").read().splitlines()))
    write(f"{d}/lines.hyp", [" ".join(hyp[i] for i in range(s, e)) for s, e in spans])
    # 2. each paragraph as one line: what attn did with a paragraph before documents.
    write(f"{d}/para.src", [" ".join(src[s:e]) for s, e in spans])
    t_one = run([a.attn, "translate", "-m", a.model, "-i", f"{d}/para.src", "-o", f"{d}/one.hyp"] + common)
    # 3. the paragraphs as a document: blank lines between them; once per --max-input-tokens.
    with open(f"{d}/doc.txt", "w") as f:
        f.write("\n\n".join(" ".join(src[s:e]) for s, e in spans) + "\n")
    rows = [("the verses line by line, joined", f"{d}/lines.hyp", t_lines),
            ("each paragraph as one line (before)", f"{d}/one.hyp", t_one)]
    for limit in a.max_input_tokens:
        hyp_path = f"{d}/doc.{limit}.hyp"
        t_doc = run([a.attn, "translate", "-m", a.model, "--format", "text", "-i", f"{d}/doc.txt",
                     "-o", hyp_path, "--max-input-tokens", str(limit)] + common)
        out = open(hyp_path).read().strip("\n").split("\n\n")
        if len(out) != len(spans):
            sys.exit(f"documents_eval: {len(out)} paragraphs came back for {len(spans)} (see {d})")
        write(f"{hyp_path}.lines", [p.replace("\n", " ") for p in out])
        name = "paragraphs as a document (--format text" + (f", --max-input-tokens {limit})" if limit else ")")
        rows.append((name, f"{hyp_path}.lines", t_doc))
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; {len(spans)} paragraphs of 3-8 consecutive verses "
          f"({sum(e - s for s, e in spans)} verses, {len(verses)} distinct), beam {a.beam}, alpha {a.alpha}\n")
    print("| input | BLEU | chrF2 | seconds |\n|---|---:|---:|---:|")
    for name, path, t in rows:
        b, c = bleu(a.attn, path, f"{d}/ref")
        print(f"| {name} | {b:.2f} | {c:.2f} | {t:.1f} |")


def cost(a):
    src = open(a.source).read().splitlines()[: a.verses]
    d = tempfile.mkdtemp(prefix="attn-cost-")
    paras = [src[i:i + 4] for i in range(0, len(src), 4)]
    with open(f"{d}/plain.txt", "w") as f:
        f.write("\n\n".join(" ".join(p) for p in paras) + "\n")
    # HTML: each paragraph a <p>, its second word in <b>, its last word in <i>.
    def tagged(text):
        w = text.split(" ")
        if len(w) > 2:
            w[1] = f"<b>{w[1]}</b>"
            w[-1] = f"<i>{w[-1]}</i>"
        return " ".join(w)
    with open(f"{d}/page.html", "w") as f:
        f.write("<!DOCTYPE html>\n<html><body>\n" +
                "\n".join(f"<p>{tagged(' '.join(p))}</p>" for p in paras) + "\n</body></html>\n")
    # .docx: each paragraph with its second word bold (python-docx).
    import docx
    doc = docx.Document()
    for p in paras:
        text = " ".join(p)
        w = text.split(" ")
        par = doc.add_paragraph()
        par.add_run(w[0] + " ")
        par.add_run(w[1]).bold = True
        par.add_run(" " + " ".join(w[2:]))
    doc.save(f"{d}/file.docx")
    cases = [("plain text", "plain.txt", "text"), ("HTML with inline tags", "page.html", "html"),
             (".docx with bold runs", "file.docx", "docx")]
    times = {c[0]: [] for c in cases}
    for _ in range(a.rounds):
        for name, file, fmt in cases:
            out = f"{d}/out.{file}"
            times[name].append(run([a.attn, "translate", "-m", a.model, "--format", fmt, "-i", f"{d}/{file}",
                                    "-o", out, "-q", "--beam", str(a.beam)]))
    base = statistics.median(times["plain text"])
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; {len(src)} verses in {len(paras)} paragraphs, "
          f"beam {a.beam}, median of {a.rounds} interleaved rounds (each a whole attn translate run)\n")
    print("| input | seconds | against plain text |\n|---|---:|---:|")
    for name, _, _ in cases:
        m = statistics.median(times[name])
        print(f"| {name} | {m:.2f} | {m / base:.2f}x |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["paragraphs", "cost"])
    p.add_argument("--attn", default="build/src/attn")
    p.add_argument("--model", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--reference")
    p.add_argument("--paragraphs", type=int, default=200)
    p.add_argument("--verses", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6)
    p.add_argument("--max-input-tokens", type=int, nargs="+", default=[0],
                   help="paragraphs: translate the document once per value (sentences longer than it are cut "
                        "at a clause boundary; 0: the model's limit)")
    a = p.parse_args()
    if a.what == "paragraphs":
        if not a.reference:
            p.error("paragraphs needs --reference")
        paragraphs(a)
    else:
        cost(a)


if __name__ == "__main__":
    main()
