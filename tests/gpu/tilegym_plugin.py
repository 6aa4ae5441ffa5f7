"""A pytest plugin that runs TileGym's own tests with its cuTile kernels routed to Rust.

    PYTHONPATH=<tilegym>/src:tests/gpu python3 -m pytest <tilegym>/tests/ops/test_softmax.py \
        -p tilegym_plugin --rust-ext tilebridge_tilegym --routing-log routing.jsonl

Every `ct.launch` of a kernel that the extension translated runs the Rust twin
(`tb.use_rust`); the others run in cuTile Python as before. For each test, one JSON line
goes to the routing log: its outcome and how many launches of which kernels ran in Rust
and in Python, so a summary can tell a test that passed on Rust kernels from one that
never reached them. Each xdist worker appends its own lines.
"""

import json
import os

import pytest

import tilebridge as tb


def pytest_addoption(parser):
    parser.addoption("--rust-ext", required=True, help="the tilebridge extension with the translated kernels")
    parser.addoption("--routing-log", required=True, help="append one JSON line per test here")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    config = item.config
    ext = getattr(config, "_tb_ext", None)
    if ext is None:
        ext = config._tb_ext = tb.load(config.getoption("--rust-ext"))
    with tb.use_rust(ext) as routing:
        yield
    item._tb_routing = routing


def pytest_runtest_makereport(item, call):
    if call.when != "call":
        return
    routing = getattr(item, "_tb_routing", None)
    with open(item.config.getoption("--routing-log"), "a") as log:
        log.write(json.dumps({
            "test": item.nodeid,
            "outcome": "failed" if call.excinfo is not None and not call.excinfo.errisinstance(
                pytest.skip.Exception) else ("skipped" if call.excinfo is not None else "passed"),
            "error": call.excinfo.exconly()[:300] if call.excinfo is not None else "",
            "rust": {f"{f}:{k}": n for (f, k), n in routing.rust.items()} if routing else {},
            "python": {f"{f}:{k}": n for (f, k), n in routing.python.items()} if routing else {},
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        }) + "\n")
