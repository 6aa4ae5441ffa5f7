"""A pytest plugin that runs TileGym's own tests with its cuTile kernels routed to Rust.

    PYTHONPATH=<tilegym>/src:tests/gpu python3 -m pytest <tilegym>/tests/ops/test_softmax.py \
        -p tilegym_plugin --rust-ext tilebridge_tilegym --routing-log routing.jsonl

Every `ct.launch` of a kernel that the extension translated runs the Rust twin
(`tb.use_rust`); the others run in cuTile Python as before. For each test, one JSON line
goes to the routing log: its outcome and how many launches of which kernels ran in Rust
and in Python, so a summary can tell a test that passed on Rust kernels from one that
never reached them. With --launch-log, every launch's specialization (each argument's
dtype, shape and strides, or its value; the kernel object's hints) goes to a second log,
which `tilebridge coverage` compiles from. Each xdist worker appends its own lines.
"""

import json
import os

import pytest

import tilebridge as tb
from tilebridge.runtime.record import launch_record


def pytest_addoption(parser):
    parser.addoption("--rust-ext", default="", help="the tilebridge extensions with the translated kernels "
                                                      "(comma-separated; none: every kernel runs in cuTile "
                                                      "Python, launches are only counted and logged)")
    parser.addoption("--routing-log", required=True, help="append one JSON line per test here")
    parser.addoption("--launch-log", default=None, help="append each distinct launch specialization here")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    config = item.config
    exts = getattr(config, "_tb_exts", None)
    if exts is None:
        exts = config._tb_exts = [tb.load(name) for name in config.getoption("--rust-ext").split(",") if name]
    log = config.getoption("--launch-log")
    with tb.use_rust(*exts) as routing:
        if log is None:
            yield
        else:
            import cuda.tile as ct

            routed = ct.launch

            def recorded(stream, grid, kernel, args):
                _record(config, log, kernel, args)
                return routed(stream, grid, kernel, args)

            ct.launch = recorded
            try:
                yield
            finally:
                ct.launch = routed
    item._tb_routing = routing


def _record(config, log, kernel, args):
    """One JSON line per distinct specialization this worker launches."""
    entry = launch_record(kernel, args)
    if entry is None:
        return
    line = json.dumps(entry, sort_keys=True)
    seen = getattr(config, "_tb_launches", None)
    if seen is None:
        seen = config._tb_launches = set()
    if line not in seen:
        seen.add(line)
        with open(log, "a") as f:
            f.write(line + "\n")


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
