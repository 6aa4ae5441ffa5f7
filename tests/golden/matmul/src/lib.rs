//! PyO3 launchers for the kernels in `tile_kernels.rs`, translated by tilebridge from matmul.py.
//! Generated code: edit the Python kernels and rebuild instead.
#![allow(non_snake_case)]

mod tile_kernels;

use tile_kernels::kernels;

use tilebridge_runtime::launch::{check_tile_dim, guard};
use tilebridge_runtime::prelude::*;

/// Launches `matmul` (matmul.py:7) on the caller's stream.
#[pyfunction]
#[pyo3(signature = (grid, A, B, C, *, TM, TN, TK, stream = None, sync = true, hints = None))]
#[allow(clippy::too_many_arguments)]
fn matmul<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    A: &Bound<'py, PyAny>,
    B: &Bound<'py, PyAny>,
    C: &Bound<'py, PyAny>,
    TM: i32,
    TN: i32,
    TK: i32,
    stream: Option<Bound<'py, PyAny>>,
    sync: bool,
    hints: Option<tilebridge_runtime::launch::Hints>,
) -> PyResult<()> {
    guard("matmul", || {
        let mut launch = Launch::new(py, "matmul", grid, stream, sync)?;
        launch.set_hints(hints)?;
        let A = launch.input(A, "A", 2)?;
        let B = launch.input(B, "B", 2)?;
        let C = launch.output(C, "C", 2)?;
        let e0 = launch.same_elem(&[&A, &B], &[ElemType::F32, ElemType::F16, ElemType::BF16])?;
        let e1 = launch.same_elem(&[&C], &[ElemType::F32, ElemType::F16, ElemType::BF16])?;
        check_tile_dim("matmul", "TM", TM)?;
        check_tile_dim("matmul", "TN", TN)?;
        check_tile_dim("matmul", "TK", TK)?;
        launch.check_tile_grid(&C, &[TM, TN])?;
        if launch.direct()? {
            static KERNEL: DirectKernel = DirectKernel::new(
                "kernels",
                "matmul",
                "matmul_entry",
                kernels::__module_ast_self,
                kernels::_SOURCE_HASH,
            );
            return launch.submit_direct(
                &KERNEL,
                &[
                    Generic::Dtype(e0),
                    Generic::Dtype(e1),
                    Generic::Int(TM as i64),
                    Generic::Int(TN as i64),
                    Generic::Int(TK as i64),
                ],
                &[
                    Arg::Input("A", &A),
                    Arg::Input("B", &B),
                    Arg::Output("C", &C, vec![TM, TN]),
                ],
            );
        }
        match (e0, e1) {
            (ElemType::F32, ElemType::F32) => matmul_typed::<f32, f32>(launch, A, B, C, TM, TN, TK),
            (ElemType::F32, ElemType::F16) => matmul_typed::<f32, f16>(launch, A, B, C, TM, TN, TK),
            (ElemType::F32, ElemType::BF16) => {
                matmul_typed::<f32, bf16>(launch, A, B, C, TM, TN, TK)
            }
            (ElemType::F16, ElemType::F32) => matmul_typed::<f16, f32>(launch, A, B, C, TM, TN, TK),
            (ElemType::F16, ElemType::F16) => matmul_typed::<f16, f16>(launch, A, B, C, TM, TN, TK),
            (ElemType::F16, ElemType::BF16) => {
                matmul_typed::<f16, bf16>(launch, A, B, C, TM, TN, TK)
            }
            (ElemType::BF16, ElemType::F32) => {
                matmul_typed::<bf16, f32>(launch, A, B, C, TM, TN, TK)
            }
            (ElemType::BF16, ElemType::F16) => {
                matmul_typed::<bf16, f16>(launch, A, B, C, TM, TN, TK)
            }
            (ElemType::BF16, ElemType::BF16) => {
                matmul_typed::<bf16, bf16>(launch, A, B, C, TM, TN, TK)
            }
            // same_elem admitted only the dtypes above, one class at a time.
            _ => Err(tilebridge_runtime::error::argument(
                "unsupported dtype combination",
            )),
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn matmul_typed<E0: Element, E1: Element>(
    mut launch: Launch<'_>,
    A: Array,
    B: Array,
    C: Array,
    TM: i32,
    TN: i32,
    TK: i32,
) -> PyResult<()> {
    let context = launch.context()?;
    let A = A.tensor::<E0>(launch.py, &context);
    let B = B.tensor::<E0>(launch.py, &context);
    let mut C = C.tensor::<E1>(launch.py, &context);
    let mut op = kernels::matmul(&A, &B, (&mut C).partition([TM as usize, TN as usize]))
        .generics(vec![
            E0::DTYPE.as_str().to_string(),
            E1::DTYPE.as_str().to_string(),
            TM.to_string(),
            TN.to_string(),
            TK.to_string(),
        ])
        .grid(launch.grid);
    if let Some(options) = launch.compile_options() {
        op = op.compile_options(options);
    }
    launch.submit(&context, op)
}

/// Compiles one kernel specialization to Tile IR without a GPU: `(ir_text, bytecode)`.
/// `hints=(occupancy, num_ctas, num_worker_warps)` as a launch takes them. `arrays` gives
/// `(parameter, shape, strides, base address)` of array arguments and `scalars` the values of
/// integer scalar parameters, whose divisibility a launch specializes on: without them the
/// kernel is compiled as for arguments divisible by nothing.
#[pyfunction]
#[pyo3(signature = (kernel, generics, strides, target = "sm_90", hints = None, arrays = None, scalars = None))]
#[allow(clippy::too_many_arguments)]
fn _compile_only<'py>(
    py: Python<'py>,
    kernel: &str,
    generics: Vec<String>,
    strides: Vec<(String, Vec<i32>)>,
    target: &str,
    hints: Option<tilebridge_runtime::launch::Hints>,
    arrays: Option<Vec<tilebridge_runtime::compile::ArraySpec>>,
    scalars: Option<Vec<(String, i64)>>,
) -> PyResult<(String, Bound<'py, pyo3::types::PyBytes>)> {
    tilebridge_runtime::compile::compile_only(
        py,
        kernels::__module_ast_self,
        "kernels",
        &["matmul"],
        kernel,
        generics,
        strides,
        target,
        hints,
        arrays.unwrap_or_default(),
        scalars.unwrap_or_default(),
    )
}

/// Host time per launch phase (`TILEBRIDGE_PROFILE=1`): `(launches, {phase: total_ns})`.
#[pyfunction]
fn _profile() -> (u64, Vec<(&'static str, u64)>) {
    tilebridge_runtime::profile::totals()
}

/// `(kernels compiled, launches that went straight to the driver)` in this process.
#[pyfunction]
fn _launch_counts() -> (u64, u64) {
    tilebridge_runtime::direct::counts()
}

#[pymodule]
fn matmul_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(_compile_only, m)?)?;
    m.add_function(wrap_pyfunction!(_profile, m)?)?;
    m.add_function(wrap_pyfunction!(_launch_counts, m)?)?;
    m.add("__tilebridge__", include_str!("../tilebridge.json"))?;
    Ok(())
}
