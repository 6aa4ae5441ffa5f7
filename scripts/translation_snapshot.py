"""Writes everything the translator produces for a fixed corpus into one folder, so that two
revisions can be compared byte for byte (`diff -r`): a refactoring must leave it unchanged.

    python scripts/translation_snapshot.py OUT_DIR

The corpus: each example alone and all of them as one extension; each test fixture (partial);
every kernel file of the installed TileGym release, translated as `tilebridge build --partial`
does (with and without the recorded launches, and with `--lift-gathers`) and as `tilebridge
coverage` does (per kernel: its safety note, refusals and the specializations it compiles, then
the one-dtype-per-array crate that coverage builds). Errors are recorded as text, never raised.
"""

from __future__ import annotations

import json
import shutil
import sys
import traceback
from pathlib import Path

from tilebridge.builder.wheel import RUNTIME_CRATE
from tilebridge.errors import TranslationError
from tilebridge.translator import frontend, lower, recorded_launches, translate
from tilebridge.verifier import coverage

REPO = Path(__file__).resolve().parents[1]


def write_crate(out: Path, name: str, target, **kwargs) -> None:
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    try:
        crate = translate(target, runtime_path=RUNTIME_CRATE, **kwargs)
    except TranslationError as e:
        (folder / "ERROR").write_text(str(e) + "\n")
        return
    except Exception:
        (folder / "CRASH").write_text(traceback.format_exc().splitlines()[-1] + "\n")
        return
    for rel, text in crate.files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace(RUNTIME_CRATE.as_posix(), "<tilebridge-runtime>"))
    (folder / "SKIPPED").write_text("".join(f"{s}\n" for s in crate.skipped))


def coverage_view(out: Path, path: Path, launches) -> None:
    """What `tilebridge coverage` computes before it builds: per kernel, its analysis verdicts and
    specializations; then the crate it builds (each array for the dtypes `coverage.built_dtypes` gives)."""
    folder = out / "coverage" / path.stem
    folder.mkdir(parents=True, exist_ok=True)
    try:
        kernels = frontend.kernels_in(path)
    except Exception as e:
        (folder / "ERROR").write_text(f"cannot read: {e}\n")
        return
    translated, kirs = [], []
    for k in kernels:
        name = k._pyfunc.__name__
        try:
            kir = lower.lower_kernel(frontend.load(k))
        except TranslationError as e:
            (folder / f"{name}.txt").write_text(f"ERROR {e}\n")
            continue
        specs = coverage.specializations(kir, launches)
        record = {"safe": kir.safety.safe, "reasons": kir.safety.reasons, "refusals": kir.refusals,
                  "specializations": [s if isinstance(s, str) else [s.generics, s.strides, s.signature]
                                      for s in specs]}
        (folder / f"{name}.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
        translated.append(k)
        kirs.append(kir)
    if translated:
        dtypes = coverage.built_dtypes(kirs, launches)
        write_crate(out / "coverage", f"{path.stem}.crate", translated, dtypes=dtypes,
                    module="tbcov_" + path.stem + "_rs")


def main(out: Path) -> None:
    examples = sorted((REPO / "examples").glob("*.py"))
    for p in examples:
        write_crate(out / "examples", p.stem, p)
    write_crate(out / "examples", "_all", [str(p) for p in examples], module="tilebridge_examples")
    for p in sorted((REPO / "tests" / "fixtures").glob("*.py")):
        write_crate(out / "fixtures", p.stem, p, partial=True)
    launches = recorded_launches.read([REPO / "tests" / "data" / "tilegym_launches.json"])
    root = coverage.library_dir("tilegym")
    for p in sorted(root.rglob("*.py")):
        rel = str(p.relative_to(root).with_suffix("")).replace("/", ".")
        print(rel, file=sys.stderr, flush=True)
        write_crate(out / "tilegym", rel, p, partial=True)
        write_crate(out / "tilegym_recorded", rel, p, partial=True, launches=launches)
        write_crate(out / "tilegym_lifted", rel, p, partial=True, lift_gathers=True)
        coverage_view(out, p, launches)


if __name__ == "__main__":
    out = Path(sys.argv[1])
    shutil.rmtree(out, ignore_errors=True)  # nothing of an earlier run may remain
    main(out)
