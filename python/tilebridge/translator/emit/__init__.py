"""Emit: typed kernel IR -> the files of a Rust crate, through Jinja2 templates.

`render_crate` returns every file as text (nothing is written here): the
`#[cutile::module]` kernel source, the PyO3 launchers, `Cargo.toml`,
`pyproject.toml` and a `.pyi` stub. Rust files are passed through rustfmt when it
is installed, so the output is rustfmt-clean either way it is read.

The parts, a module each: `rust_expr` (IR types and expressions as Rust text), `kernel` (the
`#[cutile::entry]` functions), `launcher` (the PyO3 launchers, and the metadata that describes
them to the Python side), `stub` (the `.pyi` signatures). Emit reads the IR only, never the text
it rendered.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from .. import ir, module_items
from ..rust_syntax import rust_name
from ...metadata import ExtensionMetadata
from .kernel import entry
from .launcher import (block_dims, check_launcher, dispatched_metadata, dispatcher, family_dispatcher, family_note,
                       kernel_metadata, launch_imports, launcher)
from .stub import stub

__all__ = ["render_crate", "CrateFiles", "rustfmt", "check_launcher"]

CUTILE_VERSION = "0.5.0"
PYO3_VERSION = "0.30"

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)
_ENV.filters["untied_axes"] = module_items.untied_axes


@dataclass
class CrateFiles:
    """A generated crate, as text, before anything is written."""

    module: str
    files: dict[str, str]  # relative path -> contents
    skipped: list[str] = field(default_factory=list)  # `partial` translation: why each kernel was left out
    # per kernel entry, the specializations a build may compile to cubins ahead of any launch
    specializations: dict[str, list] = field(default_factory=dict)
    # per kernel entry, the specializations `build(aot=...)` ships compiled, and why others are not
    shipments: dict[str, list] = field(default_factory=dict)
    not_shipped: dict[str, list[str]] = field(default_factory=dict)
    # The Rust files as rendered, before rustfmt: what the build key hashes, so that a machine
    # without rustfmt (or with another version) computes the same key for the same translation.
    unformatted: dict[str, str] = field(default_factory=dict)

    def as_rendered(self) -> dict[str, str]:
        """`files`, the Rust ones as rendered."""
        return {**self.files, **self.unformatted}


def render_crate(kernels: list[ir.KernelIR], module: str, runtime_path: Path, source: str) -> CrateFiles:
    """The crate of `kernels`, each of which has passed `check_launcher` (`translate` checks
    them one by one, so that a partial translation can leave a kernel out)."""
    # Kernels translated once per type of their unannotated scalars, or per family of dtypes of
    # their arrays, by the launcher that picks one.
    variants: dict[str, list[ir.KernelIR]] = {}
    for k in kernels:
        if k.public is not None:
            variants.setdefault(k.public, []).append(k)
    plain = [k for k in kernels if k.public is None]
    meta = ExtensionMetadata(module, source, {**{k.name: kernel_metadata(k) for k in plain},
                                              **{name: dispatched_metadata(vs) for name, vs in variants.items()}})
    launchers = [launcher(k) for k in kernels]
    for vs in variants.values():
        if not vs[0].scalar_variant:  # a dtype the kernel as translated refuses: what its variants take
            note = json.dumps(family_note(vs))
            launchers[kernels.index(vs[0])]["admit"].insert(0, f"launch.also_takes({note});")
    entries = [entry(k) for k in kernels]
    macros = {n.func for k in kernels for n in ir.nodes(k.body) if isinstance(n, ir.Call) and n.func.endswith("!")}
    ctx = {
        "module": module,
        "source": source,
        **module_items.called(kernels),
        # cutile's macros for Tile IR's assert and print are `unreachable!()` to rustc: what follows
        # them "is unreachable"
        "asserts": "cuda_tile_assert!" in macros,
        "prints": "cuda_tile_print!" in macros,
        "cutile_version": CUTILE_VERSION,
        "pyo3_version": PYO3_VERSION,
        "runtime_path": runtime_path.as_posix(),
        "entries": entries,
        "launchers": launchers,
        "launch_imports": ", ".join(launch_imports(kernels)),
        "kernel_names": [k.name for k in kernels],
        "block_views": [f'("{k.name}", "{rust_name(p.name)}", &[{", ".join(block_dims(p.view))}])'
                        for k in kernels for p in k.arrays if p.view is not None],
        "dispatchers": [dispatcher(vs) for vs in variants.values() if vs[0].scalar_variant],
        "family_dispatchers": [family_dispatcher(vs) for vs in variants.values() if not vs[0].scalar_variant],
        "python_names": [k.name for k in plain] + list(variants),
        "stubs": [stub(k) for k in plain] + [stub(vs[0]) for vs in variants.values()],
    }
    rust = {"src/tile_kernels.rs": _ENV.get_template("kernels.rs.j2").render(ctx),
            "src/lib.rs": _ENV.get_template("lib.rs.j2").render(ctx)}
    files = {
        "Cargo.toml": _ENV.get_template("Cargo.toml.j2").render(ctx),
        "pyproject.toml": _ENV.get_template("pyproject.toml.j2").render(ctx),
        **{name: rustfmt(text) for name, text in rust.items()},
        f"{module}.pyi": _ENV.get_template("stub.pyi.j2").render(ctx),
        "tilebridge.json": meta.to_json(),
    }
    return CrateFiles(module, files, unformatted=rust)


def rustfmt(text: str) -> str:
    """Formats Rust source with rustfmt (edition 2021) when it is on PATH."""
    exe = shutil.which("rustfmt")
    if exe is None:
        return text
    proc = subprocess.run([exe, "--edition", "2021", "--emit", "stdout", "--quiet"], input=text,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"rustfmt rejected generated code (a tilebridge bug):\n{proc.stderr}\n{text}")
    return proc.stdout
