//! Kernels compiled ahead of time: cubins shipped inside the extension's package.
//!
//! `tilebridge build --aot sm_90` compiles chosen specializations on a machine without a GPU
//! ([`compile_cubin`]: cutile's front end exactly as a launch runs it, then `tileiras`) and
//! writes them beside the extension's library as `kernels.cubins`. The extension reads that
//! bundle when it is imported ([`load_beside`]); a launch whose specialization is in it loads
//! the cubin (`cuModuleLoadData`) instead of running cutile's front end and `tileiras`, so the
//! GPU machine needs neither. A launch of any other specialization compiles at run time as
//! before.
//!
//! A specialization is found by its key text ([`key`]): the entry, the GPU architecture, the
//! generics, each tensor parameter's dtype and divisibility (as [`crate::kernel::launch_spec`]
//! computes it) and the launch hints; build and launch make it with the same function. With
//! each cubin the bundle keeps what cutile's compiler says launches of it must check (its
//! `Validator`: the parameter list and the launch checks it hoisted out of the kernel), so a
//! shipped kernel is checked exactly as one compiled at run time.
//!
//! The bundle: the line `tilebridge-cubins 1`, one line of JSON (the extension's build key and,
//! per entry, its key, validator, offset and length), then the cubins.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use cutile::cuda_async::device_context::{
    PointerParamType, ScalarParamType, TensorParamType, ValidParamType, Validator,
};
use cutile::cuda_async::predicate::{Atom, LaunchCheck, Predicate, Term};
use cutile::cutile_compiler::ast::Module;
use cutile::cutile_compiler::compiler::{CUDATileFunctionCompiler, CUDATileModules};
use cutile::cutile_compiler::cuda_tile_runtime_utils::{
    run_tileiras, selected_bytecode_version, serialize_tile_ir_bytecode_for_version,
    TileirasOptions,
};
use cutile::cutile_compiler::specialization::{DivHint, SpecializationBits};
use cutile::cutile_compiler::tile_library::link_tile_libraries;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::{json, Value};

use crate::compile::{array_spec, as_launched, on_cpu, BlockViews};
use crate::launch::{compile_options, Hints};

/// The bundle's name, in the extension's package folder.
pub const BUNDLE: &str = "kernels.cubins";
const MAGIC: &[u8] = b"tilebridge-cubins 1\n";

/// The key of one specialization: what a launch of it specializes on, as text. `tensors` are
/// `(parameter, dtype, divisibility)`, in any order.
pub fn key(
    function: &str,
    arch: &str,
    generics: &[String],
    tensors: &[(&str, &str, &SpecializationBits)],
    hints: Option<Hints>,
) -> String {
    let div = |d: &DivHint| d.divisor.to_string();
    let divs = |ds: &[DivHint]| ds.iter().map(div).collect::<Vec<_>>().join(".");
    let mut tensors: Vec<String> = tensors
        .iter()
        .map(|(name, dtype, s)| {
            let ones: String = s
                .stride_one
                .iter()
                .map(|&o| if o { '1' } else { '0' })
                .collect();
            format!(
                "{name}:{dtype}:{}:{}:{ones}:{}:{}",
                divs(&s.shape_div),
                divs(&s.stride_div),
                div(&s.base_ptr_div),
                s.elements_disjoint as u8
            )
        })
        .collect();
    tensors.sort();
    let hints = hints.filter(|h| *h != (None, None, None));
    format!(
        "{function} {arch} <{}> {} {hints:?}",
        generics.join(","),
        tensors.join(" ")
    )
}

/// One array argument of a shipped specialization: `(parameter, dtype, shape, strides, base
/// address, bytes per element)`.
pub type AotArray = (String, String, Vec<i64>, Vec<i64>, u64, i32);

/// Compiles one specialization for `arch` on the CPU as a launch on such a GPU would: cutile's
/// front end with the launch's options and divisibility, the bytecode version this `tileiras`
/// takes, then `tileiras`. Returns `(key, validator as JSON, cubin)`.
#[allow(clippy::too_many_arguments)]
pub fn compile_cubin<'py>(
    py: Python<'py>,
    module_ast: fn() -> Module,
    module: &str,
    function: &str,
    generics: Vec<String>,
    mut strides: Vec<(String, Vec<i32>)>,
    arch: &str,
    hints: Option<Hints>,
    mut arrays: Vec<AotArray>,
    views: &BlockViews,
) -> PyResult<(String, String, Bound<'py, PyBytes>)> {
    as_launched(views, function, &mut strides, &mut arrays, |a| {
        (a.0.as_str(), &mut a.2, &mut a.3)
    });
    let mut specs = Vec::with_capacity(arrays.len());
    for (name, _, shape, strides, base, elem_bytes) in &arrays {
        specs.push(array_spec(name, shape, strides, *base, *elem_bytes)?);
    }
    let tensors: Vec<(&str, &str, &SpecializationBits)> = arrays
        .iter()
        .zip(&specs)
        .map(|(a, s)| (a.0.as_str(), a.1.as_str(), s))
        .collect();
    let key = key(function, arch, &generics, &tensors, hints);
    let (validator, cubin) = on_cpu(py, module, function, || {
        let options = compile_options(hints)
            .unwrap_or_default()
            .with_default_tile_libraries()
            .with_jit_env_overrides()?;
        let modules = CUDATileModules::from_kernel(module_ast())?;
        let strides: Vec<(&str, &[i32])> = strides
            .iter()
            .map(|(n, s)| (n.as_str(), s.as_slice()))
            .collect();
        let spec_args: Vec<(&str, &SpecializationBits)> =
            tensors.iter().map(|(n, _, s)| (*n, *s)).collect();
        let version = selected_bytecode_version()?;
        let compiler = CUDATileFunctionCompiler::new(
            &modules,
            module,
            function,
            &generics,
            &strides,
            &spec_args,
            &[],
            None,
            arch.to_string(),
            &options,
        )?
        .with_target_capabilities(cutile_ir::capabilities::TargetCapabilities::new(
            version, arch,
        ))?;
        let tile_module = compiler.compile()?;
        // After compiling: the launch checks are gathered while it compiles.
        let validator = compiler.get_validator();
        let (bytecode, _) = serialize_tile_ir_bytecode_for_version(&tile_module, version)?;
        let libraries = link_tile_libraries(&tile_module, &options.tile_libraries)?;
        let tileiras = TileirasOptions::from_compile_options(&options).with_tilelibs(libraries);
        let cubin = run_tileiras(&bytecode, arch, &tileiras)?;
        Ok((validator, cubin))
    })?;
    Ok((
        key,
        validator_to_json(&validator).to_string(),
        PyBytes::new(py, &cubin),
    ))
}

/// A shipped cubin and what its launches check.
pub struct Shipped {
    pub cubin: &'static [u8],
    pub validator: Arc<Validator>,
}

static SHIPPED: OnceLock<HashMap<String, Shipped>> = OnceLock::new();

/// Whether the extension shipped any cubin.
pub fn any() -> bool {
    SHIPPED.get().is_some_and(|shipped| !shipped.is_empty())
}

/// The shipped specialization with this key, if the extension has one.
pub fn find(key: &str) -> Option<&'static Shipped> {
    SHIPPED.get()?.get(key)
}

/// The keys of every shipped specialization, sorted.
pub fn keys() -> Vec<String> {
    let mut keys: Vec<String> = SHIPPED
        .get()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

/// Reads the bundle beside the extension module `m` (its package folder), if there is one.
/// `metadata` is the extension's `tilebridge.json`: a bundle made for another build than the
/// one it names, or one that cannot be read, is left unused with a warning, and its kernels
/// compile at run time instead.
pub fn load_beside(m: &Bound<'_, PyModule>, metadata: &str) -> PyResult<()> {
    let build_key = serde_json::from_str::<Value>(metadata)
        .ok()
        .and_then(|v| v["build_key"].as_str().map(str::to_string))
        .unwrap_or_default();
    let Ok(file) = m.getattr("__file__").and_then(|f| f.extract::<String>()) else {
        return Ok(());
    };
    let Some(path) = Path::new(&file).parent().map(|d| d.join(BUNDLE)) else {
        return Ok(());
    };
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(()); // none shipped
    };
    match parse(bytes.leak(), &build_key) {
        Ok(shipped) => {
            let _ = SHIPPED.set(shipped);
        }
        Err(why) => {
            let message = format!(
                "{}: {why}; its kernels are compiled at their first launch instead",
                path.display()
            );
            let warnings = m.py().import("warnings")?;
            warnings.call_method1(
                "warn",
                (
                    message,
                    m.py().get_type::<pyo3::exceptions::PyRuntimeWarning>(),
                ),
            )?;
        }
    }
    Ok(())
}

fn parse(bytes: &'static [u8], build_key: &str) -> Result<HashMap<String, Shipped>, String> {
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or("not a tilebridge cubin bundle")?;
    let end = rest.iter().position(|&b| b == b'\n').ok_or("no index")?;
    let index: Value =
        serde_json::from_slice(&rest[..end]).map_err(|e| format!("bad index: {e}"))?;
    let blobs = &rest[end + 1..];
    let made_for = index["build_key"].as_str().unwrap_or("unknown");
    if made_for != build_key {
        return Err(format!(
            "made for build {made_for}, this extension is build {build_key}"
        ));
    }
    let mut shipped = HashMap::new();
    for entry in index["entries"].as_array().ok_or("no entries")? {
        let key = entry["key"].as_str().ok_or("an entry without a key")?;
        let (offset, len) = (
            entry["offset"].as_u64().ok_or("no offset")? as usize,
            entry["len"].as_u64().ok_or("no length")? as usize,
        );
        let cubin = blobs
            .get(offset..offset.checked_add(len).ok_or("bad length")?)
            .ok_or_else(|| format!("the cubin of `{key}` lies past the end of the file"))?;
        let validator = validator_from_json(&entry["validator"])
            .ok_or_else(|| format!("the validator of `{key}` is unreadable"))?;
        shipped.insert(
            key.to_string(),
            Shipped {
                cubin,
                validator: Arc::new(validator),
            },
        );
    }
    Ok(shipped)
}

// The validator as JSON: the parameter list, and each launch check as its predicate's kind, its
// linear term (constant, then (atom, coefficient) pairs) and its message.

fn validator_to_json(v: &Validator) -> Value {
    let params: Vec<Value> = v
        .params
        .iter()
        .map(|p| match p {
            ValidParamType::Scalar(s) => json!({"scalar": s.element_type}),
            ValidParamType::Pointer(p) => json!({"pointer": p.element_type, "mutable": p.mutable}),
            ValidParamType::Tensor(t) => json!({"tensor": t.element_type, "shape": t.shape}),
        })
        .collect();
    let checks: Vec<Value> = v
        .launch_checks
        .iter()
        .map(|c| {
            let (kind, term, divisor) = match &c.predicate {
                Predicate::Zero(t) => ("zero", t, 0),
                Predicate::Nonzero(t) => ("nonzero", t, 0),
                Predicate::Positive(t) => ("positive", t, 0),
                Predicate::DivisibleBy { term, divisor } => ("divisible", term, *divisor),
            };
            let coeffs: Vec<Value> = term
                .coeffs()
                .iter()
                .map(|(atom, c)| json!([atom_to_json(atom), c]))
                .collect();
            json!({"kind": kind, "divisor": divisor, "constant": term.constant_part(),
                   "coeffs": coeffs, "cause": c.cause})
        })
        .collect();
    json!({"params": params, "launch_checks": checks})
}

fn atom_to_json(a: &Atom) -> Value {
    match *a {
        Atom::Dim { param, axis } => json!(["dim", param, axis]),
        Atom::Iv(id) => json!(["iv", id]),
        Atom::TileBlockId(k) => json!(["block", k]),
        Atom::NumTileBlocks(k) => json!(["blocks", k]),
        Atom::ViewExtent { param, axis } => json!(["view", param, axis]),
        Atom::TileCount { param, axis, tile } => json!(["tiles", param, axis, tile]),
    }
}

fn atom_from_json(v: &Value) -> Option<Atom> {
    let n = |i: usize| v.get(i).and_then(Value::as_u64);
    Some(match v.get(0)?.as_str()? {
        "dim" => Atom::Dim {
            param: n(1)? as usize,
            axis: n(2)? as usize,
        },
        "iv" => Atom::Iv(u32::try_from(n(1)?).ok()?),
        "block" => Atom::TileBlockId(n(1)? as usize),
        "blocks" => Atom::NumTileBlocks(n(1)? as usize),
        "view" => Atom::ViewExtent {
            param: n(1)? as usize,
            axis: n(2)? as usize,
        },
        "tiles" => Atom::TileCount {
            param: n(1)? as usize,
            axis: n(2)? as usize,
            tile: i32::try_from(v.get(3)?.as_i64()?).ok()?,
        },
        _ => return None,
    })
}

fn validator_from_json(v: &Value) -> Option<Validator> {
    let text = |v: &Value| v.as_str().map(str::to_string);
    let mut params = Vec::new();
    for p in v["params"].as_array()? {
        params.push(if let Some(e) = p.get("scalar") {
            ValidParamType::Scalar(ScalarParamType {
                element_type: text(e)?,
            })
        } else if let Some(e) = p.get("pointer") {
            ValidParamType::Pointer(PointerParamType {
                element_type: text(e)?,
                mutable: p["mutable"].as_bool()?,
            })
        } else {
            let shape = p["shape"].as_array()?;
            ValidParamType::Tensor(TensorParamType {
                element_type: text(p.get("tensor")?)?,
                shape: shape
                    .iter()
                    .map(|d| d.as_i64().and_then(|d| i32::try_from(d).ok()))
                    .collect::<Option<_>>()?,
            })
        });
    }
    let mut launch_checks = Vec::new();
    for c in v["launch_checks"].as_array()? {
        // The term is rebuilt from its parts: canonical as stored, so canonical again.
        let mut term = Term::constant(c["constant"].as_i64()?);
        for pair in c["coeffs"].as_array()? {
            let atom = atom_from_json(pair.get(0)?)?;
            term = term.add(&Term::affine(atom, pair.get(1)?.as_i64()?, 0))?;
        }
        let predicate = match c["kind"].as_str()? {
            "zero" => Predicate::Zero(term),
            "nonzero" => Predicate::Nonzero(term),
            "positive" => Predicate::Positive(term),
            "divisible" => Predicate::DivisibleBy {
                term,
                divisor: c["divisor"].as_i64()?,
            },
            _ => return None,
        };
        launch_checks.push(LaunchCheck {
            predicate,
            cause: text(&c["cause"])?,
        });
    }
    Some(Validator {
        params,
        launch_checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_validator_survives_its_json() {
        let term = Term::affine(Atom::Dim { param: 1, axis: 0 }, 3, -2)
            .add(&Term::affine(
                Atom::TileCount {
                    param: 0,
                    axis: 1,
                    tile: 64,
                },
                -1,
                0,
            ))
            .unwrap();
        let v = Validator {
            params: vec![
                ValidParamType::Tensor(TensorParamType {
                    element_type: "f16".into(),
                    shape: vec![-1, 64],
                }),
                ValidParamType::Scalar(ScalarParamType {
                    element_type: "i32".into(),
                }),
            ],
            launch_checks: vec![
                LaunchCheck {
                    predicate: Predicate::Positive(term.clone()),
                    cause: "x".into(),
                },
                LaunchCheck {
                    predicate: Predicate::DivisibleBy { term, divisor: 16 },
                    cause: "y".into(),
                },
            ],
        };
        let back = validator_from_json(&validator_to_json(&v)).unwrap();
        assert_eq!(back.launch_checks, v.launch_checks);
        assert_eq!(format!("{:?}", back.params), format!("{:?}", v.params));
    }
}
