"""A differential fuzz campaign against cuTile Python's front end: random small kernels, each
translated (with the check against cuTile Python: `translator.oracle`) and sorted by outcome.

    tilebridge fuzz --count 500 --seed 1

Each kernel loads tiles of one or two arrays (1-D, or 2-D with a matmul), computes with cuTile
Python's arithmetic, literals of every kind, int and float scalars, block ids, casts, math
functions, comparisons, `ct.where`, reductions and loops, and stores the result. Outcomes:

- `agrees`: translated, and cuTile Python types every compared value the same;
- `cutile_rejects`: cuTile Python rejects it, and so does tilebridge (with its message);
- `refused`: tilebridge refuses what cuTile Python accepts (a gap in the language it translates);
- `both_refuse`: tilebridge refuses, with a message of its own, what cuTile Python rejects too;
- `disagrees`: a value typed otherwise than cuTile Python types it (a tilebridge bug);
- `crashes`: anything but a `TranslationError` (a tilebridge bug).

The kernels are written to one file per campaign, so every outcome can be reproduced.
"""

from __future__ import annotations

import random
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TranslationError

OUTCOMES = ("agrees", "cutile_rejects", "both_refuse", "refused", "disagrees", "crashes")
FLOAT_DTYPES = ("ct.float32", "ct.float16", "ct.bfloat16")
INT_DTYPES = ("ct.int32",)
UNARY = ("ct.exp", "ct.abs", "ct.sqrt", "ct.log", "ct.tanh", "ct.exp2", "ct.rsqrt", "ct.floor", "ct.ceil",
         "ct.sin", "ct.cos", "-")
BINARY = ("+", "-", "*", "/")
INT_BINARY = ("+", "-", "*", "//", "%")
COMPARE = ("<", "<=", ">", ">=", "==", "!=")


class Generator:
    """Random kernels from one seed. Values are tracked as (Python text, kind): kind "tile" (of the
    loaded shape), "int" or "float" (scalars), "bool" (a tile of comparisons)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def kernel(self, name: str) -> tuple[str, int]:
        """A kernel's source, and the rank of its arrays."""
        r = self.rng
        two_d = r.random() < 0.25
        lines = ["pid = ct.bid(0)"]
        if two_d:
            lines += ["a = ct.load(x, index=(pid, 0), shape=(TILE, TILE))",
                      "b = ct.load(w, index=(0, pid), shape=(TILE, TILE))"]
            if r.random() < 0.5:
                cast = r.choice(("ct.float16", "ct.float32", "ct.bfloat16"))
                lines += [f"a = a.astype({cast})", f"b = b.astype({cast})"]
            lines.append(r.choice(("t = a @ b", "t = ct.matmul(a, b)",
                                   "t = ct.mma(a, b, ct.zeros((TILE, TILE), dtype=ct.float32))")))
        else:
            lines += ["t = ct.load(x, index=(pid,), shape=(TILE,))"]
            if r.random() < 0.5:
                lines.append("u = ct.load(w, index=(pid,), shape=(TILE,))")
        values = [("t", "tile"), ("n", "int"), ("f", "float"), ("pid", "int")]
        if not two_d and "u = " in lines[-1]:
            values.append(("u", "tile"))
        for i in range(r.randint(1, 4)):
            target = f"v{i}"
            if r.random() < 0.15 and not two_d:
                lines += self.loop(target, values)
                kind = "tile"
            else:
                expr, kind = self.expr(values, depth=r.randint(1, 3))
                lines.append(f"{target} = {expr}")
            values.append((target, kind))
        tiles = [v for v, k in values if k == "tile"]
        result = tiles[-1] if tiles else "t"
        if r.random() < 0.2:  # a reduction before the store: a 0-d value broadcast back
            result = f"{result} + {r.choice(('ct.sum', 'ct.max', 'ct.min'))}({result}, axis=0, keepdims=True)"
        tile = f"({result}).astype(y.dtype)" if r.random() < 0.85 else result
        lines.append(f"ct.store(y, index={'(pid, 0)' if two_d else '(pid,)'}, tile={tile})")
        body = textwrap.indent("\n".join(lines), "    ")
        return f"@ct.kernel\ndef {name}(x, w, y, n: int, f: float, TILE: ct.Constant[int]):\n{body}\n", 1 + two_d

    def loop(self, target: str, values: list[tuple[str, str]]) -> list[str]:
        r = self.rng
        start = r.choice(("0", "1", "n % 4"))
        stop = r.choice(("4", "n % 8 + 1", "3"))
        init = r.choice(("t", "ct.zeros((TILE,), dtype=ct.float32)", "t.astype(ct.float32)"))
        step, _ = self.expr([(target, "tile"), ("i", "int"), *values], depth=1)
        return [f"{target} = {init}", f"for i in range({start}, {stop}):",
                f"    {target} = {target} + {step}"]

    def leaf(self, values: list[tuple[str, str]]) -> tuple[str, str]:
        r = self.rng
        roll = r.random()
        if roll < 0.55:
            return r.choice(values)
        if roll < 0.75:
            return r.choice(("0.5", "2.0", "1e-3", "-1.5", "3.0")), "float"
        return r.choice(("1", "2", "3", "-1", "7")), "int"

    def expr(self, values: list[tuple[str, str]], depth: int) -> tuple[str, str]:
        r = self.rng
        if depth == 0:
            return self.leaf(values)
        roll = r.random()
        if roll < 0.35:
            (a, ka), (b, kb) = self.expr(values, depth - 1), self.expr(values, depth - 1)
            kinds = {ka, kb}
            op = r.choice(INT_BINARY if kinds <= {"int"} else BINARY)
            kind = "tile" if "tile" in kinds else "float" if "float" in kinds or op == "/" else "int"
            text, result = f"({a} {op} {b})", kind
        elif roll < 0.5:
            a, ka = self.expr(values, depth - 1)
            fn = r.choice(UNARY)
            text, result = (f"(-{a})" if fn == "-" else f"{fn}({a})"), ka if fn == "-" else (
                "float" if ka == "int" else ka)
        elif roll < 0.6:
            a, ka = self.expr(values, depth - 1)
            text, result = f"ct.astype({a}, {r.choice(FLOAT_DTYPES + INT_DTYPES)})", ka
        elif roll < 0.7:
            (a, ka), (b, kb) = self.expr(values, depth - 1), self.expr(values, depth - 1)
            text, result = f"ct.{r.choice(('minimum', 'maximum'))}({a}, {b})", "tile" if "tile" in (ka, kb) else ka
        elif roll < 0.8:
            (a, ka), (b, kb) = self.expr(values, depth - 1), self.expr(values, depth - 1)
            (c, kc), (d, kd) = self.expr(values, depth - 1), self.expr(values, depth - 1)
            text = f"ct.where({a} {r.choice(COMPARE)} {b}, {c}, {d})"
            result = "tile" if "tile" in (ka, kb, kc, kd) else "float"
        elif roll < 0.87:
            a, ka = self.expr(values, depth - 1)
            text, result = f"ct.{r.choice(('sum', 'max', 'min'))}({a}, axis=0)", ka
        elif roll < 0.93:
            a, ka = self.expr(values, depth - 1)
            b = r.choice(("2", "0.5", "n", "f", "2.0"))
            text, result = f"({a} ** {b})", ka
        else:
            text, result = self.leaf(values)
        return text, result


@dataclass
class Campaign:
    """What a campaign found: the outcome of each kernel, and the messages of the bugs."""

    path: Path
    outcomes: dict[str, str] = field(default_factory=dict)  # kernel -> outcome
    messages: dict[str, str] = field(default_factory=dict)  # kernel -> why (all but "agrees")

    def counts(self) -> Counter:
        return Counter(self.outcomes.values())

    def summary(self) -> str:
        c = self.counts()
        return (f"{len(self.outcomes)} kernels: " + ", ".join(f"{c[o]} {o}" for o in OUTCOMES)
                + f" ({self.path})")


def generate(count: int, seed: int) -> dict[str, tuple[str, int]]:
    """`count` kernels from `seed`: name -> (source, rank of its arrays)."""
    gen = Generator(seed)
    return {f"fuzz_{seed}_{i}": gen.kernel(f"fuzz_{seed}_{i}") for i in range(count)}


def write(path: Path, count: int, seed: int, only: set[str] | None = None, cases: bool = False) -> dict[str, int]:
    """Writes the kernels of `generate(count, seed)` (those in `only`, if given) into one file;
    their names, with their arrays' rank. With `cases`, the file also has `cases(torch)`, which
    `tilebridge check` runs through cuTile Python and the Rust twins on a GPU."""
    kernels = {n: k for n, k in generate(count, seed).items() if only is None or n in only}
    text = "import cuda.tile as ct\n\n\n" + "\n\n".join(source for source, _ in kernels.values())
    if cases:
        text += "\n\n" + CASES.format(kernels=", ".join(f"({n}, {rank})" for n, (_, rank) in kernels.items()))
    path.write_text(text)
    return {name: rank for name, (_, rank) in kernels.items()}


# Inputs for a campaign's kernels on a GPU: values in [0.5, 2) (so that logs, roots and divisions
# stay finite), f32 and f16 by turns, n = 3, f = 0.7, TILE = 64: 4096 elements, or x 256 x 64,
# w 64 x 256 and y 256 x 64 (block i loads x's and w's i-th tiles and stores y's).
CASES = """\
def cases(torch):
    for i, (kernel, rank) in enumerate([{kernels}]):
        dtype = (torch.float32, torch.float16)[i % 2]
        shapes = [(4096,)] * 3 if rank == 1 else [(256, 64), (64, 256), (256, 64)]
        gen = torch.Generator(device="cuda").manual_seed(i)
        x, w, _ = (torch.rand(s, device="cuda", generator=gen).mul(1.5).add(0.5).to(dtype) for s in shapes)
        yield kernel, (shapes[0][0] // 64,), (x, w, torch.empty(shapes[2], device="cuda", dtype=dtype), 3, 0.7, 64)
"""


def cutile_accepts(kernel, rank: int) -> bool:
    """Whether cuTile Python compiles a campaign's kernel with f32 arrays, TILE = 64."""
    from ..translator import cutile_frontend as frontend

    array = ("array", "f32", [-1] * (rank - 1) + [1])
    sig = frontend.signature([array, array, array, ("scalar", "i32"), ("scalar", "f32"), ("constant", 64)])
    return not isinstance(frontend.verdict(kernel, sig), frontend.Rejection)


def run(path: Path, kernels: dict[str, int]) -> Campaign:
    """Translates each kernel of the file `path` on its own and sorts it by outcome."""
    from ..builder.wheel import RUNTIME_CRATE
    from ..translator import frontend, oracle, translate

    module = frontend.import_file(path)
    campaign = Campaign(path)
    for name, rank in kernels.items():
        kernel = getattr(module, name)
        try:
            translate(kernel, runtime_path=RUNTIME_CRATE)
            outcome, why = "agrees", ""
        except oracle.Disagreement as e:
            outcome, why = "disagrees", str(e)
        except TranslationError as e:
            why = str(e)
            outcome = ("cutile_rejects" if "cuTile Python rejects" in why else
                       "refused" if cutile_accepts(kernel, rank) else "both_refuse")
        except Exception as e:  # noqa: BLE001 - a tilebridge bug, counted
            outcome, why = "crashes", f"{type(e).__name__}: {e}"
        campaign.outcomes[name] = outcome
        if why:
            campaign.messages[name] = why
    return campaign
