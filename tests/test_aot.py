"""Cubins compiled ahead of time (`tilebridge build --aot`): which specializations a build ships, the
bundle it adds to the wheel, and the extension finding it when imported. That a launch loads a
shipped cubin instead of compiling is a GPU test (tests/gpu/test_aot.py)."""

import base64
import hashlib
import json
import subprocess
import sys
import zipfile

import pytest

from tilebridge.builder import aot, wheel as tbuild
from tilebridge.translator import translate

from conftest import REPO

EXAMPLES = REPO / "examples"

# Two launches of vector_add, as `tb.record_launches` writes them.
LAUNCHES = [{"file": "vector_add.py", "kernel": "vector_add", "hints": {},
             "args": {"a": arr, "b": arr, "c": arr, "TILE": 1024}}
            for arr in ({"dtype": d, "shape": [1 << 20], "strides": [1]} for d in ("float32", "float16"))]

CONSTANT_FREE = '''
import cuda.tile as ct

@ct.kernel
def add_one(x, y):
    t = ct.load(x, index=(ct.bid(0),), shape=(16,))
    ct.store(y, index=(ct.bid(0),), tile=t + 1)
'''


def _log(tmp_path):
    path = tmp_path / "launches.jsonl"
    path.write_text("".join(json.dumps(l) + "\n" for l in LAUNCHES))
    return path


def test_recorded_launches_are_shipped_and_kernels_with_unknown_constants_are_not(tmp_path):
    from tilebridge.translator import recorded_launches

    runtime = tbuild.RUNTIME_CRATE
    recorded = translate(str(EXAMPLES / "vector_add.py"), runtime_path=runtime,
                         launches=recorded_launches.read([_log(tmp_path)]))
    shipped = recorded.shipments["vector_add"]
    # a, b, c (each its own dtype class) and their promotion, then TILE
    assert [s.generics for s in shipped] == [["f16", "f16", "f16", "f16", "1024"], ["f32", "f32", "f32", "f32", "1024"]]
    assert shipped[0].arrays[0] == ("a", "f16", [1 << 20], [1])
    plain = translate(str(EXAMPLES / "vector_add.py"), runtime_path=runtime)
    assert plain.shipments["vector_add"] == []
    assert "ct.Constant" in plain.not_shipped["vector_add"][0]


class FakeCupyArray:
    """What the recorder reads of a CuPy array: dtype, shape, strides in bytes."""

    def __init__(self, shape, dtype):
        import numpy as np

        self.dtype, self.shape = np.dtype(dtype), tuple(shape)
        self.strides = tuple(int(np.prod(shape[i + 1:])) * self.dtype.itemsize for i in range(len(shape)))
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": self.dtype.str, "data": (0, False),
                                         "version": 3}


def test_recorded_launches_become_the_shipped_specializations(tmp_path, monkeypatch):
    import cuda.tile as ct
    import tilebridge as tb
    from tilebridge.translator import recorded_launches
    from tilebridge.translator.frontend import kernels_in

    launched = []
    monkeypatch.setattr(ct, "launch", lambda stream, grid, kernel, args: launched.append(grid))
    (kernel,) = kernels_in(str(EXAMPLES / "vector_add.py"))
    log = tmp_path / "log.jsonl"
    with tb.record_launches(log):
        for _ in range(2):  # the same specialization twice: one line
            arrays = [FakeCupyArray((4096,), "float16") for _ in range(3)]
            ct.launch(0, (4,), kernel, (*arrays, 1024))
    assert launched == [(4,), (4,)] and ct.launch is not None
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["args"]["a"] == {"dtype": "float16", "shape": [4096],
                                                                     "strides": [1]}
    crate = translate(str(EXAMPLES / "vector_add.py"), runtime_path=tbuild.RUNTIME_CRATE,
                      launches=recorded_launches.read([log]))
    assert [s.generics for s in crate.shipments["vector_add"]] == [["f16", "f16", "f16", "f16", "1024"]]


def test_a_distilled_log_translates_and_ships_nothing(tmp_path):
    """A log of specializations only (`recorded_launches.distill`: no shapes, as TileGym's recorded
    launches are kept) still gives the launchers their dtypes; nothing of it can be shipped."""
    from tilebridge.translator import recorded_launches

    runtime = tbuild.RUNTIME_CRATE
    launches = recorded_launches.read([_log(tmp_path)])
    distilled = tmp_path / "distilled.json"
    distilled.write_text(recorded_launches.distill(launches, "test"))
    crate = translate(str(EXAMPLES / "vector_add.py"), runtime_path=runtime,
                      launches=recorded_launches.read([distilled]))
    assert crate.shipments["vector_add"] == []
    assert "distilled" in crate.not_shipped["vector_add"][0]


def test_a_kernel_without_constants_ships_every_dtype_at_aligned_shapes(tmp_path):
    path = tmp_path / "add_one.py"
    path.write_text(CONSTANT_FREE)
    shipped = translate(str(path), runtime_path=tbuild.RUNTIME_CRATE).shipments["add_one"]
    # y takes x's dtype or a wider one, as cuTile Python casts the stored tile
    assert sorted(tuple(s.generics) for s in shipped) == [("bf16", "bf16"), ("bf16", "f32"), ("f16", "f16"),
                                                          ("f16", "f32"), ("f32", "f32")]
    assert all(a[2][0] % 16 == 0 and a[3] == [1] for s in shipped for a in s.arrays)


@pytest.mark.slow
def test_a_build_ships_cubins_that_the_extension_finds(tmp_path):
    log = _log(tmp_path)
    from tilebridge.translator import recorded_launches

    result = tbuild.build(str(EXAMPLES / "vector_add.py"), module="vector_add_aot", install=False, quiet=True,
                          launches=recorded_launches.read([log]), aot=["sm_90"], out_dir=tmp_path / "build")
    assert result.shipped == 2
    with zipfile.ZipFile(result.wheel) as z:
        bundle = z.read(f"vector_add_aot/{aot.BUNDLE}")
        record = z.read(next(n for n in z.namelist() if n.endswith("RECORD"))).decode()
        z.extractall(tmp_path / "site")
    digest = base64.urlsafe_b64encode(hashlib.sha256(bundle).digest()).rstrip(b"=").decode()
    assert f"vector_add_aot/{aot.BUNDLE},sha256={digest},{len(bundle)}" in record.splitlines()
    key, cubins = aot.unpack(bundle)
    assert key == result.key
    assert len(cubins) == 2
    for k, (validator, cubin) in cubins.items():
        dtype = k.split("<")[1].split(",")[0]
        # a, b and c each of its own dtype class, their promotion, TILE
        assert k.startswith(f"vector_add sm_90 <{dtype},{dtype},{dtype},{dtype},1024> a:{dtype}:16:1:1:16:1 ")
        assert cubin[:4] == b"\x7fELF"  # a cubin is an ELF image
        assert [p.get("tensor") for p in validator["params"]] == [dtype] * 3

    def shipped_on_import():
        proc = subprocess.run([sys.executable, "-c", "import vector_add_aot as m; print(m._shipped())"],
                              capture_output=True, text=True, cwd=tmp_path,
                              env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0, proc.stderr
        return eval(proc.stdout), proc.stderr

    assert shipped_on_import() == (sorted(cubins), "")
    # A bundle made for another build of the extension is not used: its kernels JIT, and import says so.
    other = aot.pack("0" * 16, [(k, json.dumps(v), c) for k, (v, c) in cubins.items()])
    (tmp_path / "site" / "vector_add_aot" / aot.BUNDLE).write_bytes(other)
    keys, stderr = shipped_on_import()
    assert keys == [] and "RuntimeWarning" in stderr and "made for build 0000000000000000" in stderr
    # The same specializations ship again for the same build: the key covers them.
    assert tbuild.build_key(translate(str(EXAMPLES / "vector_add.py"), module="vector_add_aot",
                                      runtime_path=tbuild.RUNTIME_CRATE,
                                      launches=recorded_launches.read([log])), aot=["sm_90"]) == result.key


def test_aot_takes_architectures_only(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tilebridge", "build", str(EXAMPLES / "vector_add.py"),
                           "--aot", "hopper"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode != 0 and "--aot takes GPU architectures such as sm_90" in proc.stderr


def test_a_bundle_holds_each_specialization_once():
    """Two recorded launches of other shapes may specialize alike: one cubin for both."""
    validator = json.dumps({"params": [], "launch_checks": []})
    bundle = aot.pack("0123456789abcdef", [("k2", validator, b"\x7fELF-2"), ("k1", validator, b"\x7fELF-1"),
                                           ("k2", validator, b"\x7fELF-2")])
    key, cubins = aot.unpack(bundle)
    assert key == "0123456789abcdef"
    assert {k: c for k, (_, c) in cubins.items()} == {"k1": b"\x7fELF-1", "k2": b"\x7fELF-2"}
