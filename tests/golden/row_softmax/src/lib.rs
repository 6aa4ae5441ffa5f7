//! PyO3 launchers for the kernels in `tile_kernels.rs`, translated by tilebridge from row_softmax.py.
//! Generated code: edit the Python kernels and rebuild instead.
#![allow(non_snake_case)]

mod tile_kernels;

use tile_kernels::kernels;

use tilebridge_runtime::launch::{check_tile_dim, elem_of, guard};
use tilebridge_runtime::prelude::*;

/// `row_softmax` (row_softmax.py:7) for arrays of f32, f16, bf16: called by `row_softmax`'s launcher.
#[allow(clippy::too_many_arguments)]
fn row_softmax_as_translated<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    TILE_N: i32,
    stream: Option<Bound<'py, PyAny>>,
    sync: bool,
    hints: Option<tilebridge_runtime::launch::Hints>,
    after: Option<Bound<'py, PyAny>>,
) -> PyResult<Option<Completion>> {
    guard("row_softmax", || {
        let mut launch = Launch::new(py, "row_softmax", grid, stream, sync)?;
        launch.set_hints(hints)?;
        launch.set_after(after);
        launch.also_takes("with 'x' of f64");
        launch.allow_in_place(&[("x", "y")]);
        let x = launch.input(x, "x", 2)?;
        let y = launch.output(y, "y", 2)?;
        let e0 = launch.same_elem(&[&x], &[ElemType::F32, ElemType::F16, ElemType::BF16])?;
        let e1 = launch.same_elem(&[&y], &ANY_DTYPE_BUT_BOOL)?;
        check_tile_dim("row_softmax", "TILE_N", TILE_N)?;
        static KERNEL: Kernel = Kernel::new(
            "kernels",
            "row_softmax",
            "row_softmax_entry",
            kernels::__module_ast_self,
            kernels::_SOURCE_HASH,
        );
        launch.submit(
            &KERNEL,
            &[
                Generic::Dtype(e0),
                Generic::Dtype(e1),
                Generic::Int(TILE_N as i64),
            ],
            &[Arg::Input("x", &x), Arg::Output("y", &y, vec![1, TILE_N])],
        )
    })
}

/// `row_softmax` (row_softmax.py:7) for arrays of f64: called by `row_softmax`'s launcher.
#[allow(clippy::too_many_arguments)]
fn row_softmax_f64<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    TILE_N: i32,
    stream: Option<Bound<'py, PyAny>>,
    sync: bool,
    hints: Option<tilebridge_runtime::launch::Hints>,
    after: Option<Bound<'py, PyAny>>,
) -> PyResult<Option<Completion>> {
    guard("row_softmax", || {
        let mut launch = Launch::new(py, "row_softmax", grid, stream, sync)?;
        launch.set_hints(hints)?;
        launch.set_after(after);
        launch.allow_in_place(&[("x", "y")]);
        let x = launch.input(x, "x", 2)?;
        let y = launch.output(y, "y", 2)?;
        let e0 = launch.same_elem(&[&x], &[ElemType::F64])?;
        let e1 = launch.same_elem(&[&y], &ANY_DTYPE_BUT_BOOL)?;
        check_tile_dim("row_softmax", "TILE_N", TILE_N)?;
        static KERNEL: Kernel = Kernel::new(
            "kernels",
            "row_softmax_f64",
            "row_softmax_f64_entry",
            kernels::__module_ast_self,
            kernels::_SOURCE_HASH,
        );
        launch.submit(
            &KERNEL,
            &[
                Generic::Dtype(e0),
                Generic::Dtype(e1),
                Generic::Int(TILE_N as i64),
            ],
            &[Arg::Input("x", &x), Arg::Output("y", &y, vec![1, TILE_N])],
        )
    })
}

/// Launches `row_softmax` (row_softmax.py:7) on the caller's stream; its arrays of f32, f16, bf16, or of f64.
#[pyfunction]
#[pyo3(signature = (grid, x, y, *, TILE_N, stream = None, sync = true, hints = None, after = None))]
#[allow(clippy::too_many_arguments)]
fn row_softmax<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    TILE_N: i32,
    stream: Option<Bound<'py, PyAny>>,
    sync: bool,
    hints: Option<tilebridge_runtime::launch::Hints>,
    after: Option<Bound<'py, PyAny>>,
) -> PyResult<Option<Completion>> {
    let elem = elem_of(x);
    if !matches!(elem, Some(ElemType::F32 | ElemType::F16 | ElemType::BF16)) {
        if matches!(elem, Some(ElemType::F64)) {
            return row_softmax_f64(py, grid, x, y, TILE_N, stream, sync, hints, after);
        }
    }
    row_softmax_as_translated(py, grid, x, y, TILE_N, stream, sync, hints, after)
}

/// Compiles one kernel specialization to Tile IR without a GPU: `(ir_text, bytecode)`.
/// `hints=(occupancy, num_ctas, num_worker_warps)` as a launch takes them. `arrays` gives
/// `(parameter, shape, strides, base address, bytes per element)` of array arguments, whose
/// divisibility a launch specializes on: without them the kernel is compiled as for arrays
/// divisible by nothing.
#[pyfunction]
#[pyo3(signature = (kernel, generics, strides, target = "sm_90", hints = None, arrays = None))]
#[allow(clippy::too_many_arguments)]
fn _compile_only<'py>(
    py: Python<'py>,
    kernel: &str,
    generics: Vec<String>,
    strides: Vec<(String, Vec<i32>)>,
    target: &str,
    hints: Option<tilebridge_runtime::launch::Hints>,
    arrays: Option<Vec<tilebridge_runtime::compile::ArraySpec>>,
) -> PyResult<(String, Bound<'py, pyo3::types::PyBytes>)> {
    tilebridge_runtime::compile::compile_only(
        py,
        kernels::__module_ast_self,
        "kernels",
        &["row_softmax", "row_softmax_f64"],
        kernel,
        generics,
        strides,
        target,
        hints,
        arrays.unwrap_or_default(),
        &[],
    )
}

/// Compiles one kernel specialization to a cubin for `arch` without a GPU, as a launch on such
/// a GPU would compile it: `(key, validator, cubin)`, for the extension's shipped cubins
/// (`tilebridge build --aot`). `arrays` gives `(parameter, dtype, shape, strides, base address,
/// bytes per element)` of every array argument.
#[pyfunction]
#[pyo3(signature = (kernel, generics, strides, arch, hints, arrays))]
fn _aot_compile<'py>(
    py: Python<'py>,
    kernel: &str,
    generics: Vec<String>,
    strides: Vec<(String, Vec<i32>)>,
    arch: &str,
    hints: Option<tilebridge_runtime::launch::Hints>,
    arrays: Vec<tilebridge_runtime::aot::AotArray>,
) -> PyResult<(String, String, Bound<'py, pyo3::types::PyBytes>)> {
    tilebridge_runtime::aot::compile_cubin(
        py,
        kernels::__module_ast_self,
        "kernels",
        kernel,
        generics,
        strides,
        arch,
        hints,
        arrays,
        &[],
    )
}

/// The keys of the specializations shipped compiled with this extension (`kernels.cubins`).
#[pyfunction]
fn _shipped() -> Vec<String> {
    tilebridge_runtime::aot::keys()
}

/// Host time per launch phase (`TILEBRIDGE_PROFILE=1`): `(launches, {phase: total_ns})`.
#[pyfunction]
fn _profile() -> (u64, Vec<(&'static str, u64)>) {
    tilebridge_runtime::profile::totals()
}

/// `(kernels compiled, kernels launched, shipped cubins loaded)` in this process.
#[pyfunction]
fn _launch_counts() -> (u64, u64, u64) {
    tilebridge_runtime::kernel::counts()
}

#[pymodule]
fn row_softmax_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(row_softmax, m)?)?;
    m.add_function(wrap_pyfunction!(_compile_only, m)?)?;
    m.add_function(wrap_pyfunction!(_profile, m)?)?;
    m.add_function(wrap_pyfunction!(_launch_counts, m)?)?;
    m.add_function(wrap_pyfunction!(_aot_compile, m)?)?;
    m.add_function(wrap_pyfunction!(_shipped, m)?)?;
    let metadata = include_str!("../tilebridge.json");
    m.add("__tilebridge__", metadata)?;
    tilebridge_runtime::aot::load_beside(m, metadata)?;
    Ok(())
}
