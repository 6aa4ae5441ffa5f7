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


def kernel_cache_dir() -> Path | None:
    """Where launches keep compiled cubins across processes (the runtime crate's `cache`):
    TILEBRIDGE_CACHE_DIR, None where it is `off`, else cutile's per-user folder."""
    chosen = os.environ.get("TILEBRIDGE_CACHE_DIR")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cutile" / "kernels"


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
    part: str = "build"  # what needs it: "translate", "build" or "launch"


def doctor() -> list[Check]:
    """Everything translating, building and launching need, each checked, with what to do where
    it is missing. A machine that only builds (CI) needs no GPU; one that only launches needs no
    Rust."""
    checks: list[Check] = []
    try:
        import cuda.tile  # noqa: F401

        checks.append(Check("cuda-tile (cuTile Python: the input language and the oracle)", True,
                            importlib.metadata.version("cuda-tile"), "translate"))
    except ImportError:
        checks.append(Check("cuda-tile (cuTile Python: the input language and the oracle)", False,
                            "missing: pip install cuda-tile", "translate"))
    root = cuda_root()
    version = cuda_header_version(root) if root else None
    checks.append(Check("CUDA headers (cuda.h >= 13.2)", bool(version and version >= 13020),
                        f"{root} (CUDA_VERSION {version})" if root else "not found: pip install nvidia-cuda-runtime"))
    for rel, what, part in (("include/crt/host_config.h", "nvidia-cuda-crt", "build"),
                            ("include/curand.h", "nvidia-curand", "build"),
                            ("bin/tileiras", "nvidia-cuda-tileiras", "launch"), ("bin/ptxas", "nvidia-cuda-nvcc", "launch"),
                            ("lib/libnvvm.so.4", "nvidia-nvvm", "launch")):
        ok = bool(root and (root / rel).exists())
        checks.append(Check(rel, ok, str(root / rel) if ok else f"missing: pip install {what}", part))
    clang = any(Path(p).exists() for p in ("/usr/lib/llvm-14/lib/libclang.so", "/usr/lib/x86_64-linux-gnu/libclang-14.so.1"))
    clang = clang or bool(list(Path("/usr/lib").glob("llvm-*/lib/libclang*.so*")))
    checks.append(Check("libclang (cutile's bindgen)", clang, "found" if clang else "missing: apt-get install libclang-dev"))
    for tool in ("cargo", "rustfmt"):
        exe = shutil.which(tool)
        checks.append(Check(tool, exe is not None, exe or f"missing: install Rust (rustup) with {tool}"))
    releases = {tool: _release(root / "bin" / tool) if root else None for tool in ("tileiras", "ptxas")}
    checks.append(Check("tileiras and ptxas of one release (13.3+)",
                        releases["tileiras"] is not None and releases["tileiras"] == releases["ptxas"]
                        and releases["tileiras"] >= (13, 3),
                        ", ".join(f"{t} {'.'.join(map(str, r)) if r else 'not found'}" for t, r in releases.items()),
                        "launch"))
    checks += _gpu_checks(root)
    return checks


def _release(tool: Path) -> tuple[int, int] | None:
    """`release 13.4` of a CUDA tool's --version, as (13, 4)."""
    try:
        out = subprocess.run([str(tool), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _gpu_checks(root: Path | None) -> list[Check]:
    """The driver, each GPU and its architecture, and whether this tileiras compiles for it."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return [Check("CUDA driver (libcuda.so.1)", False, "not found: launches raise DeviceError", "launch")]
    version, count = ctypes.c_int(), ctypes.c_int()
    if cuda.cuInit(0) != 0 or cuda.cuDriverGetVersion(ctypes.byref(version)) != 0 \
            or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return [Check("CUDA driver (libcuda.so.1)", False, "loads, but finds no usable GPU", "launch")]
    driver = f"CUDA {version.value // 1000}.{version.value % 1000 // 10}"
    try:  # the kernel module's release, as nvidia-smi reports it
        m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", Path("/proc/driver/nvidia/version").read_text())
        driver = f"driver {m.group(1)}, {driver}" if m else driver
    except OSError:
        pass
    checks = [Check("CUDA driver (CUDA 13.0 or newer)", version.value >= 13000, f"{driver}, {count.value} GPU(s)",
                    "launch")]
    archs = set()
    if root and (root / "bin" / "tileiras").exists():
        help_text = subprocess.run([str(root / "bin" / "tileiras"), "--help"], capture_output=True, text=True).stdout
        archs = set(re.findall(r"=(sm_\d+)\b", help_text))
    for device in range(count.value):
        name, major, minor = ctypes.create_string_buffer(256), ctypes.c_int(), ctypes.c_int()
        cuda.cuDeviceGetName(name, 256, device)
        cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device)  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)
        arch = f"sm_{major.value}{minor.value}"
        checks.append(Check(f"GPU {device}: tileiras compiles for its architecture", arch in archs,
                            f"{name.value.decode()}, {arch}" + ("" if arch in archs else
                                                                f"; this tileiras knows {', '.join(sorted(archs)) or 'none'}"),
                            "launch"))
    return checks


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
