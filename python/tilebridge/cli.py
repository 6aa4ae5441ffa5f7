"""The `tilebridge` command: translate | build | check | bench | chart | coverage | doctor."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import time
from pathlib import Path

from .errors import BuildError, TranslationError


def _dtypes(specs: list[str]) -> dict[str, list[str]]:
    """`--dtype x=f16,f32` -> {"x": ["f16", "f32"]}."""
    out: dict[str, list[str]] = {}
    for spec in specs:
        name, _, values = spec.partition("=")
        if not values:
            raise SystemExit(f"--dtype takes NAME=DTYPE[,DTYPE...], got {spec!r}")
        out[name] = values.split(",")
    return out


def _module(args) -> str | None:
    return args.module


def _launches(args) -> list:
    from .translator import recorded_launches as launches

    return launches.read(args.launches)


def _report(crate_dir: Path, skipped: list[str]) -> None:
    """Each kernel's check against cuTile Python and its safety (each `unsafe` block with the
    obligation it leaves), and the kernels a partial translation left out."""
    from .metadata import ExtensionMetadata

    meta = ExtensionMetadata.from_json((crate_dir / "tilebridge.json").read_text())
    for name, kernel in meta.kernels.items():
        if kernel.checked:
            print(f"{name}: {kernel.checked}")
    safe = [name for name, kernel in meta.kernels.items() if kernel.safe]
    print(f"safe (no unsafe block): {len(safe)} of {len(meta.kernels)} kernels"
          + (f" ({', '.join(safe)})" if safe else ""))
    for name, kernel in meta.kernels.items():
        for reason in kernel.unsafe_reasons:
            print(f"  {name}: unsafe: {reason}")
    for reason in skipped:
        print(f"left out {reason}")


def cmd_translate(args) -> int:
    from .builder.wheel import RUNTIME_CRATE, build_key, write_crate
    from .translator import translate

    crate = translate(args.files if len(args.files) > 1 else args.files[0], module=_module(args),
                      dtypes=_dtypes(args.dtype), runtime_path=RUNTIME_CRATE, launches=_launches(args),
                      partial=args.partial, lift_gathers=args.lift_gathers)
    write_crate(crate, Path(args.out), build_key(crate))
    _report(Path(args.out), crate.skipped)
    print(f"wrote {crate.module} to {args.out}")
    return 0


def cmd_build(args) -> int:
    from .builder.wheel import build

    target = args.files if len(args.files) > 1 else args.files[0]
    result = build(target, out_dir=args.out, module=_module(args), dtypes=_dtypes(args.dtype),
                   install=not args.no_install, partial=args.partial, lift_gathers=args.lift_gathers,
                   launches=_launches(args), cubins=args.cubins, aot=_archs(args.aot))
    _report(result.crate_dir, result.skipped)
    if args.aot:
        print(f"{result.module}: {result.shipped} cubins shipped ({args.aot})")
        for kernel, why in sorted(result.not_shipped.items()):
            print(f"  {kernel}: compiled at its first launch where {'; '.join(dict.fromkeys(why))}")
    print(f"{result.module}: {'built' if result.rebuilt else 'up to date'}: {result.wheel}")
    return 0


def _archs(text: str | None) -> list[str]:
    """`--aot sm_90,sm_100` as a list; a name that is not an architecture is a usage error."""
    archs = [a.strip() for a in (text or "").split(",") if a.strip()]
    for arch in archs:
        if not re.fullmatch(r"sm_\d+[af]?", arch):
            raise SystemExit(f"tilebridge build: --aot takes GPU architectures such as sm_90 or sm_90,sm_100; "
                             f"not {arch!r}")
    return archs


def _gpu_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def cmd_check(args) -> int:
    from .builder import build
    from .runtime.launch import extension_metadata
    from .verifier.check import CASE_TIMEOUT_S, check_files_in_parallel

    if args.installed:  # extensions built elsewhere (a campaign's: `tilebridge fuzz --wheels`)
        modules = [importlib.import_module(m).__name__ for m in args.installed]
        print(f"imported {', '.join(modules)}")
    else:
        target = args.files if len(args.files) > 1 else args.files[0]
        ext = build(target, module=_module(args), dtypes=_dtypes(args.dtype))
        modules = [ext.__name__]
        print(f"built and imported {ext.__name__}: kernels "
              f"{', '.join(sorted(extension_metadata(ext).kernels))}")
    if not _gpu_available():
        print("no GPU here: translation and build checked; run on a GPU machine to compare outputs "
              "with cuTile Python")
        return 0
    bad = missing = ran = 0
    # Printed as they come, so that a run cut off by a time limit keeps what it compared.
    for _, result, kernel in check_files_in_parallel(args.files, modules, args.jobs,
                                                     case_timeout=args.case_timeout or CASE_TIMEOUT_S):
        if result is None:
            # Installed extensions may leave kernels out (a campaign builds only those it translates).
            print(f"{'not run' if args.installed else 'BAD'} {kernel}: in no extension given", flush=True)
            missing += 1
            bad += not args.installed
        else:
            print(result, flush=True)
            ran += 1
            bad += not result.ok
    if ran == 0:
        print("no case ran: nothing was compared")
        return 1
    skipped = f"; {missing} case(s) of kernels in no extension given not run" if missing and args.installed else ""
    print((f"all {ran} cases agree with cuTile Python" if not bad else f"{bad} case(s) disagree") + skipped)
    return 1 if bad else 0


def cmd_bench(args) -> int:
    from .builder import build
    from .verifier.bench import print_table, time_case
    from .verifier.check import load_cases

    if not _gpu_available():
        print("tilebridge bench needs a GPU", file=sys.stderr)
        return 2
    # First launches compile from scratch on both sides: both disk caches off.
    os.environ.setdefault("CUDA_TILE_CACHE_DIR", "off")
    os.environ.setdefault("TILEBRIDGE_CACHE_DIR", "off")
    target = args.files if len(args.files) > 1 else args.files[0]
    ext = build(target, module=_module(args), dtypes=_dtypes(args.dtype))
    rows = [time_case(ext, k, g, a, runs=args.runs) for path in args.files for k, g, a in load_cases(path)]
    print_table(rows)
    if args.out:
        from .verifier.report import Run, measure_roofline

        print("wrote", ", ".join(map(str, Run.here(rows, roofline=measure_roofline()).write(args.out))))
    return 0


def cmd_chart(args) -> int:
    from .verifier.report import chart

    png = chart(Path(args.run_json), Path(args.png or Path(args.run_json).with_suffix(".png")))
    if png is None:
        return 1
    print("wrote", png)
    return 0


def cmd_coverage(args) -> int:
    from .verifier.coverage import run

    report = run(args.target, quiet=not args.verbose, files=args.files, recorded=_launches(args), progress=True,
                 cubin_limit=args.cubin_limit)
    print(report.table())
    if args.json:
        Path(args.json).write_text(report.to_json())
    failed = 0
    if args.min is not None and report.through_cubin < args.min:
        print(f"coverage dropped: {report.through_cubin} kernels through cubin, below {args.min}", file=sys.stderr)
        failed = 1
    if report.unmatched:
        # Such a launch would be compiled at a default specialization instead: the figures would
        # claim launches that were never compiled.
        print(f"{len(report.unmatched)} recorded launches match no kernel of {args.target} (recorded from another "
              f"version? record them again from its tests): " + ", ".join(sorted(set(report.unmatched))[:8]),
              file=sys.stderr)
        failed = 1
    return failed


def cmd_fuzz(args) -> int:
    import shutil

    from .verifier import fuzz

    if args.wheels and args.no_tile_ir:
        raise SystemExit("tilebridge fuzz: --wheels takes the extensions the Tile IR phase builds; "
                         "leave out --no-tile-ir")
    if args.file:  # a campaign file: generated before, or written by hand in that form
        path = Path(args.file)
        kernels = fuzz.read(path)
    else:
        path = Path(args.out or f"fuzz_{args.seed}.py")
        kernels = fuzz.write(path, args.count, args.seed)
    campaign = fuzz.run(path, kernels, tile_ir=not args.no_tile_ir, quiet=not args.verbose)
    for name, outcome in campaign.outcomes.items():
        if outcome in fuzz.BUGS or (args.verbose and outcome != "agrees"):
            print(f"{name}: {outcome}: {campaign.messages[name]}")
    print(campaign.summary())
    if args.wheels:
        Path(args.wheels).mkdir(parents=True, exist_ok=True)
        for wheel in campaign.wheels.values():
            shutil.copy2(wheel, args.wheels)
        print(f"{len(campaign.wheels)} wheels in {args.wheels}: install them on a GPU machine and run "
              f"`tilebridge check {path.name} --installed {' '.join(campaign.wheels)}`")
    return 1 if campaign.bugs() else 0


def cmd_cache(args) -> int:
    import re

    from .toolchain import kernel_cache_dir

    root = kernel_cache_dir()
    if root is None:
        print("the kernel cache is off (TILEBRIDGE_CACHE_DIR=off)")
        return 0
    # cutile's layout: <first two hex digits of the key>/<64 hex digits>.cubin; nothing else is touched.
    entries = sorted((p for p in root.glob("[0-9a-f][0-9a-f]/*.cubin") if re.fullmatch(r"[0-9a-f]{64}", p.stem)),
                     key=lambda p: p.stat().st_mtime) if root.is_dir() else []
    if args.action == "clear":
        for entry in entries:
            entry.unlink(missing_ok=True)
            if not any(entry.parent.iterdir()):
                entry.parent.rmdir()
        print(f"removed {len(entries)} cubins from {root}")
        return 0
    for entry in entries:
        stat = entry.stat()
        print(f"{entry.stem[:16]}  {stat.st_size / 1024:8.1f} KiB  "
              f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(stat.st_mtime))}")
    total = sum(e.stat().st_size for e in entries)
    print(f"{len(entries)} cubins, {total / 2**20:.1f} MiB, in {root}")
    return 0


def cmd_doctor(args) -> int:
    from .toolchain import doctor

    checks = doctor()
    ready = {}
    for part, what in (("translate", "translate"), ("build", "build extensions"), ("launch", "launch kernels")):
        print(f"to {what}:")
        for c in (c for c in checks if c.part == part):
            print(f"  {'ok ' if c.ok else 'NO '} {c.name}: {c.detail}")
        ready[part] = all(c.ok for c in checks if c.part == part)
    print(", ".join(f"{part}: {'ready' if ok else 'not ready'}" for part, ok in ready.items()))
    # A machine serves for building or for launching (CI builds without a GPU; a GPU machine can
    # launch wheels built elsewhere without Rust): it fails only where it can do neither.
    return 0 if ready["translate"] and (ready["build"] or ready["launch"]) else 1


def _module_name(text: str) -> str:
    from .translator import check_module_name

    try:
        check_module_name(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tilebridge", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def kernel_command(name: str, help_: str):
        p = sub.add_parser(name, help=help_)
        p.add_argument("files", nargs="+", help="Python files with @ct.kernel functions")
        p.add_argument("-m", "--module", type=_module_name, help="extension module name (default: <file>_rs)")
        p.add_argument("--dtype", action="append", default=[], metavar="ARRAY=DT[,DT]",
                       help="dtypes to build the launcher for, per array parameter (default: f32,f16,bf16 for "
                            "arrays the kernel computes with, every dtype for arrays it only moves)")
        p.add_argument("--launches", action="append", default=[], metavar="LOG",
                       help="launches recorded from the kernels' tests (JSON lines): build each launcher for the "
                            "dtype combinations they used; repeatable")
        return p

    def translation_options(p) -> None:
        p.add_argument("--partial", action="store_true",
                       help="leave out kernels that cannot be translated (each is listed, with why)")
        p.add_argument("--lift-gathers", action="store_true",
                       help="gathers/scatters of whole rows as checked tile accesses (safe; padded ones can be slower)")

    p = kernel_command("translate", "write the generated Rust crate")
    p.add_argument("-o", "--out", required=True, help="folder for the crate")
    translation_options(p)
    p.set_defaults(run=cmd_translate)
    p = kernel_command("build", "translate and build the extension wheel, then install it")
    p.add_argument("-o", "--out", help="build folder (default: ~/.cache/tilebridge/builds/<module>-<hash>)")
    p.add_argument("--no-install", action="store_true", help="build the wheel only")
    p.add_argument("--cubins", action="store_true",
                   help="compile every specialization checked against cuTile Python to an sm_90 cubin (tileiras, "
                        "on the CPU) before the wheel counts as built: no Tile IR error left to a first launch")
    p.add_argument("--aot", metavar="ARCHS",
                   help="ship cubins compiled here for these GPU architectures (sm_90[,sm_100,...]): the "
                        "specializations of --launches, else those of kernels without ct.Constant parameters; "
                        "their first launch loads them, with no JIT and no tileiras on the GPU machine")
    translation_options(p)
    p.set_defaults(run=cmd_build)
    p = kernel_command("check", "build, then compare with cuTile Python on each file's cases(torch)")
    p.add_argument("--installed", nargs="+", metavar="MODULE",
                   help="compare these installed extensions (built elsewhere: `tilebridge fuzz --wheels`) instead "
                        "of building one; a kernel none of them holds is listed, not run")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="run the cases in N processes (each JIT compiles on a CPU of its own)")
    p.add_argument("--case-timeout", type=float, default=None, metavar="S",
                   help="with -j: a case with no result after S seconds fails as hanging, and its process "
                        "is stopped and replaced (default 300)")
    p.set_defaults(run=cmd_check)
    p = kernel_command("bench", "time the Rust extension against cuTile Python on each file's cases(torch)")
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--out", metavar="PREFIX", help="also write PREFIX.md, PREFIX.json (every raw figure, the copy "
                                                   "bandwidth and matmul rate measured in the same run) and PREFIX.png")
    p.set_defaults(run=cmd_bench)
    p = sub.add_parser("chart", help="draw a benchmark run's JSON (tilebridge bench --out) as a PNG (matplotlib)")
    p.add_argument("run_json", metavar="RUN.json", help="the run's JSON")
    p.add_argument("png", nargs="?", help="the chart (default: the JSON's name with .png)")
    p.set_defaults(run=cmd_chart)
    p = sub.add_parser("coverage", help="every kernel of a library through translate, build, Tile IR, cubin")
    p.add_argument("target", help="a folder of kernel files, or an installed package such as tilegym")
    p.add_argument("--json", help="also write the table as JSON here")
    p.add_argument("--min", type=int, help="fail if fewer kernels get through cubin")
    p.add_argument("--launches", action="append", default=[], metavar="LOG",
                   help="launches recorded from the library's tests: compile every specialization they used "
                        "(e.g. tests/data/tilegym_launches.json); repeatable")
    p.add_argument("-k", "--files", action="append", metavar="PATTERN",
                   help="only kernel files whose names match this glob (e.g. -k 'softmax' -k 'rms_*'); repeatable")
    p.add_argument("--cubin-limit", type=float, metavar="SECONDS",
                   help="defer (count apart) the cubin of a specialization whose tileiras runs longer; default: "
                        "compile every one")
    p.add_argument("-v", "--verbose", action="store_true", help="show cargo's output")
    p.set_defaults(run=cmd_coverage)
    p = sub.add_parser("fuzz", help="random kernels, each translated, checked against cuTile Python's front end "
                                    "and compiled to Tile IR")
    p.add_argument("--count", type=int, default=200, help="kernels in the campaign (default 200)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-o", "--out", help="the file the kernels are written to (default fuzz_<seed>.py)")
    p.add_argument("file", nargs="?", help="a campaign file to run again (one this command wrote, or one written "
                                           "by hand in that form: kernels and LAUNCHES), instead of generating one")
    p.add_argument("--no-tile-ir", action="store_true", help="translate and check only: build nothing")
    p.add_argument("--wheels", metavar="DIR", help="copy the extensions built into DIR (for a GPU round)")
    p.add_argument("-v", "--verbose", action="store_true", help="show every outcome but agreement, with why")
    p.set_defaults(run=cmd_fuzz)
    p = sub.add_parser("cache", help="the cubins launches keep across processes (TILEBRIDGE_CACHE_DIR; off: none)")
    p.add_argument("action", choices=["list", "clear"])
    p.set_defaults(run=cmd_cache)
    p = sub.add_parser("doctor", help="check the toolchain")
    p.set_defaults(run=cmd_doctor)

    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except TranslationError as e:
        print(f"TranslationError: {e}", file=sys.stderr)
        return 1
    except BuildError as e:
        print(f"BuildError: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
