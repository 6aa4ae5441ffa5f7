"""The extension's metadata (`tilebridge.json`, the extension's `__tilebridge__`): the exact text the
typed form writes, and that what the translation writes reads back to the same text."""

import pytest

from tilebridge.metadata import ExtensionMetadata, KernelMetadata, ParamMetadata, build_key_of

EXPECTED = """{
  "kernels": {
    "k": {
      "checked": "agrees with cuTile Python 1.7.0 at 2 specializations (9 typed values)",
      "dtypes": {
        "E0": [
          "f32",
          "f16"
        ]
      },
      "file": "k.py",
      "in_place": [
        [
          "x",
          "y"
        ]
      ],
      "line": 4,
      "params": [
        {
          "dtype_class": "E0",
          "kind": "array",
          "name": "x",
          "rank": 1,
          "tile": null,
          "written": false
        },
        {
          "dtype_class": "E0",
          "kind": "array",
          "name": "y",
          "rank": 2,
          "tile": [
            "TM",
            64
          ],
          "written": true
        },
        {
          "dtype": "i32",
          "kind": "scalar",
          "name": "n"
        },
        {
          "dtype": "f32",
          "kind": "constant",
          "name": "scale"
        },
        {
          "kind": "unused",
          "name": "spare"
        },
        {
          "dtype": "i32",
          "kind": "constant",
          "name": "TM"
        }
      ],
      "safe": false,
      "unsafe_reasons": [
        "why"
      ]
    }
  },
  "module": "k_rs",
  "source": "k.py"
}
"""

META = ExtensionMetadata("k_rs", "k.py", {"k": KernelMetadata("k.py", 4, (
    ParamMetadata("x", "array", rank=1, written=False, dtype_class="E0"),
    ParamMetadata("y", "array", rank=2, written=True, tile=("TM", 64), dtype_class="E0"),
    ParamMetadata("n", "scalar", dtype="i32"),
    ParamMetadata("scale", "constant", dtype="f32"),
    ParamMetadata("spare", "unused"),
    ParamMetadata("TM", "constant", dtype="i32")), {"E0": ["f32", "f16"]}, False, ["why"], [("x", "y")],
    "agrees with cuTile Python 1.7.0 at 2 specializations (9 typed values)")})


def test_the_text_is_sorted_json_indented_by_two():
    assert META.to_json() == EXPECTED
    assert ExtensionMetadata.from_json(EXPECTED) == META


def test_the_build_key_is_one_more_key():
    built = META.with_build_key("0123456789abcdef").to_json()
    assert '  "build_key": "0123456789abcdef",\n' in built  # as `installed_key` finds it in the binary
    assert ExtensionMetadata.from_json(built).build_key == "0123456789abcdef"
    assert build_key_of(built) == "0123456789abcdef" and build_key_of(EXPECTED) is None


def test_what_readers_ask():
    k = META.kernels["k"]
    assert [p.name for p in k.positional] == ["x", "y", "n", "spare"]
    assert [p.name for p in k.params if p.is_array and p.written] == ["y"]
    with pytest.raises(ValueError, match="unknown kind"):
        ParamMetadata("z", "tensor")


def test_translations_read_back_to_the_same_text():
    pytest.importorskip("cuda.tile")
    import tilebridge as tb
    from tilebridge.builder.wheel import RUNTIME_CRATE

    from conftest import EXAMPLES, REPO

    for target in [*EXAMPLES, REPO / "tests" / "fixtures" / "checked_ops.py"]:
        text = tb.translate(target, runtime_path=RUNTIME_CRATE).files["tilebridge.json"]
        assert ExtensionMetadata.from_json(text).to_json() == text, target
