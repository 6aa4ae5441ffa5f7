//! PyO3 launchers for the kernels in `tile_kernels.rs`, translated by tilebridge from vector_add.py.
//! Generated code: edit the Python kernels and rebuild instead.
#![allow(non_snake_case)]

mod tile_kernels;

use tile_kernels::kernels;

use tilebridge_runtime::launch::{check_tile_dim, elem_in, elem_of, guard};
use tilebridge_runtime::prelude::*;

/// `vector_add` (vector_add.py:7) for arrays of f32, f16, bf16: called by `vector_add`'s launcher.
#[allow(clippy::too_many_arguments)]
fn vector_add_as_translated<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: &Bound<'py, PyAny>,
    TILE: i32,
    stream: Option<Bound<'py, PyAny>>,
    sync: bool,
    hints: Option<tilebridge_runtime::launch::Hints>,
    after: Option<Bound<'py, PyAny>>,
) -> PyResult<Option<Completion>> {
    guard("vector_add", || {
        let mut launch = Launch::new(py, "vector_add", grid, stream, sync)?;
        launch.set_hints(hints)?;
        launch.set_after(after);
        launch.also_takes("with 'a', 'b', 'c' of f64, or of i32, i64, u32, u64");
        launch.allow_in_place(&[("a", "c"), ("b", "c")]);
        let a = launch.input(a, "a", 1)?;
        let b = launch.input(b, "b", 1)?;
        let c = launch.output(c, "c", 1)?;
        let e0 = launch.same_elem(&[&a], &[ElemType::F32, ElemType::F16, ElemType::BF16])?;
        let e1 = launch.same_elem(&[&b], &[ElemType::F32, ElemType::F16, ElemType::BF16])?;
        let e2 = launch.same_elem(&[&c], &[ElemType::F32, ElemType::F16, ElemType::BF16])?;
        // `PT`: cuTile Python's promotion of the dtypes of a, b, stored into c
        let pt = match (e0, e1, e2) {
            (ElemType::F32, ElemType::F32, ElemType::F32)
            | (ElemType::F32, ElemType::F16, ElemType::F32)
            | (ElemType::F32, ElemType::BF16, ElemType::F32)
            | (ElemType::F16, ElemType::F32, ElemType::F32)
            | (ElemType::BF16, ElemType::F32, ElemType::F32) => ElemType::F32,
            (ElemType::F16, ElemType::F16, ElemType::F32)
            | (ElemType::F16, ElemType::F16, ElemType::F16) => ElemType::F16,
            (ElemType::BF16, ElemType::BF16, ElemType::F32)
            | (ElemType::BF16, ElemType::BF16, ElemType::BF16) => ElemType::BF16,
            _ => return Err(launch.refused_promotion(&[&a, &b, &c])),
        };
        check_tile_dim("vector_add", "TILE", TILE)?;
        static KERNEL: Kernel = Kernel::new(
            "kernels",
            "vector_add",
            "vector_add_entry",
            kernels::__module_ast_self,
            kernels::_SOURCE_HASH,
        );
        launch.submit(
            &KERNEL,
            &[
                Generic::Dtype(e0),
                Generic::Dtype(e1),
                Generic::Dtype(e2),
                Generic::Dtype(pt),
                Generic::Int(TILE as i64),
            ],
            &[
                Arg::Input("a", &a),
                Arg::Input("b", &b),
                Arg::Output("c", &c, vec![TILE]),
            ],
        )
    })
}

/// `vector_add` (vector_add.py:7) for arrays of f64: called by `vector_add`'s launcher.
#[allow(clippy::too_many_arguments)]
fn vector_add_f64<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: &Bound<'py, PyAny>,
    TILE: i32,
    stream: Option<Bound<'py, PyAny>>,
    sync: bool,
    hints: Option<tilebridge_runtime::launch::Hints>,
    after: Option<Bound<'py, PyAny>>,
) -> PyResult<Option<Completion>> {
    guard("vector_add", || {
        let mut launch = Launch::new(py, "vector_add", grid, stream, sync)?;
        launch.set_hints(hints)?;
        launch.set_after(after);
        launch.allow_in_place(&[("a", "c"), ("b", "c")]);
        let a = launch.input(a, "a", 1)?;
        let b = launch.input(b, "b", 1)?;
        let c = launch.output(c, "c", 1)?;
        let e0 = launch.same_elem(&[&a], &[ElemType::F64])?;
        let e1 = launch.same_elem(&[&b], &[ElemType::F64])?;
        let e2 = launch.same_elem(&[&c], &[ElemType::F64])?;
        // `PT`: cuTile Python's promotion of the dtypes of a, b, stored into c
        let pt = match (e0, e1, e2) {
            (ElemType::F64, ElemType::F64, ElemType::F64) => ElemType::F64,
            _ => return Err(launch.refused_promotion(&[&a, &b, &c])),
        };
        check_tile_dim("vector_add", "TILE", TILE)?;
        static KERNEL: Kernel = Kernel::new(
            "kernels",
            "vector_add_f64",
            "vector_add_f64_entry",
            kernels::__module_ast_self,
            kernels::_SOURCE_HASH,
        );
        launch.submit(
            &KERNEL,
            &[
                Generic::Dtype(e0),
                Generic::Dtype(e1),
                Generic::Dtype(e2),
                Generic::Dtype(pt),
                Generic::Int(TILE as i64),
            ],
            &[
                Arg::Input("a", &a),
                Arg::Input("b", &b),
                Arg::Output("c", &c, vec![TILE]),
            ],
        )
    })
}

/// `vector_add` (vector_add.py:7) for arrays of i32, i64, u32, u64: called by `vector_add`'s launcher.
#[allow(clippy::too_many_arguments)]
fn vector_add_integers<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: &Bound<'py, PyAny>,
    TILE: i32,
    stream: Option<Bound<'py, PyAny>>,
    sync: bool,
    hints: Option<tilebridge_runtime::launch::Hints>,
    after: Option<Bound<'py, PyAny>>,
) -> PyResult<Option<Completion>> {
    guard("vector_add", || {
        let mut launch = Launch::new(py, "vector_add", grid, stream, sync)?;
        launch.set_hints(hints)?;
        launch.set_after(after);
        launch.allow_in_place(&[("a", "c"), ("b", "c")]);
        let a = launch.input(a, "a", 1)?;
        let b = launch.input(b, "b", 1)?;
        let c = launch.output(c, "c", 1)?;
        let e0 = launch.same_elem(
            &[&a, &b, &c],
            &[ElemType::I32, ElemType::I64, ElemType::U32, ElemType::U64],
        )?;
        check_tile_dim("vector_add", "TILE", TILE)?;
        static KERNEL: Kernel = Kernel::new(
            "kernels",
            "vector_add_integers",
            "vector_add_integers_entry",
            kernels::__module_ast_self,
            kernels::_SOURCE_HASH,
        );
        launch.submit(
            &KERNEL,
            &[Generic::Dtype(e0), Generic::Int(TILE as i64)],
            &[
                Arg::Input("a", &a),
                Arg::Input("b", &b),
                Arg::Output("c", &c, vec![TILE]),
            ],
        )
    })
}

/// Launches `vector_add` (vector_add.py:7) on the caller's stream; its arrays of f32, f16, bf16, or of f64, or of i32, i64, u32, u64.
#[pyfunction]
#[pyo3(signature = (grid, a, b, c, *, TILE, stream = None, sync = true, hints = None, after = None))]
#[allow(clippy::too_many_arguments)]
fn vector_add<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    c: &Bound<'py, PyAny>,
    TILE: i32,
    stream: Option<Bound<'py, PyAny>>,
    sync: bool,
    hints: Option<tilebridge_runtime::launch::Hints>,
    after: Option<Bound<'py, PyAny>>,
) -> PyResult<Option<Completion>> {
    let elem = elem_of(a);
    if !matches!(elem, Some(ElemType::F32 | ElemType::F16 | ElemType::BF16)) {
        if matches!(elem, Some(ElemType::F64))
            && elem_in(b, &[ElemType::F64])
            && elem_in(c, &[ElemType::F64])
        {
            return vector_add_f64(py, grid, a, b, c, TILE, stream, sync, hints, after);
        }
        if matches!(
            elem,
            Some(ElemType::I32 | ElemType::I64 | ElemType::U32 | ElemType::U64)
        ) && elem_in(
            b,
            &[ElemType::I32, ElemType::I64, ElemType::U32, ElemType::U64],
        ) && elem_in(
            c,
            &[ElemType::I32, ElemType::I64, ElemType::U32, ElemType::U64],
        ) {
            return vector_add_integers(py, grid, a, b, c, TILE, stream, sync, hints, after);
        }
    }
    vector_add_as_translated(py, grid, a, b, c, TILE, stream, sync, hints, after)
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
        &["vector_add", "vector_add_f64", "vector_add_integers"],
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
fn vector_add_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(vector_add, m)?)?;
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
