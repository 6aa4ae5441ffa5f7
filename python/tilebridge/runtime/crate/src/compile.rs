//! Compile-only path: a kernel specialization to Tile IR, with no GPU and no driver.
//!
//! Generated extensions expose this as `_compile_only(...)`, which is how CPU-only CI
//! proves that every translated kernel gets through cutile's frontend; `tileiras`
//! then turns the bytecode into a cubin.

use std::panic::{catch_unwind, AssertUnwindSafe};

use cutile::compile_api::KernelCompiler;
use cutile::cutile_compiler::ast::Module;
use cutile::cutile_compiler::error::JITError;
use cutile::cutile_compiler::specialization::SpecializationBits;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::{error, panic_message, Kind};
use crate::launch::{compile_options, Hints};

/// An array argument as a launch sees it: `(parameter, shape, strides, base address, bytes per
/// element)`.
pub type ArraySpec = (String, Vec<i64>, Vec<i64>, u64, i32);

/// The outputs kernels take as views (`(kernel, parameter, dims)`, [`crate::array::Array::block_view`]).
pub type BlockViews = [(&'static str, &'static str, &'static [&'static [usize]])];

/// The arguments of a compile of `function` as its launch passes them: each array of an output
/// it takes as a view (`views`) viewed so, its static stride pattern (`strides`) and its
/// extents and strides (`arrays`, where given).
pub(crate) fn as_launched<A>(
    views: &BlockViews,
    function: &str,
    strides: &mut [(String, Vec<i32>)],
    arrays: &mut [A],
    array: impl Fn(&mut A) -> (&str, &mut Vec<i64>, &mut Vec<i64>),
) {
    let view = |param: &str| {
        views
            .iter()
            .find(|(k, p, _)| *k == function && *p == param)
            .map(|(_, _, dims)| *dims)
    };
    for (param, pattern) in strides.iter_mut() {
        if let Some(dims) = view(param) {
            // a pattern's group takes its innermost dimension's pattern, as a stride does
            *pattern = crate::array::regroup(pattern, pattern, dims).1;
        }
    }
    for a in arrays.iter_mut() {
        let (param, shape, strides) = array(a);
        if let Some(dims) = view(param) {
            (*shape, *strides) = crate::array::regroup(shape, strides, dims);
        }
    }
}

/// Compiles `module::function` (one of `kernels`) with `generics` (in declaration order)
/// and the given static stride patterns (`-1` for a dynamic stride) for `target`
/// (e.g. `sm_90`), with launch-time `hints` applied as a launch applies them. `arrays` give
/// the divisibility a launch with those arguments specializes on
/// ([`crate::kernel::launch_spec`]). Returns the Tile IR text and its bytecode.
#[allow(clippy::too_many_arguments)]
pub fn compile_only<'py>(
    py: Python<'py>,
    module_ast: fn() -> Module,
    module: &str,
    kernels: &[&str],
    function: &str,
    generics: Vec<String>,
    mut strides: Vec<(String, Vec<i32>)>,
    target: &str,
    hints: Option<Hints>,
    mut arrays: Vec<ArraySpec>,
    views: &BlockViews,
) -> PyResult<(String, Bound<'py, PyBytes>)> {
    if !kernels.contains(&function) {
        return Err(crate::error::argument(format!(
            "no kernel `{function}` in this extension; it has {kernels:?}"
        )));
    }
    as_launched(views, function, &mut strides, &mut arrays, |a| {
        (a.0.as_str(), &mut a.1, &mut a.2)
    });
    let specs = arrays
        .iter()
        .map(|(name, shape, strides, base, elem_bytes)| {
            Ok((
                name.as_str(),
                array_spec(name, shape, strides, *base, *elem_bytes)?,
            ))
        })
        .collect::<PyResult<Vec<(&str, SpecializationBits)>>>()?;
    let (ir, bytecode) = on_cpu(py, module, function, || {
        let strides: Vec<(&str, &[i32])> = strides
            .iter()
            .map(|(name, s)| (name.as_str(), s.as_slice()))
            .collect();
        let mut compiler = KernelCompiler::new(module_ast, module, function)
            .generics(generics)
            .strides(&strides)
            .spec_args(&specs)
            .target(target);
        if let Some(options) = compile_options(hints) {
            compiler = compiler.options(options);
        }
        let artifacts = compiler.compile()?;
        let bytecode = artifacts.bytecode()?;
        Ok((artifacts.ir_text(), bytecode))
    })?;
    Ok((ir, PyBytes::new(py, &bytecode)))
}

/// Runs a compile of `module::function` on this thread with the GIL released, as a
/// `CompileError` where cutile fails or panics. cutile's front end panics on some input it does
/// not take (e.g. a form of a generic it cannot parse): that is a compile error of this kernel,
/// not a crash of the caller.
pub(crate) fn on_cpu<T: Send>(
    py: Python<'_>,
    module: &str,
    function: &str,
    compile: impl FnOnce() -> Result<T, JITError> + Send,
) -> PyResult<T> {
    let compiled = py.detach(|| catch_unwind(AssertUnwindSafe(compile)));
    compiled
        .map_err(|payload| {
            error(
                Kind::Compile,
                format!(
                    "{module}::{function}: cutile's compiler panicked: {}",
                    panic_message(&*payload)
                ),
            )
        })?
        .map_err(|e| error(Kind::Compile, format!("{module}::{function}: {e}")))
}

/// The specialization a launch computes for an array of this shape, strides and base address.
pub(crate) fn array_spec(
    name: &str,
    shape: &[i64],
    strides: &[i64],
    base: u64,
    elem_bytes: i32,
) -> PyResult<SpecializationBits> {
    let narrow = |values: &[i64]| -> PyResult<Vec<i32>> {
        values
            .iter()
            .map(|&v| i32::try_from(v))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                crate::error::argument(format!("array `{name}`: {values:?} does not fit in i32"))
            })
    };
    if shape.len() != strides.len() {
        return Err(crate::error::argument(format!(
            "array `{name}`: {} extents but {} strides",
            shape.len(),
            strides.len()
        )));
    }
    Ok(crate::kernel::launch_spec(
        base,
        &narrow(shape)?,
        &narrow(strides)?,
        elem_bytes,
    ))
}
