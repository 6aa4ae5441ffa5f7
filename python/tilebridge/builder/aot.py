"""Ahead-of-time cubins: the specializations a build ships (`specializations.shipments`: the
launches recorded for it, or every dtype combination of a kernel without constants) compiled on
the CPU for each GPU architecture asked for, and shipped in the wheel beside the extension's
library as `kernels.cubins`. A launch of a shipped specialization loads its cubin instead of
running cutile's front end and `tileiras` (`runtime/crate/src/aot.rs`, which reads the bundle).

The bundle: the line `tilebridge-cubins 1`, one line of JSON (the build key; per cubin its key,
its validator, its offset and length after the index), then the cubins.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any, Sequence

from ..dtypes import ARRAY_DTYPES
from ..errors import BuildError
from .cubins import in_child, raise_failures

BUNDLE = "kernels.cubins"  # in the extension's package folder (aot.rs reads it there)
MAGIC = b"tilebridge-cubins 1\n"

def to_shipped(ext: Any, job: dict) -> dict:
    """In the child (`cubins.in_child`): one job through the extension's `_aot_compile` (front end,
    then tileiras): its key, validator and cubin (base64)."""
    key, validator, cubin = ext._aot_compile(
        job["kernel"], job["generics"], [tuple(s) for s in job["strides"]], job["arch"],
        tuple(job["hints"]) if job["hints"] else None, [tuple(a) for a in job["arrays"]])
    return {"key": key, "validator": validator, "cubin": base64.b64encode(cubin).decode()}


def jobs(shipments: dict[str, list], archs: Sequence[str]) -> list[dict]:
    """One compile per shipped specialization and architecture, as `_aot_compile` takes it: each
    array as (parameter, dtype, shape, strides, base address, bytes per element), its base taken
    as aligned (as every allocation of torch and CuPy is)."""
    return [{"kernel": kernel, "generics": s.generics, "strides": s.strides, "arch": arch, "hints": s.hints,
             "arrays": [(name, dtype, shape, strides, 0, ARRAY_DTYPES[dtype].itemsize)
                        for name, dtype, shape, strides in s.arrays]}
            for kernel, shipped in shipments.items() for s in shipped for arch in archs]


def key_of(shipments: dict[str, list], archs: Sequence[str]) -> bytes:
    """What the build key hashes of a build with shipped cubins."""
    return json.dumps({"aot": list(archs), "shipments": {k: [dataclasses.asdict(s) for s in v]
                                                         for k, v in sorted(shipments.items())}},
                      sort_keys=True).encode()


def ship(wheel: Path, module: str, shipments: dict[str, list], archs: Sequence[str], build_key: str,
         quiet: bool = False) -> int:
    """Compiles the shipments for `archs` with the extension in `wheel` and adds the bundle to the
    wheel; the number of distinct cubins. Raises BuildError naming each one that fails (the wheel is then
    left as maturin made it, and is not marked built)."""
    todo = jobs(shipments, archs)
    if not todo:
        return 0
    if not quiet:
        print(f"tilebridge: {len(todo)} specializations to {', '.join(archs)} cubins to ship (tileiras)",
              file=sys.stderr)
    results = in_child(wheel, module, to_shipped, todo)
    failures = [r for r in results if "error" in r]
    if failures:
        raise_failures(module, failures, len(todo), f"do not compile to a {'/'.join(archs)} cubin")
    if len(results) != len(todo):
        raise BuildError(f"compiling {module}'s cubins: {len(results)} results for {len(todo)} specializations")
    cubins = [(r["key"], r["validator"], base64.b64decode(r["cubin"])) for r in results]
    add_to_wheel(wheel, f"{module}/{BUNDLE}", pack(build_key, cubins))
    return len({key for key, _, _ in cubins})


def pack(build_key: str, cubins: list[tuple[str, str, bytes]]) -> bytes:
    """The bundle of `(key, validator JSON, cubin)` for the extension of build `build_key`, each key
    once (two recorded launches of other shapes may specialize alike)."""
    by_key = {key: (validator, cubin) for key, validator, cubin in cubins}
    entries, offset = [], 0
    for key in sorted(by_key):
        validator, cubin = by_key[key]
        entries.append({"key": key, "validator": json.loads(validator), "offset": offset, "len": len(cubin)})
        offset += len(cubin)
    index = json.dumps({"build_key": build_key, "entries": entries}, separators=(",", ":"))
    return MAGIC + index.encode() + b"\n" + b"".join(by_key[key][1] for key in sorted(by_key))


def unpack(bundle: bytes) -> tuple[str, dict[str, tuple[dict, bytes]]]:
    """The build key of a bundle and its cubins by key: `(validator, cubin)`."""
    if not bundle.startswith(MAGIC):
        raise ValueError("not a tilebridge cubin bundle")
    line, _, blobs = bundle[len(MAGIC):].partition(b"\n")
    index = json.loads(line)
    return index["build_key"], {e["key"]: (e["validator"], blobs[e["offset"]:e["offset"] + e["len"]])
                                for e in index["entries"]}


def shipped_in(wheel: Path, module: str) -> int:
    """How many cubins `wheel` ships (0 without a bundle)."""
    with zipfile.ZipFile(wheel) as z:
        if f"{module}/{BUNDLE}" not in z.namelist():
            return 0
        return len(unpack(z.read(f"{module}/{BUNDLE}"))[1])


def add_to_wheel(wheel: Path, name: str, data: bytes) -> None:
    """Adds (or replaces) the file `name` in `wheel`, with its line in the wheel's RECORD; the
    wheel is replaced whole."""
    tmp = wheel.with_name(f".{wheel.name}.partial")
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    try:
        with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
            record = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
            for info in src.infolist():
                if info.filename not in (record, name):
                    dst.writestr(info, src.read(info))
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16  # rw-r--r--, as maturin writes package files
            dst.writestr(info, data, zipfile.ZIP_DEFLATED)
            lines = [line for line in src.read(record).decode().splitlines()
                     if line and not line.startswith(f"{name},")]
            lines.insert(len(lines) - 1 if lines and lines[-1].startswith(record) else len(lines),
                         f"{name},sha256={digest},{len(data)}")
            dst.writestr(record, "\n".join(lines) + "\n")
        os.replace(tmp, wheel)
    finally:
        tmp.unlink(missing_ok=True)
