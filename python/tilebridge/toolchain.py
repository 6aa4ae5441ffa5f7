"""Toolchain discovery: CUDA headers and the Tile IR toolchain from NVIDIA's wheels.

cutile's build script needs `include/cuda.h` (13.2+) and `curand.h` with the `crt/`
headers; its JIT needs `bin/tileiras` with the matching `ptxas` and libnvvm. The
`nvidia-*` wheels install all of them into one `site-packages/nvidia/cu13` tree,
and `CUDA_TOOLKIT_PATH` pointing there satisfies both.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

_WHEELS = ("nvidia-cuda-runtime", "nvidia-cuda-crt", "nvidia-curand", "nvidia-cuda-tileiras", "nvidia-nvvm",
           "nvidia-cuda-nvcc")


def cuda_root() -> Path | None:
    """The CUDA tree to use: $CUDA_TOOLKIT_PATH if set, else the wheels' nvidia/cu13."""
    if os.environ.get("CUDA_TOOLKIT_PATH"):
        return Path(os.environ["CUDA_TOOLKIT_PATH"])
    try:
        import nvidia  # namespace package of NVIDIA's wheels
    except ImportError:
        return None
    for base in getattr(nvidia, "__path__", []):
        root = Path(base) / "cu13"
        if (root / "include" / "cuda.h").exists():
            return root
    return None


def cuda_header_version(root: Path) -> int | None:
    header = root / "include" / "cuda.h"
    if not header.exists():
        return None
    m = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", header.read_text(errors="replace"))
    return int(m.group(1)) if m else None


def target_dir() -> Path:
    """A persistent cargo target folder shared by every generated crate, so cutile compiles once."""
    return Path(os.environ.get("CARGO_TARGET_DIR") or Path.home() / ".cache" / "tilebridge" / "target")


def build_env() -> dict[str, str]:
    env = dict(os.environ)
    root = cuda_root()
    if root is None:
        from .errors import BuildError

        raise BuildError("no CUDA headers found: install NVIDIA's wheels (pip install 'tilebridge' brings "
                         "nvidia-cuda-runtime, nvidia-cuda-crt, nvidia-curand) or set CUDA_TOOLKIT_PATH")
    env["CUDA_TOOLKIT_PATH"] = str(root)
    env["CARGO_TARGET_DIR"] = str(target_dir())
    return env


def runtime_env() -> None:
    """Points cutile's JIT at the wheels' tileiras, if the caller has not chosen one."""
    root = cuda_root()
    if root is not None and (root / "bin" / "tileiras").exists():
        os.environ.setdefault("CUDA_TOOLKIT_PATH", str(root))


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def doctor() -> list[Check]:
    """Everything a build and a launch need, each checked."""
    checks: list[Check] = []
    root = cuda_root()
    version = cuda_header_version(root) if root else None
    checks.append(Check("CUDA headers (cuda.h >= 13.2)", bool(version and version >= 13020),
                        f"{root} (CUDA_VERSION {version})" if root else "not found: pip install nvidia-cuda-runtime"))
    for rel, what in (("include/crt/host_config.h", "nvidia-cuda-crt"), ("include/curand.h", "nvidia-curand"),
                      ("bin/tileiras", "nvidia-cuda-tileiras"), ("bin/ptxas", "nvidia-cuda-nvcc"),
                      ("lib/libnvvm.so.4", "nvidia-nvvm")):
        ok = bool(root and (root / rel).exists())
        checks.append(Check(rel, ok, str(root / rel) if ok else f"missing: pip install {what}"))
    versions = {}
    for dist in _WHEELS:
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    toolchain = {d: v for d, v in versions.items() if d in ("nvidia-cuda-tileiras", "nvidia-nvvm", "nvidia-cuda-nvcc")}
    same = len({".".join(v.split(".")[:2]) for v in toolchain.values()}) == 1 and len(toolchain) == 3
    checks.append(Check("tileiras, nvvm and nvcc wheels share major.minor", same,
                        ", ".join(f"{d}=={v}" for d, v in sorted(versions.items())) or "none installed"))
    clang = any(Path(p).exists() for p in ("/usr/lib/llvm-14/lib/libclang.so", "/usr/lib/x86_64-linux-gnu/libclang-14.so.1"))
    clang = clang or bool(list(Path("/usr/lib").glob("llvm-*/lib/libclang*.so*")))
    checks.append(Check("libclang (cutile's bindgen)", clang, "found" if clang else "missing: apt-get install libclang-dev"))
    for tool in ("cargo", "rustfmt"):
        exe = shutil.which(tool)
        checks.append(Check(tool, exe is not None, exe or f"missing: install Rust (rustup) with {tool}"))
    try:
        import cuda.tile  # noqa: F401

        checks.append(Check("cuda-tile (cuTile Python, the reference)", True, importlib.metadata.version("cuda-tile")))
    except ImportError:
        checks.append(Check("cuda-tile (cuTile Python, the reference)", False, "missing: pip install cuda-tile"))
    gpu = _gpu_name()
    checks.append(Check("GPU (only launches need one)", gpu is not None, gpu or "none: launches raise DeviceError"))
    return checks


def _gpu_name() -> str | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    proc = subprocess.run([exe, "--query-gpu=name,compute_cap", "--format=csv,noheader"], capture_output=True, text=True)
    return proc.stdout.strip().splitlines()[0] if proc.returncode == 0 and proc.stdout.strip() else None


# tileiras can take minutes on a large specialization (one of mla decoding's: 6.5 min on 2 cores);
# cuTile Python's own autotuner gives it 5 to 15 s. The limit only stops a hung compile.
TILEIRAS_TIMEOUT = float(os.environ.get("TILEBRIDGE_TILEIRAS_TIMEOUT", "600"))


class SlowCompile(RuntimeError):
    """tileiras ran over the time it was given."""


def tileiras(bytecode: bytes, limit: float | None = None) -> bytes:
    """Compiles Tile IR bytecode to an sm_90 cubin with `tileiras`, on the CPU; the cubin. Raises
    RuntimeError with tileiras' reason where it cannot, `SlowCompile` where it runs over `limit`
    seconds (default TILEIRAS_TIMEOUT)."""
    limit = TILEIRAS_TIMEOUT if limit is None else limit
    root = cuda_root()
    if root is None:
        raise RuntimeError("no CUDA toolkit with tileiras: install NVIDIA's wheels (scripts/install.sh)")
    with tempfile.TemporaryDirectory() as d:
        bc, out = Path(d) / "k.bc", Path(d) / "k.cubin"
        bc.write_bytes(bytecode)
        try:
            proc = subprocess.run([str(root / "bin" / "tileiras"), "--gpu-name", "sm_90", "--opt-level", "3", "-o",
                                   str(out), str(bc)], capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            raise SlowCompile(f"tileiras ran over {limit:.0f} s") from None
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(proc.stderr.strip()[-500:] or f"tileiras exited with {proc.returncode}")
        return out.read_bytes()
