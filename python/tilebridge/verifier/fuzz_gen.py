"""Random cuTile Python kernels for the differential fuzz campaign (`verifier.fuzz`).

Each kernel is written as a user would write it, and comes with the one launch it is translated,
compiled and run at: its arrays' shapes and dtypes, its scalars, its constants and its grid. The
generator tracks each value's kind (a tile, with its class, dtype and shape, or a scalar), so
that most kernels are valid cuTile Python; what is not is sorted out by the campaign, as
cuTile Python itself decides.

Three families of kernel:
- `rows`: 1-D arrays, one tile of `TM` elements per block (with gathers at shifted indices, some
  out of bounds, and scatters at reversed ones);
- `grid`: 2-D arrays, one `(TM, TN)` tile per block (reductions over either axis or both,
  `keepdims`, broadcasting of rows and columns, `cumsum`, `transpose` of square tiles);
- `mma`: a square `(T, T)` tile product (`@`, `ct.matmul`, `ct.mma` with an f32 accumulator).

Everything a kernel does is drawn from: arithmetic on tiles and scalars (integer `//`, `%` and
shifts on negatives, float `//` and `%`, `**`), bitwise and logical operators, comparisons,
`ct.where`, `ct.minimum`/`maximum`, math functions, casts to every dtype class, reductions
(`ct.argmax`/`ct.argmin` among them, NaN propagated or not),
`ct.full`/`zeros`/`ones`/`arange`, loops with any start, stop and step (negative, empty), loops
with `ct.static_iter`, `while True` with `break`, branches on constants and on runtime values,
and the arrays' dtypes: f32, f16, bf16, int32, int64, int8, uint8 and fp8 (loaded, then cast).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..dtypes import DTYPES

FLOATS = ("f32", "f16", "bf16")
# the dtypes an input array may have, with how often: fp8 and the small integers are cast on load
INPUTS = ("f32",) * 4 + ("f16",) * 3 + ("bf16",) * 2 + ("i32",) * 3 + ("i64", "i8", "u8", "f8e4m3fn")
OUTPUTS = ("f32",) * 3 + ("f16",) * 2 + ("bf16", "i32", "i64")


def ct_name(dtype: str) -> str:
    """`float16` for `f16`: the attribute of `cuda.tile`."""
    return DTYPES[dtype].cutile_python


def cls(dtype: str) -> str:
    """A dtype's class as the generator tracks it: "float", "int" or "bool"."""
    return "bool" if dtype == "bool" else "int" if DTYPES[dtype].is_integer else "float"


MATH = ("ct.exp", "ct.log", "ct.sqrt", "ct.rsqrt", "ct.tanh", "ct.sin", "ct.cos", "ct.exp2", "ct.floor",
        "ct.ceil", "ct.abs", "ct.negative")
# (start, stop, step) of loops: forward, backward, empty, one trip, runtime bounds
RANGES = (("4",), ("0", "4"), ("1", "7", "2"), ("8", "0", "-2"), ("5", "1", "-1"), ("0", "0"), ("3", "3", "1"),
          ("2", "0"), ("0", "n"), ("n", "0", "-1"), ("-2", "3"), ("0", "n % 5 + 1", "2"), ("6", "-1", "-3"))
CONST_TESTS = ("TM >= 32", "TM == 16", "TM > TN", "TN <= 16")
RUNTIME_TESTS = ("n > 2", "pid % 2 == 0", "f < 0.5", "n <= 0", "pid == 1")


@dataclass
class Val:
    """A value of the kernel: `shape` None for a scalar (`cls` int or float), else a tile's shape
    (names of constants, or "1") with its class and dtype."""

    text: str
    cls: str
    shape: tuple[str, ...] | None = None
    dtype: str | None = None

    @property
    def tile(self) -> bool:
        return self.shape is not None


@dataclass
class Fuzzed:
    """One generated kernel and the launch it is run at."""

    name: str
    source: str
    arrays: dict[str, tuple[tuple[int, ...], str]]  # parameter -> (shape, dtype), in order
    scalars: dict[str, int | float]
    constants: dict[str, int]
    grid: tuple[int, ...]
    # per input array, the range its values are drawn from on a GPU ((lo, hi); indices: exact)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)


def _broadcast(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...] | None:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else "1"
        y = b[-i] if i <= len(b) else "1"
        if x != y and "1" not in (x, y):
            return None
        out.append(y if x == "1" else x)
    return tuple(reversed(out))


def _promote(a: Val, b: Val) -> str | None:
    """The dtype of a tile operation of `a` and `b`, where the generator offers it (None: it would
    mix f16 and bf16, which cuTile Python refuses, or is left to a cast)."""
    da, db = a.dtype, b.dtype
    if not a.tile:
        return db
    if not b.tile:
        return da
    if da == db:
        return da
    if {a.cls, b.cls} == {"float"}:
        return "f32" if "f32" in (da, db) else None
    if a.cls == "float" and b.cls != "float":
        return da
    if b.cls == "float" and a.cls != "float":
        return db
    return None


class Generator:
    """Random kernels from one seed: kernel `i` depends on the seed and `i` only."""

    def __init__(self, seed: int):
        self.seed = seed

    def kernel(self, index: int) -> Fuzzed:
        self.r = random.Random(self.seed * 1_000_003 + index)
        self.lines: list[str] = []
        self.indent = 1
        self.count = 0
        family = self.r.choice(("rows",) * 5 + ("grid",) * 4 + ("mma",))
        name = f"fuzz_{self.seed}_{index}"
        return getattr(self, family)(name)

    # -- statements --------------------------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def load(self, array: str, dtype: str, index: str, shape: tuple[str, ...]) -> Val:
        """A tile of `array`; small integers and fp8 are cast to a dtype that computes."""
        name = self.fresh()
        pad = self.r.random() < 0.15 and cls(dtype) == "float"
        extra = ", padding_mode=ct.PaddingMode.ZERO" if pad else ""
        self.emit(f"{name} = ct.load({array}, index={index}, shape=({', '.join(shape)},){extra})")
        if dtype in ("i8", "u8", "f8e4m3fn"):
            to = "f32" if dtype == "f8e4m3fn" or self.r.random() < 0.5 else "i32"
            self.emit(f"{name} = {name}.astype(ct.{ct_name(to)})")
            dtype = to
        return Val(name, cls(dtype), shape, dtype)

    def body(self, pool: list[Val], shape: tuple[str, ...], steps: int) -> None:
        """`steps` statements, each adding a value to `pool`."""
        for _ in range(steps):
            roll = self.r.random()
            if roll < 0.12:
                self.loop(pool, shape)
            elif roll < 0.2:
                self.branch(pool, shape)
            elif roll < 0.24:
                self.while_loop(pool, shape)
            else:
                v = self.expr(pool, shape, self.r.randint(1, 3))
                name = self.fresh()
                self.emit(f"{name} = {v.text}")
                pool.append(Val(name, v.cls, v.shape, v.dtype))

    def accumulator(self, pool: list[Val], shape: tuple[str, ...]) -> Val:
        """A full tile to accumulate into: one of `pool`'s, or new zeros."""
        tiles = [v for v in pool if v.shape == shape and v.cls != "bool"]
        if tiles and self.r.random() < 0.6:
            base = self.r.choice(tiles)
            return Val(base.text, base.cls, shape, base.dtype)
        dtype = self.r.choice(("f32", "f32", "i32", "f16"))
        return Val(f"ct.zeros(({', '.join(shape)},), dtype=ct.{ct_name(dtype)})", cls(dtype), shape, dtype)

    def _accumulate(self, target: str, acc: Val, pool: list[Val], shape: tuple[str, ...]) -> None:
        step = self.expr(pool, shape, self.r.randint(1, 2), want=acc.cls)
        cast = f"({step.text}).astype({target}.dtype)"
        self.emit(f"{target} = {target} + {cast}")

    def loop(self, pool: list[Val], shape: tuple[str, ...]) -> None:
        acc = self.accumulator(pool, shape)
        target = self.fresh()
        self.emit(f"{target} = {acc.text}")
        bounds = self.r.choice(RANGES)
        iterable = f"range({', '.join(bounds)})"
        if self.r.random() < 0.15 and "n" not in iterable:
            iterable = f"ct.static_iter({iterable})"
        self.emit(f"for i in {iterable}:")
        self.indent += 1
        self._accumulate(target, acc, pool + [Val("i", "int")], shape)
        self.indent -= 1
        pool.append(Val(target, acc.cls, shape, acc.dtype))

    def while_loop(self, pool: list[Val], shape: tuple[str, ...]) -> None:
        acc = self.accumulator(pool, shape)
        target, k = self.fresh(), self.fresh()
        self.emit(f"{target} = {acc.text}")
        self.emit(f"{k} = 0")
        self.emit("while True:")
        self.indent += 1
        self._accumulate(target, acc, pool + [Val(k, "int")], shape)
        self.emit(f"{k} += 1")
        self.emit(f"if {k} >= {self.r.choice(('3', 'n', '1', 'n % 4 + 1'))}:")
        self.emit("    break")
        self.indent -= 1
        pool.append(Val(target, acc.cls, shape, acc.dtype))

    def branch(self, pool: list[Val], shape: tuple[str, ...]) -> None:
        """A value set in both arms of an `if` on a constant or on a runtime value, at one dtype."""
        test = self.r.choice(CONST_TESTS if self.r.random() < 0.5 else RUNTIME_TESTS)
        if "TN" in test and "TN" not in shape:
            test = "TM < 64"
        dtype = self.r.choice(("f32", "f32", "i32", "f16"))
        target = self.fresh()
        self.emit(f"if {test}:")
        for arm in range(2):
            if arm:
                self.emit("else:")
            v = self.expr(pool, shape, self.r.randint(1, 2))
            text = v.text if v.shape == shape else f"ct.broadcast_to({v.text}, ({', '.join(shape)},))"
            self.emit(f"    {target} = ({text}).astype(ct.{ct_name(dtype)})")
        pool.append(Val(target, cls(dtype), shape, dtype))

    # -- expressions -------------------------------------------------------------------------------

    def leaf(self, pool: list[Val], want: str | None = None) -> Val:
        r = self.r
        roll = r.random()
        choices = [v for v in pool if want is None or v.cls == want]
        if roll < 0.65 and choices:
            return r.choice(choices)
        if want == "float" or (want is None and roll < 0.82):
            return Val(r.choice(("0.5", "2.0", "1e-3", "-1.5", "3.0", "f")), "float")
        return Val(r.choice(("1", "2", "3", "-1", "7", "n", "pid")), "int")

    def expr(self, pool: list[Val], shape: tuple[str, ...], depth: int, want: str | None = None) -> Val:
        """An expression of the values in `pool` (a tile of `shape` or broadcast to it, or a
        scalar); `want`: its class, where it matters."""
        r = self.r
        if depth == 0:
            return self.leaf(pool, want)
        roll = r.random()
        if roll < 0.3:
            return self.arithmetic(pool, shape, depth, want)
        if roll < 0.42 and want in (None, "float"):
            a = self.expr(pool, shape, depth - 1, "float")
            fn = r.choice(MATH)
            if not a.tile:  # math functions take tiles; a scalar is made one
                a = Val(f"ct.full(({', '.join(shape)},), {a.text}, dtype=ct.float32)", "float", shape, "f32")
            return Val(f"{fn}({a.text})", "float", a.shape, a.dtype)
        if roll < 0.5:
            a = self.expr(pool, shape, depth - 1, want)
            to = r.choice(("f32", "f16", "bf16", "i32", "i64") if want is None else
                          FLOATS if want == "float" else ("i32", "i64") if want == "int" else ("bool",))
            if not a.tile:
                a = self.as_tile(a, shape)
            method = r.random() < 0.5
            spelled = f"{a.text}.astype(ct.{ct_name(to)})" if method else f"ct.astype({a.text}, ct.{ct_name(to)})"
            return Val(spelled, cls(to), a.shape, to)
        if roll < 0.58:
            a, b = self.expr(pool, shape, depth - 1, want), self.expr(pool, shape, depth - 1, want)
            return self.combine(f"ct.{r.choice(('minimum', 'maximum'))}({a.text}, {b.text})", a, b, want)
        if roll < 0.68:
            a = self.expr(pool, shape, depth - 1)
            b = self.expr(pool, shape, depth - 1, a.cls if a.cls != "bool" else None)
            cond = f"{a.text} {r.choice(('<', '<=', '>', '>=', '==', '!='))} {b.text}"
            c, d = self.expr(pool, shape, depth - 1, want), self.expr(pool, shape, depth - 1, want)
            cs = _broadcast(a.shape or (), b.shape or ())
            if cs is None or (not a.tile and not b.tile):
                return c
            if want == "bool":
                return Val(f"({cond})", "bool", cs, "bool")
            out = self.combine(f"ct.where({cond}, {c.text}, {d.text})", c, d, want)
            if out.shape is None or _broadcast(out.shape, cs) != shape:
                return c
            return Val(out.text, out.cls, _broadcast(out.shape, cs), out.dtype)
        if roll < 0.78 and want != "bool":
            return self.reduction(pool, shape, depth, want)
        if roll < 0.83 and want in (None, "float"):
            a = self.expr(pool, shape, depth - 1, "float")
            if not a.tile:
                return a
            b = r.choice(("2", "0.5", "n", "f", "2.0", "3"))
            return Val(f"({a.text} ** {b})", "float", a.shape, a.dtype)
        if roll < 0.88 and want in (None, "int") and len(shape) == 1:
            start = r.choice(("", ", start=1", ", start=-4, step=2"))
            dtype = r.choice(("i32", "i32", "i64"))
            return Val(f"ct.arange(TM, dtype=ct.{ct_name(dtype)}{start})", "int", ("TM",), dtype)
        if roll < 0.92 and want != "bool":
            a = self.expr(pool, shape, depth - 1, want)
            if a.tile and a.shape == shape and len(shape) == 2 and r.random() < 0.5 and shape[0] == shape[1]:
                return Val(f"ct.transpose({a.text})", a.cls, shape, a.dtype)
            if a.tile and a.shape == shape and a.cls != "bool":
                axis = r.randrange(len(shape))
                rev = r.choice(("", ", reverse=True"))
                return Val(f"ct.cumsum({a.text}, axis={axis}{rev})", a.cls, shape, a.dtype)
            return a
        return self.leaf(pool, want)

    def as_tile(self, a: Val, shape: tuple[str, ...]) -> Val:
        dtype = "f32" if a.cls == "float" else "i32"
        return Val(f"ct.full(({', '.join(shape)},), {a.text}, dtype=ct.{ct_name(dtype)})", a.cls, shape, dtype)

    def combine(self, text: str, a: Val, b: Val, want: str | None) -> Val:
        """The value of an elementwise operation of `a` and `b` (a scalar when neither is a tile)."""
        if not a.tile and not b.tile:
            return Val(text, "float" if "float" in (a.cls, b.cls) else a.cls)
        shape = _broadcast(a.shape or (), b.shape or ())
        dtype = _promote(a, b)
        if shape is None or dtype is None:
            return a
        return Val(text, cls(dtype), shape, dtype)

    def arithmetic(self, pool: list[Val], shape: tuple[str, ...], depth: int, want: str | None) -> Val:
        r = self.r
        a = self.expr(pool, shape, depth - 1, want)
        if a.cls == "bool":
            b = self.expr(pool, shape, depth - 1, "bool")
            if b.cls != "bool":
                return a
            return self.combine(f"({a.text} {r.choice(('&', '|', '^'))} {b.text})", a, b, want)
        if a.cls == "int" and r.random() < 0.45:
            op = r.choice(("//", "%", "//", "%", "&", "|", "^", "<<", ">>"))
            if op in ("//", "%"):  # never by zero: a literal of either sign, or n (never 0)
                b = Val(r.choice(("3", "-3", "2", "-7", "5", "n")), "int")
            elif op in ("<<", ">>"):
                b = Val(r.choice(("1", "2", "3")), "int")
            else:
                b = self.expr(pool, shape, depth - 1, "int")
            return self.combine(f"({a.text} {op} {b.text})", a, b, want)
        b = self.expr(pool, shape, depth - 1, want if want != "bool" else None)
        if b.cls == "bool":
            return a
        ops = ("+", "-", "*", "/", "+", "*") if "float" in (a.cls, b.cls) or want == "float" else ("+", "-", "*")
        op = r.choice(ops + (("//", "%") if a.cls == "float" and b.cls == "float" and r.random() < 0.3 else ()))
        if op == "/" and want == "int":
            op = "*"
        out = self.combine(f"({a.text} {op} {b.text})", a, b, want)
        if op == "/" and out.tile and out.cls == "int":
            return Val(out.text, "float", out.shape, "f32")
        if op == "/" and not out.tile:
            return Val(out.text, "float")
        return out

    def reduction(self, pool: list[Val], shape: tuple[str, ...], depth: int, want: str | None) -> Val:
        r = self.r
        a = self.expr(pool, shape, depth - 1, want)
        if not a.tile or a.cls == "bool" or a.shape != shape:
            return a
        fn = r.choice(("ct.sum", "ct.max", "ct.min", "ct.sum", "ct.prod", "ct.argmax", "ct.argmin"))
        rank = len(shape)
        axes = r.choice([(0,), (-1,), (0, 1), (1,), None] if rank == 2 else [(0,), (-1,), None])
        keep = r.random() < 0.5 or rank == 2
        spelled = "None" if axes is None else str(axes[0]) if len(axes) == 1 and r.random() < 0.7 else str(axes)
        cls_, dtype, extra = a.cls, a.dtype, ""
        if fn in ("ct.argmax", "ct.argmin"):
            if want == "float":
                fn = "ct.max"
            else:  # one axis or every axis (no tuple), the first index of the extreme value, i32
                axes = None if axes is not None and len(axes) > 1 else axes
                spelled = "None" if axes is None else str(axes[0])
                cls_, dtype = "int", "i32"
                extra = ", propagate_nan=True" if a.cls == "float" and r.random() < 0.3 else ""
        kept = {a % rank for a in (axes or range(rank))}
        out = tuple("1" if i in kept else d for i, d in enumerate(shape)) if keep else tuple(
            d for i, d in enumerate(shape) if i not in kept)
        text = f"{fn}({a.text}, axis={spelled}{', keepdims=True' if keep else ''}{extra})"
        return Val(text, cls_, out, dtype)  # `out` is () for a 0-d tile

    # -- the three families ------------------------------------------------------------------------

    def finish(self, pool: list[Val], shape: tuple[str, ...]) -> str:
        """The tile stored: the last full tile computed (a scalar or 0-d one broadcast)."""
        tiles = [v for v in pool if v.tile and v.shape == shape]
        v = tiles[-1] if tiles and self.r.random() < 0.85 else self.expr(pool, shape, 2)
        text = v.text
        if v.shape != shape:
            text = f"ct.broadcast_to({v.text if v.tile else self.as_tile(v, shape).text}, ({', '.join(shape)},))"
        return f"({text}).astype(y.dtype)" if self.r.random() < 0.9 else text

    def rows(self, name: str) -> Fuzzed:
        r = self.r
        tm = r.choice((16, 32, 64))
        blocks = r.choice((2, 4))
        xd, wd, yd = r.choice(INPUTS), r.choice(INPUTS), r.choice(OUTPUTS)
        self.emit("pid = ct.bid(0)")
        pool = [Val("pid", "int"), Val("n", "int"), Val("f", "float"), self.load("x", xd, "(pid,)", ("TM",))]
        if r.random() < 0.6:
            pool.append(self.load("w", wd, "(pid,)", ("TM",)))
        if r.random() < 0.25:  # a gather at shifted indices: some out of bounds read the padding
            shift = r.choice(("1", "-3", "TM // 2", "n", "-n"))
            g = self.fresh()
            pad = r.choice(("", ", padding_value=0", ", padding_value=-1"))
            self.emit(f"{g} = ct.gather(w, ct.arange(TM, dtype=ct.int32) + pid * TM + {shift}{pad})")
            gd = "f32" if wd in ("i8", "u8", "f8e4m3fn") else wd
            if gd != wd:
                self.emit(f"{g} = {g}.astype(ct.float32)")
            pool.append(Val(g, cls(gd), ("TM",), gd))
        self.body(pool, ("TM",), r.randint(1, 4))
        tile = self.finish(pool, ("TM",))
        if r.random() < 0.2:  # a scatter at reversed indices within the block's own slice
            self.emit(f"ct.scatter(y, pid * TM + (TM - 1 - ct.arange(TM, dtype=ct.int32)), {tile})")
        else:
            self.emit(f"ct.store(y, index=(pid,), tile={tile})")
        n = tm * blocks
        return self._fuzzed(name, "x, w, y, n: int, f: float, TM: ct.Constant[int]",
                            {"x": ((n,), xd), "w": ((n,), wd), "y": ((n,), yd)}, {"TM": tm}, (blocks,))

    def grid(self, name: str) -> Fuzzed:
        r = self.r
        tm, tn = r.choice(((16, 32), (32, 16), (16, 16), (32, 64), (64, 16)))
        blocks = r.choice((2, 3))
        xd, wd, yd = r.choice(INPUTS), r.choice(INPUTS), r.choice(OUTPUTS)
        shape = ("TM", "TN")
        self.emit("pid = ct.bid(0)")
        pool = [Val("pid", "int"), Val("n", "int"), Val("f", "float"), self.load("x", xd, "(pid, 0)", shape)]
        if r.random() < 0.5:
            pool.append(self.load("w", wd, "(pid, 0)", shape))
        self.body(pool, shape, r.randint(1, 4))
        self.emit(f"ct.store(y, index=(pid, 0), tile={self.finish(pool, shape)})")
        rows = tm * blocks
        return self._fuzzed(name, "x, w, y, n: int, f: float, TM: ct.Constant[int], TN: ct.Constant[int]",
                            {"x": ((rows, tn), xd), "w": ((rows, tn), wd), "y": ((rows, tn), yd)},
                            {"TM": tm, "TN": tn}, (blocks,))

    def mma(self, name: str) -> Fuzzed:
        r = self.r
        t = r.choice((16, 32))
        blocks = 2
        xd, wd = r.choice(("f32", "f16", "bf16", "f16")), r.choice(("f32", "f16", "bf16", "f16"))
        yd = r.choice(("f32", "f16"))
        self.emit("pid = ct.bid(0)")
        a = self.load("x", xd, "(pid, 0)", ("TM", "TM"))
        b = self.load("w", wd, "(0, pid)", ("TM", "TM"))
        if xd != wd or r.random() < 0.3:
            to = r.choice(("f16", "f32", "bf16"))
            self.emit(f"{a.text} = {a.text}.astype(ct.{ct_name(to)})")
            self.emit(f"{b.text} = {b.text}.astype(ct.{ct_name(to)})")
            a, b = Val(a.text, "float", a.shape, to), Val(b.text, "float", b.shape, to)
        c = self.fresh()
        how = r.choice(("@", "matmul", "mma"))
        if how == "@":
            self.emit(f"{c} = {a.text} @ {b.text}")
            cd = a.dtype
        elif how == "matmul":
            self.emit(f"{c} = ct.matmul({a.text}, {b.text})")
            cd = a.dtype
        else:
            self.emit(f"{c} = ct.mma({a.text}, {b.text}, ct.zeros((TM, TM), dtype=ct.float32))")
            cd = "f32"
        pool = [Val("pid", "int"), Val("n", "int"), Val("f", "float"), a, Val(c, "float", ("TM", "TM"), cd)]
        self.body(pool, ("TM", "TM"), r.randint(0, 2))
        self.emit(f"ct.store(y, index=(pid, 0), tile={self.finish(pool, ('TM', 'TM'))})")
        return self._fuzzed(name, "x, w, y, n: int, f: float, TM: ct.Constant[int]",
                            {"x": ((t * blocks, t), xd), "w": ((t, t * blocks), wd), "y": ((t * blocks, t), yd)},
                            {"TM": t}, (blocks,))

    def _fuzzed(self, name: str, params: str, arrays, constants, grid) -> Fuzzed:
        source = f"@ct.kernel\ndef {name}({params}):\n" + "\n".join(self.lines) + "\n"
        scalars = {"n": self.r.choice((3, -2, 5, 1)), "f": self.r.choice((0.7, -1.25, 0.3))}
        ranges = {p: ((-100, 100) if cls(d) == "int" and d != "u8" else (0, 200) if d == "u8" else (-2.0, 2.0))
                  for p, (_, d) in arrays.items() if p != "y"}
        return Fuzzed(name, source, arrays, scalars, constants, grid, ranges)
