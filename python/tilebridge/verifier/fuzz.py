"""A differential fuzz campaign: random kernels (`fuzz_gen`), each translated with the check
against cuTile Python's front end (`translator.oracle`) at the launch it comes with, then built,
compiled through cutile's compile-only API to Tile IR and by `tileiras` to an sm_90 cubin (the
Tile IR verifier runs there: an empty loop's bounds, found on the GPU, passed the compile-only
API), and sorted by outcome.

    tilebridge fuzz --count 2000 --seed 1

Outcomes:

- `agrees`: translated, cuTile Python types every compared value the same, and the Rust kernel
  compiles to Tile IR and a cubin (with `tile_ir=False`: translated and agreeing, not built);
- `cutile_rejects`: cuTile Python rejects it, and so does tilebridge (with its message);
- `refused`: tilebridge refuses what cuTile Python accepts (a gap in the language it translates);
- `both_refuse`: tilebridge refuses, with a message of its own, what cuTile Python rejects too;
- `disagrees`: a value typed otherwise than cuTile Python types it (a tilebridge bug);
- `crashes`: anything but a `TranslationError` (a tilebridge bug);
- `fails_to_build`: translated, but the crate does not compile (a tilebridge bug);
- `fails_to_compile`: built, but cutile's JIT cannot make Tile IR of it, or `tileiras` a cubin of
  that (a tilebridge bug; a cubin slower than `CUBIN_LIMIT_S` is not waited for).

The kernels are written to one file per campaign, with the launch each is checked at
(`LAUNCHES`), so every outcome can be reproduced (`tilebridge fuzz FILE`), and `cases(torch)`,
which `tilebridge check` runs through cuTile Python and the Rust twins on a GPU, on the same
inputs.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..dtypes import DTYPES, from_torch
from ..errors import TranslationError
from .fuzz_gen import Fuzzed, Generator

OUTCOMES = ("agrees", "cutile_rejects", "both_refuse", "refused", "disagrees", "crashes", "fails_to_build",
            "fails_to_compile")
BUGS = ("disagrees", "crashes", "fails_to_build", "fails_to_compile")
# Seconds `tileiras` may take over one specialization; a slower one is left to the GPU run.
CUBIN_LIMIT_S = 60.0
# Kernels per built extension: a crate of this many builds in under a minute unoptimized (2 cores).
CHUNK = 250


@dataclass
class Campaign:
    """What a campaign found: the outcome of each kernel, and why for all but agreement."""

    path: Path
    outcomes: dict[str, str] = field(default_factory=dict)  # kernel -> outcome
    messages: dict[str, str] = field(default_factory=dict)  # kernel -> why (all but "agrees")
    tile_ir: bool = True  # whether "agrees" includes the Tile IR
    # the extensions built (`tile_ir`), module -> wheel: a GPU round installs them
    wheels: dict[str, Path] = field(default_factory=dict)
    seconds: Counter = field(default_factory=Counter)  # wall time of each phase: translate, build, tile_ir
    tile_ir_text: dict[str, list[str]] = field(default_factory=dict)  # kernel -> its Tile IR, per specialization

    def counts(self) -> Counter:
        return Counter(self.outcomes.values())

    def bugs(self) -> dict[str, str]:
        return {n: f"{o}: {self.messages.get(n, '')}" for n, o in self.outcomes.items() if o in BUGS}

    def summary(self) -> str:
        c = self.counts()
        through = " (through Tile IR to cubins)" if self.tile_ir else " (translated only)"
        phases = ", ".join(f"{phase} {t:.0f} s" for phase, t in self.seconds.items())
        return (f"{len(self.outcomes)} kernels: " + ", ".join(f"{c[o]} {o}" for o in OUTCOMES)
                + f"{through} ({self.path}; {phases})")


def generate(count: int, seed: int) -> list[Fuzzed]:
    """`count` kernels from `seed`; kernel `i` is the same whatever `count` is."""
    gen = Generator(seed)
    return [gen.kernel(i) for i in range(count)]


def write(path: Path, count: int, seed: int, only: set[str] | None = None) -> list[Fuzzed]:
    """Writes the kernels of `generate(count, seed)` (those in `only`, if given) into one file, with
    their launches (`LAUNCHES`, which `read` takes back) and `cases(torch)`, and returns them."""
    kernels = [k for k in generate(count, seed) if only is None or k.name in only]
    text = "import cuda.tile as ct\n\n\n" + "\n\n".join(k.source for k in kernels)
    text += "\n\n" + CASES.format(launches=",\n    ".join(repr(_launch_record(k)) for k in kernels))
    path.write_text(text)
    return kernels


def _launch_record(k: Fuzzed) -> list:
    """One item of a campaign file's `LAUNCHES`: name, grid, arrays ({param: [shape, torch dtype,
    [lo, hi] or None for an output]}), scalars, constants."""
    arrays = {p: [list(s), DTYPES[d].torch, list(k.ranges[p]) if p in k.ranges else None]
              for p, (s, d) in k.arrays.items()}
    return [k.name, list(k.grid), arrays, k.scalars, k.constants]


def read(path: Path) -> list[Fuzzed]:
    """The kernels of a campaign file (one `write` made, or one written by hand in its form:
    kernels, then `LAUNCHES` and `cases(torch)`), each with its launch."""
    from ..translator import frontend

    module = frontend.import_file(path)
    if not hasattr(module, "LAUNCHES"):
        raise TranslationError(f"{path}: not a campaign file: it has no LAUNCHES (name, grid, arrays, scalars, "
                               "constants of each kernel's launch; `tilebridge fuzz` writes them)")
    kernels = []
    for name, grid, arrays, scalars, constants in module.LAUNCHES:
        typed = {p: (tuple(shape), from_torch(dtype)) for p, (shape, dtype, _) in arrays.items()}
        ranges = {p: tuple(r) for p, (_, _, r) in arrays.items() if r is not None}
        kernels.append(Fuzzed(name, "", typed, scalars, constants, tuple(grid), ranges))
    return kernels


# A campaign file's cases: its launches, their inputs made by `launch_cases`.
CASES = """\
LAUNCHES = [
    {launches},
]


def cases(torch):
    from tilebridge.verifier.fuzz import launch_cases

    yield from launch_cases(torch, LAUNCHES, globals())
"""


def launch_cases(torch, launches: list, namespace: dict):
    """`cases(torch)` of a campaign file: each launch of `launches` (name, grid, arrays as {param:
    [shape, torch dtype, [lo, hi] or None]}, scalars, constants) with its inputs drawn from their
    ranges (floats uniform, integers whole, seeded by the launch's place) and its outputs (range
    None) filled with NaN or -1, so that what a kernel leaves unwritten shows."""
    for i, (name, grid, arrays, scalars, constants) in enumerate(launches):
        gen = torch.Generator(device="cuda").manual_seed(i)
        args = []
        for shape, dtype, bounds in arrays.values():
            dtype = getattr(torch, dtype)
            if bounds is None:
                fill = float("nan") if dtype.is_floating_point else -1
                args.append(torch.full(shape, fill, device="cuda", dtype=dtype))
            elif dtype.is_floating_point:
                lo, hi = bounds
                values = torch.rand(shape, device="cuda", generator=gen) * (hi - lo) + lo
                args.append(values.to(dtype))
            else:
                lo, hi = (int(b) for b in bounds)
                args.append(torch.randint(lo, hi, shape, device="cuda", generator=gen).to(dtype))
        yield namespace[name], tuple(grid), (*args, *scalars.values(), *constants.values())


def launch_of(kernel: Fuzzed, file: str):
    """The launch `kernel` comes with, as a recorded launch (dtypes, strides, values)."""
    from ..translator.recorded_launches import Launch

    args = {p: {"dtype": DTYPES[d].torch, "shape": list(s), "strides": _strides(s)}
            for p, (s, d) in kernel.arrays.items()}
    return Launch(file, kernel.name, {**args, **kernel.scalars, **kernel.constants})


def _strides(shape) -> list[int]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


def _signature(kernel: Fuzzed):
    """cuTile Python's specialization of the launch, for its verdict."""
    from ..translator import cutile_frontend as frontend

    params = [("array", d, [-1] * (len(s) - 1) + [1]) for s, d in kernel.arrays.values()]
    params += [("scalar", "i32" if isinstance(v, int) else "f32") for v in kernel.scalars.values()]
    params += [("constant", v) for v in kernel.constants.values()]
    return frontend.signature(params)


def cutile_accepts(kernel_object, fuzzed: Fuzzed) -> bool:
    """Whether cuTile Python compiles the kernel at its launch."""
    from ..translator import cutile_frontend as frontend

    return not isinstance(frontend.verdict(kernel_object, _signature(fuzzed)), frontend.Rejection)


def run(path: Path, kernels: list[Fuzzed], tile_ir: bool = True, quiet: bool = True,
        workers: int | None = None) -> Campaign:
    """Translates each kernel of the file `path` on its own, at its launch, and sorts it by
    outcome; with `tile_ir`, builds those translated (unoptimized, never installed) and compiles
    each through cutile's compile-only API to Tile IR. The translations run in `workers`
    processes (default: one per CPU), the builds one after another."""
    from ..builder.wheel import RUNTIME_CRATE

    campaign = Campaign(path, tile_ir=tile_ir)
    groups: dict[str, list[Fuzzed]] = {}  # a kernel's launches (a file written by hand may have several)
    for fuzzed in kernels:
        groups.setdefault(fuzzed.name, []).append(fuzzed)
    workers = max(1, min(workers or os.cpu_count() or 1, len(groups)))
    slices = [list(groups.values())[i::workers] for i in range(workers)]
    started = time.perf_counter()
    if workers == 1:
        results = [_translate_each(path, slices[0])]
    else:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_translate_each, [path] * workers, slices))
    by_name = {name: r for result in results for name, r in result.items()}
    campaign.seconds["translate"] = time.perf_counter() - started
    lowered = {}
    for name in groups:
        outcome, why, kirs = by_name[name]
        campaign.outcomes[name] = outcome
        if why:
            campaign.messages[name] = why
        if kirs:
            lowered[name] = kirs
    if tile_ir and lowered:
        names = list(lowered)
        for start in range(0, len(names), CHUNK):
            _through_tile_ir(campaign, {n: lowered[n] for n in names[start:start + CHUNK]}, path, RUNTIME_CRATE,
                             quiet)
    return campaign


def _translate_each(path: Path, groups: list[list[Fuzzed]]) -> dict[str, tuple[str, str, list | None]]:
    """Each kernel of `groups` (its launches, in the file `path`) translated on its own, for the
    dtypes of its launches: its outcome, why (but for agreement) and, where it agrees, its
    lowered IR."""
    from ..translator import frontend, lower_checked, oracle, specializations

    module = frontend.import_file(path)
    results = {}
    for launches in groups:
        first = launches[0]
        kernel = getattr(module, first.name)
        kirs = None
        try:
            src = frontend.load(kernel)
            pinned = {p: sorted({f.arrays[p][1] for f in launches}) for p in first.arrays}
            recorded = [launch_of(f, path.name) for f in launches]
            kirs = lower_checked(src, pinned, False, recorded)
            # a kernel translated in part (a branch left out) whose launcher refuses a launch
            refusals = [s for kir in kirs for s in specializations.recorded(kir, recorded) if isinstance(s, str)]
            if refusals:
                kirs = None
                raise TranslationError(f"the launcher refuses the launch: {refusals[0]}")
            outcome, why = "agrees", ""
        except oracle.Disagreement as e:
            outcome, why = "disagrees", str(e)
        except TranslationError as e:
            why = str(e)
            outcome = ("cutile_rejects" if "cuTile Python rejects" in why else
                       "refused" if any(cutile_accepts(kernel, f) for f in launches) else "both_refuse")
        except Exception as e:  # noqa: BLE001 - a tilebridge bug, counted
            outcome, why, kirs = "crashes", f"{type(e).__name__}: {e}", None
        results[first.name] = (outcome, why, kirs)
    return results


def _through_tile_ir(campaign: Campaign, lowered: dict, path: Path, runtime: Path, quiet: bool) -> None:
    """Builds the kernels of `lowered` into one extension and compiles each to Tile IR at the
    specializations the check accepted; a crate that does not build is split until the kernels
    that break it are found (each `fails_to_build`, with the compiler's first error)."""
    from .. import toolchain
    from ..builder import wheel as builder
    from ..translator import assemble

    os.environ.setdefault("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    kirs = [k for ks in lowered.values() for k in ks]
    digest = hashlib.sha256(" ".join(lowered).encode()).hexdigest()[:8]
    module = f"tbfuzz_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{digest}"
    started = time.perf_counter()
    try:
        crate = assemble(kirs, module, runtime, path.name)
        ext, failure = builder.build(None, crate=crate, install=False, optimize=False, quiet=quiet), None
    except Exception as e:  # noqa: BLE001 - a build error, or a bug of the emitter: found below
        failure = e
    campaign.seconds["build"] += time.perf_counter() - started
    if failure is not None:
        if len(lowered) == 1:
            (name,) = lowered
            campaign.outcomes[name] = "fails_to_build"
            campaign.messages[name] = _first_error(str(failure))
            return
        names = list(lowered)
        half = len(names) // 2
        for part in (names[:half], names[half:]):
            _through_tile_ir(campaign, {n: lowered[n] for n in part}, path, runtime, quiet)
        return
    started = time.perf_counter()
    campaign.wheels[ext.module] = ext.wheel
    compiled = builder.import_unpacked(ext.wheel, ext.module)

    def compile_each(name: str) -> str | None:
        """Why the kernel `name` does not reach Tile IR at every specialization; None where it does."""
        for kir in lowered[name]:
            if not kir.compiled_at:
                return "no specialization was accepted to compile"
            for spec in kir.compiled_at:
                try:
                    text, bytecode = compiled._compile_only(kir.name, spec.generics, spec.strides, "sm_90")
                except Exception as e:  # noqa: BLE001 - cutile's JIT refuses what we emitted
                    return f"{kir.name}: {str(e)[-400:]}"
                campaign.tile_ir_text.setdefault(name, []).append(text)
                try:
                    toolchain.tileiras(bytecode, limit=CUBIN_LIMIT_S)
                except toolchain.SlowCompile:
                    pass  # not a fault of the translation; the GPU run compiles it with no limit
                except RuntimeError as e:
                    return f"{kir.name}: tileiras: {str(e)[-400:]}"
        return None

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:  # cutile's JIT runs without the GIL
        for name, why in zip(lowered, pool.map(compile_each, lowered)):
            if why is not None:
                campaign.outcomes[name], campaign.messages[name] = "fails_to_compile", why
    campaign.seconds["tile_ir"] += time.perf_counter() - started


def _first_error(output: str) -> str:
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("error"):
            return "\n".join(lines[i:i + 6])[:600]
    return output[-600:]
