"""Selective against common words on real, partly non-ASCII documents: the system's package documentation
(/usr/share/doc, its plain files) beside the Python library (its text files).

    python bench/nonascii_bench.py --root DIR [--runs N] [--rg-runs N] [--corpus VAULT]

DIR receives the corpus once (the documentation's files copied as .txt files into the project "doc",
the library's into "python") and a SQLite store. Words that few files hold must cost no more than words
most files hold: the target is selective p95 <= 2x common p95. ripgrep runs the same searches in the
same run (search_bench.py's flags). ``--corpus`` times another vault instead (nothing is copied; the store goes
to DIR), a small one for a smoke run.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import search_bench as sb
from notewell.config import DEFAULT_MAX_FILE_BYTES, Settings
from notewell.indexer import sync
from notewell.records.documents import Scope
from notewell.search.engine import SearchEngine
from notewell.store.factory import open_store

DOCS = Path("/usr/share/doc")
SELECTIVE = ("FIPS", "kerberos", "Mercurial", "security group")
COMMON = ("the", "license", "copyright", "return")


def build_corpus(root: Path) -> Path:
    corpus = root / "doc-and-python"
    complete = corpus / ".corpus-complete"
    if complete.exists():
        return corpus
    for folder, dirs, files in os.walk(DOCS):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            src = Path(folder, name)
            if name.startswith(".") or name.endswith(".gz") or src.is_symlink() or not src.is_file():
                continue
            if src.stat().st_size > DEFAULT_MAX_FILE_BYTES:
                continue
            dst = corpus / "doc" / src.relative_to(DOCS).with_name(name + ".txt")
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    sb.copy_text_files(Path(sysconfig.get_paths()["stdlib"]), corpus / "python")
    complete.write_text(f"{DOCS}\n", encoding="utf-8")
    return corpus


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, required=True, help="folder for the corpus and the store")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rg-runs", type=int, default=3)
    parser.add_argument("--corpus", type=Path, help="a vault of your own instead of the copied documentation and "
                                                    "library (nothing copied; a small one makes a smoke run)")
    args = parser.parse_args(argv)
    corpus = args.corpus.resolve() if args.corpus else build_corpus(args.root.resolve())
    db = args.root.resolve() / f"{corpus.name}.db"
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    store = open_store(str(db))
    try:
        if not store.documents.state():
            sync(Settings(vault=corpus, db=str(db), file_types=sb.FILE_TYPES), store)
        documents, text_bytes, _ = store.documents.sizes()
        engine = SearchEngine(store.documents)
        scope = Scope(projects=store.documents.vault_projects())
        rows = []
        for kind, words in (("selective", SELECTIVE), ("common", COMMON)):
            for word in words:
                f = sb.measure(engine, scope, corpus, sb.Query(kind, word, False, kind), args.runs, args.rg_runs)
                rows.append(f)
    finally:
        store.close()
    print(f"Load average at the start {load}; {documents} files, {text_bytes / 1e6:.1f} MB of text\n")
    print("| word | kind | files (candidates) | p50 ms | p95 ms | CPU p50 ms | rg files | rg p95 ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for f in rows:
        print(f"| {f.query.text} | {f.query.name} | {f.files} ({f.candidates}) | {f.notewell.p50_ms:.2f} | "
              f"{f.notewell.p95_ms:.2f} | {f.notewell.cpu_p50_ms:.2f} | {f.rg_files} | {f.rg.p95_ms:.0f} |")
    worst = {kind: max(f.notewell.p95_ms for f in rows if f.query.name == kind) for kind in ("selective", "common")}
    ratio = worst["selective"] / worst["common"]
    print(f"\nslowest selective p95 / slowest common p95: {ratio:.2f} (target <= 2): "
          f"{'met' if ratio <= 2 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
