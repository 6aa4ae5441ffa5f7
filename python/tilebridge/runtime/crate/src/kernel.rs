//! A kernel's compiled specializations, and the launch that goes from checked arguments
//! straight to the driver.
//!
//! cutile's own launch path builds a `Tensor` around every array, registers each with its
//! access tracker, builds the specialization key and probes its launch-site cache, and hands
//! the submission's owners to a retirement thread: about 10 µs of host time per launch, more
//! than the whole of `ct.launch`, and a monomorphized launcher per dtype combination. The
//! arrays of a tilebridge launch belong to the caller's framework, which orders their use and
//! their release on the stream the launch goes to, so none of that bookkeeping protects
//! anything here; a launch on another stream keeps its arrays alive itself ([`keepalive`]).
//!
//! A [`Kernel`] (one `static` per generated launcher) keeps what a launch of one
//! specialization needs: the compiled function and cutile's validator, found by a key made
//! of what a launch specializes on (the generics, each array's dtype and divisibility as
//! cuTile Python computes it, the launch-time hints). The first launch of a
//! specialization compiles it with cutile's JIT (`compile_from_context`, the call cutile's
//! own launcher makes) and checks that the argument layout below is the one the compiled
//! entry declares. Every launch then: the key, cutile's hoisted launch checks, one parameter
//! buffer, one `cuLaunchKernel` on the caller's stream. The generics are strings to cutile's
//! JIT, so one launcher serves every dtype.
//!
//! The parameter layout is cutile's (`push_kernel_args` of its tensor and partition types):
//! per array its base address, then its shape and its strides as i32; a partitioned output
//! adds its tile shape and its strides again; a scalar is its value.
//!
//! [`keepalive`]: crate::keepalive

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use cutile::cuda_async::device_context::{ValidParamType, Validator};
use cutile::cuda_async::device_operation::ExecutionContext;
use cutile::cuda_async::error::DeviceError;
use cutile::cuda_core::{Context, DriverError, Function, Stream};
use cutile::cutile_compiler::ast::Module;
use cutile::cutile_compiler::cuda_tile_runtime_utils::get_gpu_name;
use cutile::cutile_compiler::specialization::{compute_spec, DivHint, SpecializationBits};
use cutile::error::Error as CutileError;
use cutile::tile_kernel::{compile_from_context, validate_launch_checks};
use pyo3::intern;
use pyo3::prelude::*;

use crate::array::{Array, ElemType};
use crate::completion::Completion;
use crate::error::{error, from_device_error, Kind};
use crate::launch::{compile_options, Hints, Launch};
use crate::list::Table;

/// One generic argument of a kernel, in declaration order: turned into cutile's string form
/// only when a specialization is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generic {
    /// An element type parameter bound to the dtype of an array class.
    Dtype(ElemType),
    /// An element type that follows from others (a derived dtype), by its cutile name.
    Name(&'static str),
    /// A `ct.Constant[int]`, or a divisor of a list's arrays.
    Int(i64),
    /// A `ct.Constant[bool]`.
    Bool(bool),
}

impl Generic {
    fn text(self) -> String {
        match self {
            Generic::Dtype(e) => e.as_str().to_string(),
            Generic::Name(n) => n.to_string(),
            Generic::Int(v) => v.to_string(),
            Generic::Bool(v) => v.to_string(),
        }
    }
}

/// A scalar kernel parameter's value, of the Rust type the entry declares.
#[derive(Clone, Copy, Debug)]
pub enum Scalar {
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    Bool(bool),
}

impl Scalar {
    fn type_name(self) -> &'static str {
        match self {
            Scalar::I32(_) => "i32",
            Scalar::I64(_) => "i64",
            Scalar::F32(_) => "f32",
            Scalar::F64(_) => "f64",
            Scalar::Bool(_) => "bool",
        }
    }

    /// The value in a parameter slot: its bytes first, as the driver reads a parameter of the
    /// entry's size from the slot's address (little-endian).
    fn word(self) -> u64 {
        match self {
            Scalar::I32(v) => v as u32 as u64,
            Scalar::I64(v) => v as u64,
            Scalar::F32(v) => v.to_bits() as u64,
            Scalar::F64(v) => v.to_bits(),
            Scalar::Bool(v) => v as u64,
        }
    }
}

/// One parameter of the kernel entry, in the entry's order.
pub enum Arg<'a> {
    /// An array passed whole (`&Tensor`).
    Input(&'static str, &'a Array),
    /// An array written one tile per block (`&mut Tensor` with the tile shape).
    Output(&'static str, &'a Array, Vec<i32>),
    /// An array written by a grid-stride loop over its tiles along axis 0 (`MappedPartitionMut`
    /// with the tile shape; the same parameters as an output): any number of blocks of a 1-D grid.
    Streamed(&'static str, &'a Array, Vec<i32>),
    /// The device table of a list of arrays (`&Tensor<i64>`, one row per array).
    Table(&'static str, &'a Table),
    Scalar(&'static str, Scalar),
}

/// What a launch passes of a tensor parameter: base address, shape, strides, dtype.
struct View<'a> {
    ptr: u64,
    shape: &'a [i32],
    strides: &'a [i32],
    elem: ElemType,
}

impl<'a> Arg<'a> {
    fn name(&self) -> &'static str {
        match self {
            Arg::Input(n, _)
            | Arg::Output(n, _, _)
            | Arg::Streamed(n, _, _)
            | Arg::Table(n, _)
            | Arg::Scalar(n, _) => n,
        }
    }

    fn view(&self) -> Option<View<'a>> {
        match self {
            Arg::Input(_, a) | Arg::Output(_, a, _) | Arg::Streamed(_, a, _) => Some(View {
                ptr: a.ptr,
                shape: &a.shape,
                strides: &a.strides,
                elem: a.elem,
            }),
            Arg::Table(_, t) => Some(View {
                ptr: t.ptr,
                shape: &t.shape,
                strides: &t.strides,
                elem: ElemType::I64,
            }),
            Arg::Scalar(..) => None,
        }
    }

    /// The Python objects that own the memory this parameter points into.
    fn owners(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        match self {
            Arg::Input(_, a) | Arg::Output(_, a, _) | Arg::Streamed(_, a, _) => vec![a.owner(py)],
            Arg::Table(_, t) => t.owners(py),
            Arg::Scalar(..) => Vec::new(),
        }
    }
}

impl View<'_> {
    fn spec(&self) -> SpecializationBits {
        launch_spec(
            self.ptr,
            self.shape,
            self.strides,
            self.elem.size_in_bytes() as i32,
        )
    }
}

/// The most dimensions cuTile Python specializes an array on (its `TMA_MAX_NDIM`).
const SPECIALIZED_DIMS: usize = 5;

/// What a launch specializes an array on, as cuTile Python does
/// (`compute_array_specialization_bits` of its launcher): each extent divisible by 16 or not,
/// each stride a multiple of 16 bytes or not, the base address 16-byte aligned or not, which
/// strides are 1, and whether the elements are disjoint; nothing but disjointness beyond 5
/// dimensions.
///
/// cutile's own `compute_spec` records every power of two up to 16 instead: 1,000 columns are
/// "divisible by 8" to it and by nothing to cuTile Python, and tileiras then picks other code
/// for the same launch (for the f32 row softmax of `examples/`, 128-bit loads where cuTile
/// Python's are masked element loads). The same assumptions give the same Tile IR, and fewer
/// specializations to compile.
pub(crate) fn launch_spec(
    ptr: u64,
    shape: &[i32],
    strides: &[i32],
    elem_bytes: i32,
) -> SpecializationBits {
    let mut spec = compute_spec(ptr, shape, strides, elem_bytes); // stride 1, disjointness
    let none = DivHint::default();
    let sixteen = DivHint {
        divisor: 16,
        ..DivHint::default()
    };
    let specialized = shape.len() <= SPECIALIZED_DIMS;
    // A stride of a multiple of 16 bytes, in elements.
    let stride_16_bytes = match elem_bytes {
        1 | 2 | 4 | 8 | 16 => DivHint {
            divisor: 16 / elem_bytes,
            ..DivHint::default()
        },
        _ => none,
    };
    for i in 0..shape.len() {
        spec.shape_div[i] = if specialized && shape[i] % 16 == 0 {
            sixteen
        } else {
            none
        };
        spec.stride_div[i] = if specialized && (strides[i] as i64 * elem_bytes as i64) % 16 == 0 {
            stride_16_bytes
        } else {
            none
        };
        spec.stride_one[i] &= specialized;
    }
    spec.base_ptr_div = if ptr.is_multiple_of(16) {
        sixteen
    } else {
        none
    };
    spec
}

/// What a launch specializes one array on ([`launch_spec`]) in one word, with no allocation: its
/// dtype, its rank, whether its base is 16-byte aligned and its elements disjoint, and for each of
/// its first [`SPECIALIZED_DIMS`] dimensions whether the extent is divisible by 16, the stride a
/// multiple of 16 bytes, and the stride 1. Two arrays with one word have one [`launch_spec`].
fn packed_spec(elem: ElemType, ptr: u64, shape: &[i32], strides: &[i32]) -> u64 {
    let elem_bytes = elem.size_in_bytes() as i64;
    let mut word = (elem as u64) | ((shape.len() as u64 & 0xff) << 8);
    word |= (ptr.is_multiple_of(16) as u64) << 16;
    word |= (disjoint(shape, strides) as u64) << 17;
    if shape.len() <= SPECIALIZED_DIMS {
        for (i, (&d, &s)) in shape.iter().zip(strides).enumerate() {
            let bits = (d % 16 == 0) as u64
                | (((s as i64 * elem_bytes) % 16 == 0) as u64) << 1
                | ((s == 1) as u64) << 2;
            word |= bits << (18 + 3 * i);
        }
    }
    word
}

/// Whether no two elements of an array share an address, as cutile's `compute_spec` decides it
/// (its i32 arithmetic included): its (stride, extent) pairs sorted, each stride positive and at
/// least the previous one's span.
fn disjoint(shape: &[i32], strides: &[i32]) -> bool {
    let mut stack = [(0i32, 0i32); 16];
    let mut heap;
    let pairs: &mut [(i32, i32)] = if shape.len() <= stack.len() {
        &mut stack[..shape.len()]
    } else {
        heap = vec![(0, 0); shape.len()];
        &mut heap
    };
    for (slot, (&s, &d)) in pairs.iter_mut().zip(strides.iter().zip(shape)) {
        *slot = (s, d);
    }
    pairs.sort_unstable();
    pairs.first().is_none_or(|&(s, _)| s > 0)
        && pairs
            .windows(2)
            .all(|w| w[1].0 > 0 && w[1].0 >= w[0].0.wrapping_mul(w[0].1))
}

/// The most tensor parameters whose packed specializations a launch keeps on the stack.
const STACK_TENSORS: usize = 16;

/// What a launch specializes a kernel on, beyond the kernel itself: compared in place at every
/// launch ([`Kernel::find`]), made owned only when a specialization is resolved.
#[derive(Debug, PartialEq)]
struct Key {
    device: usize,
    generics: Vec<Generic>,
    tensors: Vec<u64>,
    hints: Option<Hints>,
}

impl Key {
    fn is(
        &self,
        device: usize,
        generics: &[Generic],
        tensors: &[u64],
        hints: Option<Hints>,
    ) -> bool {
        self.device == device
            && self.generics == generics
            && self.tensors == tensors
            && self.hints == hints
    }
}

/// A compiled specialization and what its launches check.
struct Resolved {
    key: Key,
    function: Arc<Function>,
    validator: Arc<Validator>,
}

/// The compiled specializations of one kernel entry.
pub struct Kernel {
    module: &'static str,
    function: &'static str,
    entry: &'static str,
    ast: fn() -> Module,
    source_hash: &'static str,
    resolved: RwLock<Vec<Arc<Resolved>>>,
}

impl Kernel {
    /// `module::function` of `#[cutile::module]` source whose AST and `_SOURCE_HASH` are
    /// `ast` and `source_hash`; `entry` is the compiled function's name (`<function>_entry`).
    pub const fn new(
        module: &'static str,
        function: &'static str,
        entry: &'static str,
        ast: fn() -> Module,
        source_hash: &'static str,
    ) -> Self {
        Kernel {
            module,
            function,
            entry,
            ast,
            source_hash,
            resolved: RwLock::new(Vec::new()),
        }
    }

    fn find(
        &self,
        device: usize,
        generics: &[Generic],
        tensors: &[u64],
        hints: Option<Hints>,
    ) -> Option<Arc<Resolved>> {
        let resolved = self.resolved.read().unwrap_or_else(|p| p.into_inner());
        resolved
            .iter()
            .find(|r| r.key.is(device, generics, tensors, hints))
            .cloned()
    }

    /// Compiles (or finds in cutile's cache) the specialization `key` stands for, and checks
    /// that `args` is the parameter list its entry declares.
    fn resolve(
        &self,
        launch: &Launch,
        context: &Arc<Context>,
        stream: &Arc<Stream>,
        key: Key,
        args: &[Arg],
    ) -> PyResult<Arc<Resolved>> {
        let kernel = launch.kernel;
        let generics: Vec<String> = key.generics.iter().map(|g| g.text()).collect();
        // Each tensor parameter's specialization, in the parameters' order.
        let views: Vec<(&str, View)> = args
            .iter()
            .filter_map(|a| a.view().map(|v| (a.name(), v)))
            .collect();
        let spec_args: Vec<(String, SpecializationBits)> = views
            .iter()
            .map(|(name, v)| (name.to_string(), v.spec()))
            .collect();
        let stride_args = spec_args
            .iter()
            .map(|(name, s)| {
                let ones = s.stride_one.iter().map(|&one| if one { 1 } else { -1 });
                (name.clone(), ones.collect())
            })
            .collect();
        // cuTile Python specializes on no scalar's value: neither does a launch here (cutile's own
        // launcher specializes on integer scalars' divisibility, a compile per new divisor).
        let scalar_hints = Vec::new();
        let elems: Vec<ElemType> = views.iter().map(|(_, v)| v.elem).collect();
        if let Some((function, validator)) =
            self.shipped(kernel, context, &generics, &spec_args, &elems, key.hints)?
        {
            check_layout(kernel, &validator, args)?;
            return Ok(self.keep(Resolved {
                key,
                function,
                validator,
            }));
        }
        let options = compile_options(key.hints).unwrap_or_default();
        let ctx = ExecutionContext::new(stream.clone());
        // The JIT may run for seconds: other Python threads go on meanwhile.
        let compiled = launch.py.detach(|| {
            context.bind_to_thread()?;
            compile_from_context(
                &ctx,
                self.ast,
                self.module,
                self.function,
                self.entry,
                generics,
                stride_args,
                spec_args,
                scalar_hints,
                None,
                options,
                self.source_hash,
            )
        });
        let (function, validator) = compiled.map_err(|e| from_cutile_error(kernel, e))?;
        check_layout(kernel, &validator, args)?;
        Ok(self.keep(Resolved {
            key,
            function,
            validator,
        }))
    }

    /// The cubin of this specialization shipped with the extension (`tilebridge build --aot`),
    /// loaded, and its validator; None where none was shipped for this GPU's architecture.
    fn shipped(
        &self,
        kernel: &str,
        context: &Arc<Context>,
        generics: &[String],
        spec_args: &[(String, SpecializationBits)],
        elems: &[ElemType],
        hints: Option<Hints>,
    ) -> PyResult<Option<(Arc<Function>, Arc<Validator>)>> {
        if !crate::aot::any() {
            return Ok(None);
        }
        let arch = get_gpu_name(context.ordinal());
        let tensors: Vec<(&str, &str, &SpecializationBits)> = spec_args
            .iter()
            .zip(elems)
            .map(|((name, spec), elem)| (name.as_str(), elem.as_str(), spec))
            .collect();
        let text = crate::aot::key(self.function, &arch, generics, &tensors, hints);
        let Some(shipped) = crate::aot::find(&text) else {
            return Ok(None);
        };
        let load = || -> Result<Function, DriverError> {
            context
                .load_module_from_image(shipped.cubin)?
                .load_function(self.entry)
        };
        let function = load().map_err(|e| {
            error(
                Kind::Launch,
                format!("kernel `{kernel}`: its shipped {arch} cubin does not load: {e}"),
            )
        })?;
        SHIPPED_LOADS.fetch_add(1, Ordering::Relaxed);
        Ok(Some((Arc::new(function), shipped.validator.clone())))
    }

    /// Keeps a resolved specialization for later launches (or the one another thread kept
    /// meanwhile).
    fn keep(&self, resolved: Resolved) -> Arc<Resolved> {
        let resolved = Arc::new(resolved);
        let mut all = self.resolved.write().unwrap_or_else(|p| p.into_inner());
        match all.iter().find(|r| r.key == resolved.key) {
            Some(other) => other.clone(), // another thread resolved it meanwhile
            None => {
                all.push(resolved.clone());
                resolved
            }
        }
    }
}

/// Checks, once per specialization, that the parameters a launch passes are the ones the
/// compiled entry declares: a launch must never hand the driver a buffer laid out for another
/// signature.
fn check_layout(kernel: &str, validator: &Validator, args: &[Arg]) -> PyResult<()> {
    let mismatch = |what: String| {
        error(
            Kind::Launch,
            format!("kernel `{kernel}`: internal error: the launcher {what}; please report this"),
        )
    };
    if validator.params.len() != args.len() {
        return Err(mismatch(format!(
            "passes {} parameters, the compiled entry declares {}",
            args.len(),
            validator.params.len()
        )));
    }
    for (arg, param) in args.iter().zip(&validator.params) {
        let ok = match (arg, param) {
            (Arg::Output(_, a, tile) | Arg::Streamed(_, a, tile), ValidParamType::Tensor(t)) => {
                t.element_type == a.elem.as_str() && t.shape == *tile
            }
            (Arg::Input(..) | Arg::Table(..), ValidParamType::Tensor(t)) => {
                let v = arg.view().expect("a tensor parameter");
                t.element_type == v.elem.as_str() && t.shape.len() == v.shape.len()
            }
            (Arg::Scalar(_, s), ValidParamType::Scalar(t)) => t.element_type == s.type_name(),
            _ => false,
        };
        if !ok {
            return Err(mismatch(format!(
                "passes '{}' where the compiled entry declares {param:?}",
                arg.name()
            )));
        }
    }
    Ok(())
}

/// Checks the extents an entry fixes for a tensor it takes whole (a list's row width, say):
/// they are no part of the specialization's key, so every launch checks them, as cutile's
/// launcher does.
fn check_static_extents(kernel: &str, validator: &Validator, args: &[Arg]) -> PyResult<()> {
    for (arg, param) in args.iter().zip(&validator.params) {
        let (Arg::Input(..) | Arg::Table(..), ValidParamType::Tensor(t)) = (arg, param) else {
            continue;
        };
        let v = arg.view().expect("a tensor parameter");
        if t.shape
            .iter()
            .zip(v.shape)
            .any(|(&d, &n)| d != -1 && d != n)
        {
            return Err(error(
                Kind::Argument,
                format!(
                    "argument '{}' of kernel `{kernel}` has shape {:?}; the kernel takes {:?} \
                     (-1: any extent)",
                    arg.name(),
                    v.shape,
                    t.shape
                ),
            ));
        }
    }
    Ok(())
}

/// Maps an error of cutile's JIT or launch checks to an exception, keeping cutile's message.
fn from_cutile_error(kernel: &str, e: CutileError) -> PyErr {
    let device = match e {
        CutileError::Driver(d) => DeviceError::Driver(d),
        CutileError::Device(d) => d,
        other => DeviceError::from(other),
    };
    from_device_error(kernel, &device)
}

/// A launch the kernel's bounds proofs do not hold for (cutile's staged checks over the grid and
/// the arrays' extents: a store at the block's own indices needs a grid no wider than the array
/// has tiles) is a wrong argument. A check cutile could not evaluate (an extent it did not find) is
/// not the caller's doing: it stays cutile's error.
fn launch_check_failed(kernel: &str, e: CutileError, grid: (u32, u32, u32)) -> PyErr {
    match e {
        CutileError::KernelLaunch(failed) if failed.0.starts_with("launch check failed") => {
            crate::error::argument(launch_check_message(kernel, &failed.0, grid))
        }
        other => from_cutile_error(kernel, other),
    }
}

/// The failed check's first line, without the generated source's lines that follow it.
fn launch_check_message(kernel: &str, failed: &str, grid: (u32, u32, u32)) -> String {
    let check = failed.lines().next().unwrap_or_default();
    format!(
        "kernel `{kernel}`: {check}, at grid {grid:?} (`num_tile_blocks(k)` is the grid's axis k, \
         `extent(a, k)` array a's)"
    )
}

impl<'py> Launch<'py> {
    /// Launches `kernel` with `generics` and the entry's parameters `args` (in its order) on
    /// the caller's stream, compiling the specialization at its first launch; a blocking
    /// launch then waits for it. With `after=` (see [`Launch::set_after`]) the stream first
    /// waits for those earlier launches on other streams, and the launch returns its
    /// completion.
    pub fn submit(
        mut self,
        kernel: &'static Kernel,
        generics: &[Generic],
        args: &[Arg],
    ) -> PyResult<Option<Completion>> {
        for arg in args {
            match arg {
                Arg::Output(_, a, tile) => self.check_tile_grid(a, tile)?,
                Arg::Streamed(_, a, _) => self.check_streamed_grid(a)?,
                _ => {}
            }
        }
        let context = self.context()?;
        let (stream, raw_stream) = self.stream(&context)?;
        let on_current_stream = self.on_current_stream()?;
        self.watch.lap(1);
        let device = context.ordinal();
        let mut stack = [0u64; STACK_TENSORS];
        let mut heap = Vec::new();
        let mut count = 0;
        for v in args.iter().filter_map(Arg::view) {
            let word = packed_spec(v.elem, v.ptr, v.shape, v.strides);
            if count < STACK_TENSORS {
                stack[count] = word;
            } else {
                if heap.is_empty() {
                    heap.extend_from_slice(&stack);
                }
                heap.push(word);
            }
            count += 1;
        }
        let tensors = if count <= STACK_TENSORS {
            &stack[..count]
        } else {
            &heap[..]
        };
        let resolved = match kernel.find(device, generics, tensors, self.hints) {
            Some(r) => r,
            None => {
                let key = Key {
                    device,
                    generics: generics.to_vec(),
                    tensors: tensors.to_vec(),
                    hints: self.hints,
                };
                kernel.resolve(&self, &context, &stream, key, args)?
            }
        };
        let name = self.kernel;
        check_static_extents(name, &resolved.validator, args)?;
        if !resolved.validator.launch_checks.is_empty() {
            let shapes: Vec<Vec<i32>> = args
                .iter()
                .map(|a| a.view().map(|v| v.shape.to_vec()).unwrap_or_default())
                .collect();
            let views: Vec<Vec<i32>> = args
                .iter()
                .zip(&shapes)
                .map(|(a, shape)| match a {
                    Arg::Output(_, _, tile) | Arg::Streamed(_, _, tile) => tile.clone(),
                    _ => shape.clone(),
                })
                .collect();
            validate_launch_checks(
                &resolved.validator.launch_checks,
                &shapes,
                &views,
                self.grid,
            )
            .map_err(|e| launch_check_failed(name, e, self.grid))?;
        }
        let mut words: Vec<u64> = Vec::with_capacity(args.len() * 9);
        for arg in args {
            match (arg, arg.view()) {
                (Arg::Scalar(_, s), _) => words.push(s.word()),
                (_, Some(v)) => {
                    words.push(v.ptr);
                    words.extend(v.shape.iter().map(|&d| d as u32 as u64));
                    words.extend(v.strides.iter().map(|&s| s as u32 as u64));
                    if let Arg::Output(_, _, tile) | Arg::Streamed(_, _, tile) = arg {
                        words.extend(tile.iter().map(|&t| t as u32 as u64));
                        words.extend(v.strides.iter().map(|&s| s as u32 as u64));
                    }
                }
                (_, None) => unreachable!("every parameter but a scalar is a tensor"),
            }
        }
        let mut params: Vec<*mut c_void> = words
            .iter_mut()
            .map(|w| w as *mut u64 as *mut c_void)
            .collect();
        if let Some(after) = &self.after {
            for earlier in after.try_iter()? {
                let earlier = earlier?;
                match earlier.cast::<Completion>() {
                    Ok(c) => c.get().order_before(raw_stream)?,
                    // another extension's completion
                    Err(_) => drop(earlier.call_method1(intern!(self.py, "block"), (raw_stream,))?),
                }
            }
        }
        self.watch.lap(2);
        let grid = self.grid;
        // SAFETY: `params` holds one pointer per parameter of the compiled entry, each to a
        // slot holding that parameter's value in its leading bytes: the count and kinds were
        // checked against the entry's declaration (`check_layout`), and the layout is the one
        // cutile's launcher pushes. Every array's memory is owned by a Python object the caller
        // holds for this call and lies within the extent its shape and strides give; the grid is
        // the one each partitioned output's tiles make (checked above); a launch
        // on the current stream of its framework is ordered before any later reuse of that
        // memory, and one on another stream keeps the owners alive until it completes (below).
        // No output overlaps another argument (`Launch::output`). `words` outlives the call,
        // which copies the parameters.
        let launched = unsafe {
            context.bind_to_thread().and_then(|()| {
                cutile::cuda_core::launch_kernel(
                    resolved.function.cu_function(),
                    grid,
                    (1, 1, 1),
                    0,
                    stream.cu_stream(),
                    &mut params,
                )
            })
        };
        self.watch.lap(3);
        launched.map_err(|e| from_device_error(name, &DeviceError::Driver(e)))?;
        LAUNCHES.fetch_add(1, Ordering::Relaxed);
        let completion = match self.after {
            Some(_) => match Completion::record(name, &context, &stream, raw_stream) {
                Ok(c) => Some(c),
                Err(e) => {
                    // The kernel is queued: the caller learns of the error only once it has run,
                    // so that no handle is returned while the kernel may still use it.
                    let _ = self.py.detach(|| stream.synchronize());
                    return Err(from_device_error(name, &DeviceError::Driver(e)));
                }
            },
            None => None,
        };
        if on_current_stream {
            crate::keepalive::retire(self.py);
        } else {
            let owners = args.iter().flat_map(|a| a.owners(self.py)).collect();
            if crate::keepalive::hold(self.py, &context, &stream, owners).is_err() {
                // No event to wait on: the kernel is queued, so its arrays are let go only once
                // it has run.
                self.py
                    .detach(|| stream.synchronize())
                    .map_err(|e| from_device_error(name, &DeviceError::Driver(e)))?;
            }
        }
        self.watch.lap(4);
        if self.sync {
            self.py
                .detach(|| stream.synchronize())
                .map_err(|e| from_device_error(name, &DeviceError::Driver(e)))?;
            self.watch.lap(5);
        }
        self.watch.finish();
        Ok(completion)
    }
}

static LAUNCHES: AtomicU64 = AtomicU64::new(0);
static SHIPPED_LOADS: AtomicU64 = AtomicU64::new(0);

/// `(kernels cutile's JIT compiled, kernels launched, shipped cubins loaded)` in this process:
/// what tests read to tell whether a launch compiled.
pub fn counts() -> (u64, u64, u64) {
    (
        cutile::tile_kernel::jit_compile_count(),
        LAUNCHES.load(Ordering::Relaxed),
        SHIPPED_LOADS.load(Ordering::Relaxed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_launch_check_names_the_check_and_the_grid_not_the_generated_source() {
        let failed = "launch check failed: num_tile_blocks(0) <= ceil(extent(y, 1)/16)\n  at \
                      src/tile_kernels.rs:44:9 (store_owned_3d_b2_b0_b1)";
        assert_eq!(
            launch_check_message("transposed_blocks", failed, (5, 4, 2)),
            "kernel `transposed_blocks`: launch check failed: num_tile_blocks(0) <= \
             ceil(extent(y, 1)/16), at grid (5, 4, 2) (`num_tile_blocks(k)` is the grid's axis k, \
             `extent(a, k)` array a's)"
        );
    }

    /// Two arrays have one packed word exactly when cuTile Python's rule gives them one
    /// specialization (`launch_spec`), over shapes, strides and addresses that differ in every
    /// bit the rule reads.
    #[test]
    fn a_packed_word_is_one_launch_spec() {
        let extents = [1, 15, 16, 48, 1000];
        let mut cases = Vec::new();
        for elem in [ElemType::F16, ElemType::F32, ElemType::I64] {
            for ptr in [0x1000u64, 0x1004] {
                for &a in &extents {
                    for &b in &extents {
                        for strides in [[b, 1], [1, a], [b + 3, 1], [0, 1], [b, 2]] {
                            cases.push((elem, ptr, vec![a, b], strides.to_vec()));
                        }
                    }
                    cases.push((elem, ptr, vec![a], vec![1]));
                    cases.push((elem, ptr, vec![a; 6], vec![1; 6]));
                }
            }
        }
        for x in &cases {
            for y in &cases {
                let (px, py) = (
                    packed_spec(x.0, x.1, &x.2, &x.3),
                    packed_spec(y.0, y.1, &y.2, &y.3),
                );
                let bytes = |c: &(ElemType, u64, Vec<i32>, Vec<i32>)| c.0.size_in_bytes() as i32;
                let same = x.0 == y.0
                    && x.2.len() == y.2.len()
                    && launch_spec(x.1, &x.2, &x.3, bytes(x))
                        == launch_spec(y.1, &y.2, &y.3, bytes(y));
                assert_eq!(px == py, same, "{x:?} / {y:?}");
            }
        }
    }
}
