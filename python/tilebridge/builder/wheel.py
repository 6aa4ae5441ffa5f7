"""Build: translated crate -> abi3 wheel (maturin) -> installed, importable extension.

A build folder is keyed by a hash of everything that goes into it (the generated
sources, the runtime crate, the lock file), so an unchanged build is a no-op. The
crate is written to a temporary folder and moved into place whole; the wheel is
marked good (a stamp with its SHA-256) only after maturin succeeds, so nothing
half-built or interrupted passes as good, and a wheel changed since is built again.
Builds of one folder take a lock: a second process waits for the first and then
finds its build (and its install).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import toolchain
from ..translator import CrateFiles, translate
from . import aot as ahead_of_time
from .cubins import compile_all
from ..errors import BuildError
from ..metadata import ExtensionMetadata, build_key_of

# The runtime crate every generated crate links, and the lock file of the dependency versions it
# was tested with: inside the package, so an installed tilebridge builds as a checkout does.
RUNTIME_CRATE = Path(__file__).resolve().parents[1] / "runtime" / "crate"
LOCKFILE = RUNTIME_CRATE / "Cargo.lock"
STAMP = "BUILD_OK"
BUILD_LOG = "build.log"  # maturin's and the compiler's whole output, kept with the crate


@dataclass
class BuildResult:
    module: str
    crate_dir: Path
    wheel: Path
    key: str
    rebuilt: bool
    skipped: list[str] = field(default_factory=list)  # kernels a partial build left out, with why
    warnings: list[str] = field(default_factory=list)  # the compiler's, one line each (`compiler_warnings`)
    shipped: int = 0  # cubins compiled ahead of time into the wheel (`aot`)
    not_shipped: dict[str, list[str]] = field(default_factory=dict)  # with `aot`: per kernel, why some are not


def _runtime_sources() -> list[Path]:
    """The runtime crate's files (its lock file among them)."""
    if not (RUNTIME_CRATE / "Cargo.toml").is_file():
        raise BuildError(f"the tilebridge-runtime crate is missing at {RUNTIME_CRATE}: this tilebridge was installed "
                         "without its package data; reinstall it (pip install --force-reinstall tilebridge)")
    return sorted(p for p in RUNTIME_CRATE.rglob("*")
                  if p.is_file() and not {"target", "__pycache__"} & set(p.relative_to(RUNTIME_CRATE).parts))


def build_key(crate: CrateFiles, optimize: bool = True, aot: Sequence[str] = ()) -> str:
    """A hash of what the build is made of: the generated files and the runtime's sources, not
    where they are (the runtime's path in Cargo.toml) nor how rustfmt laid them out, so any
    checkout of one commit computes the key of an extension built from it. An unoptimized build
    (`build(optimize=False)`), and one that ships cubins (`aot`), have keys of their own."""
    h = hashlib.sha256()
    if not optimize:
        h.update(b"opt-level=0\0")
    if aot:
        h.update(ahead_of_time.key_of(crate.shipments, aot) + b"\0")
    files = crate.as_rendered()
    for name in sorted(files):
        text = files[name]
        if name == "Cargo.toml":
            text = text.replace(RUNTIME_CRATE.as_posix(), "<tilebridge-runtime>")
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    for path in _runtime_sources():
        h.update(path.relative_to(RUNTIME_CRATE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def default_build_root() -> Path:
    return Path(os.environ.get("TILEBRIDGE_BUILD_DIR", Path.home() / ".cache" / "tilebridge" / "builds"))


def write_crate(crate: CrateFiles, crate_dir: Path, key: str) -> None:
    """Writes the crate into `crate_dir` all at once (temporary folder, then rename)."""
    crate_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{crate_dir.name}.", dir=crate_dir.parent))
    try:
        for name, text in crate.files.items():
            if name == "tilebridge.json":
                text = ExtensionMetadata.from_json(text).with_build_key(key).to_json()
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        shutil.copy(LOCKFILE, tmp / "Cargo.lock")  # the dependency versions the runtime crate was tested with
        if crate_dir.exists():
            shutil.rmtree(crate_dir)
        tmp.rename(crate_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _run_streaming(cmd: list[str], env: Mapping[str, str], quiet: bool, log: Path | None = None) -> None:
    """Runs `cmd`, streaming its output to stderr (and all of it to `log`); on failure raises
    BuildError with its tail."""
    tail: deque[str] = deque(maxlen=80)
    proc = subprocess.Popen(cmd, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    with open(log or os.devnull, "w") as kept:
        try:
            for line in proc.stdout:
                tail.append(line)
                kept.write(line)
                if not quiet:
                    sys.stderr.write(line)
        except BaseException:  # Ctrl-C: the build stops here, and so does its compiler
            proc.kill()
            proc.wait()
            raise
    if proc.wait() != 0:
        raise BuildError(f"`{' '.join(cmd[:3])} ...` failed (exit {proc.returncode}):\n" + "".join(tail))


def build_crate(crate_dir: Path, *, quiet: bool = False, optimize: bool = True) -> Path:
    """Runs maturin on a written crate; returns the wheel. Without `optimize`, the crate itself
    (not its dependencies, which stay shared with optimized builds) compiles at opt-level 0."""
    env = toolchain.build_env()
    wheels = crate_dir / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    cmd = [sys.executable, "-m", "maturin", "build", "--release", "--compatibility", "linux",
           "--manifest-path", str(crate_dir / "Cargo.toml"), "--out", str(wheels)]
    if not optimize:
        cmd += ["--config", f"profile.release.package.{_package_name(crate_dir)}.opt-level=0"]
    _run_streaming(cmd, env, quiet, log=crate_dir / BUILD_LOG)
    found = sorted(wheels.glob("*.whl"))
    if len(found) != 1:
        raise BuildError(f"maturin reported success but left {len(found)} wheels in {wheels}")
    return found[0]


def compiler_warnings(crate_dir: Path) -> list[str]:
    """The warnings of the crate's last build (from its build log; cargo repeats a crate's
    warnings when it finds the crate already compiled), the first line of each."""
    log = crate_dir / BUILD_LOG
    if not log.is_file():
        return []
    return [line.rstrip() for line in log.read_text().splitlines()
            if line.startswith("warning:") and not _WARNING_COUNT.match(line)]


_WARNING_COUNT = re.compile(r"warning: `[^`]+` \([^)]*\) generated \d+ warnings?")


def _package_name(crate_dir: Path) -> str:
    """The package name in a written crate's Cargo.toml."""
    found = re.search(r'^name = "([^"]+)"', (crate_dir / "Cargo.toml").read_text(), re.M)
    if found is None:
        raise BuildError(f"no package name in {crate_dir / 'Cargo.toml'}")
    return found.group(1)


def import_unpacked(wheel: Path, module: str) -> Any:
    """Imports the extension in `wheel` without installing it: its shared library is unpacked
    beside the wheel and loaded as `module` (for checks on the CPU: `tilebridge coverage` builds
    dozens of extensions it never launches). A wheel already imported so in this process gives
    the module it gave then (an extension module is initialized once per process)."""
    loaded = _UNPACKED.get(str(wheel))
    if loaded is not None:
        return loaded
    with zipfile.ZipFile(wheel) as archive:
        libraries = [n for n in archive.namelist() if n.startswith(f"{module}/") and n.endswith(".so")]
        if len(libraries) != 1:
            raise BuildError(f"{wheel.name} holds {len(libraries)} shared libraries of {module}, not one")
        library = wheel.parent.parent / "unpacked" / Path(libraries[0]).name
        library.parent.mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=library.parent, prefix=".unpacking.", delete=False) as partial:
            partial.write(archive.read(libraries[0]))
        os.replace(partial.name, library)  # a new file: a library another process has loaded stays intact
    spec = importlib.util.spec_from_file_location(module, library)
    assert spec is not None and spec.loader is not None
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    _UNPACKED[str(wheel)] = ext
    return ext


_UNPACKED: dict[str, Any] = {}


def install_wheel(wheel: Path, *, quiet: bool = False) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", "--quiet", str(wheel)]
    _run_streaming(cmd, os.environ, quiet)
    importlib.invalidate_caches()


def build(
    target: Any,
    *,
    out_dir: str | Path | None = None,
    module: str | None = None,
    dtypes: Mapping[str, Sequence[Any]] | None = None,
    install: bool = True,
    quiet: bool = False,
    partial: bool = False,
    lift_gathers: bool = False,
    launches: Sequence[Any] = (),
    cubins: bool = False,
    crate: CrateFiles | None = None,
    optimize: bool = True,
    aot: Sequence[str] = (),
) -> BuildResult:
    """Translates `target`, builds the wheel (unless an identical build exists) and installs it.
    With `partial`, kernels that cannot be translated are left out (`BuildResult.skipped`); with
    `launches` (recorded: `translator.recorded_launches.read`), launchers are built for the dtypes they used;
    with `cubins`, every specialization checked against cuTile Python is compiled to an sm_90 cubin
    before the wheel counts as built (`cubins.compile_all`). `crate`: `target` already translated
    with these options (`expected_key`'s). Without `optimize`, the crate compiles at opt-level 0
    (faster, for extensions that are checked, not launched). With `aot` (GPU architectures:
    `["sm_90"]`), the specializations worth shipping (`specializations.shipments`: those of
    `launches`, else those of kernels without constants) are compiled on this machine and shipped
    in the wheel (`builder.aot`): their first launch loads them, with no JIT."""
    if crate is None:
        crate = translate(target, module=module, dtypes=dtypes, runtime_path=RUNTIME_CRATE, partial=partial,
                          lift_gathers=lift_gathers, launches=launches)
    key = build_key(crate, optimize, aot)
    crate_dir = Path(out_dir) if out_dir is not None else default_build_root() / f"{crate.module}-{key}"
    with _locked(crate_dir):
        wheel = built_wheel(crate_dir, key)
        fresh = wheel is not None
        if wheel is None:
            if not quiet:
                print(f"tilebridge: building {crate.module} in {crate_dir}", file=sys.stderr)
            write_crate(crate, crate_dir, key)
            wheel = build_crate(crate_dir, quiet=quiet, optimize=optimize)
            if cubins:
                compile_all(wheel, crate.module, crate.specializations, quiet=quiet)
            if aot:
                ahead_of_time.ship(wheel, crate.module, crate.shipments, aot, key, quiet=quiet)
            _stamp(crate_dir, wheel)
        elif cubins:
            compile_all(wheel, crate.module, crate.specializations, quiet=quiet)
        if install and installed_key(crate.module) != key:  # one pip at a time, too
            install_wheel(wheel, quiet=quiet)
    shipped = ahead_of_time.shipped_in(wheel, crate.module) if aot else 0
    return BuildResult(crate.module, crate_dir, wheel, key, rebuilt=not fresh, skipped=crate.skipped,
                       warnings=compiler_warnings(crate_dir), shipped=shipped,
                       not_shipped=crate.not_shipped if aot else {})


@contextlib.contextmanager
def _locked(crate_dir: Path):
    """Holds the build lock of `crate_dir` (a file beside it): one build of a folder at a time,
    across processes; the lock goes with the process, however it ends."""
    crate_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(crate_dir.parent / f".{crate_dir.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stamp(crate_dir: Path, wheel: Path) -> None:
    """Marks the build good: the wheel and its hash, written whole (temporary file, then rename)."""
    tmp = crate_dir / f".{STAMP}.tmp"
    tmp.write_text(f"{wheel}\n{_sha256(wheel)}\n")
    tmp.replace(crate_dir / STAMP)


def built_wheel(crate_dir: Path, key: str) -> Path | None:
    """The wheel a finished build of `key` left in `crate_dir`; None where there is none, or where
    anything of it is missing or has changed since (then it is built again)."""
    try:
        if build_key_of((crate_dir / "tilebridge.json").read_text()) != key:
            return None
        wheel, digest, *_ = (crate_dir / STAMP).read_text().split("\n")
        return Path(wheel) if _sha256(Path(wheel)) == digest else None
    except (OSError, ValueError):  # missing, unreadable or cut short
        return None


_KEY = re.compile(rb'"build_key": "([0-9a-f]{16})"')


def installed_key(module: str) -> str | None:
    """The build key of the installed extension `module`, read from its binary without
    importing it (an imported extension cannot be replaced in the same process)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    binaries = [origin] if origin.suffix == ".so" else sorted(origin.parent.glob(f"{module}*.so"))
    for binary in binaries:
        m = _KEY.search(binary.read_bytes())
        if m:
            return m.group(1).decode()
    return None


def expected_key(target: Any, *, module: str | None = None, dtypes: Mapping[str, Sequence[Any]] | None = None,
                 launches: Sequence[Any] = (), aot: Sequence[str] = ()) -> tuple[CrateFiles, str | None]:
    """The crate building `target` would write, and its build key; needs no compiler. `build`
    takes the crate back (`crate=`) rather than translate again.

    The key is None where tilebridge's runtime crate is missing (an install stripped of its
    package data): such an install can use prebuilt extensions but cannot build new ones.
    """
    crate = translate(target, module=module, dtypes=dtypes, runtime_path=RUNTIME_CRATE, launches=launches)
    return crate, build_key(crate, aot=aot) if (RUNTIME_CRATE / "Cargo.toml").is_file() else None
