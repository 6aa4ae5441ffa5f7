//! One launch of a generated kernel: argument checks, then submission on the caller's stream.
//!
//! A generated launcher creates a [`Launch`], admits every array through
//! [`Launch::input`] / [`Launch::output`] (rank, device and aliasing checks), checks
//! dtypes and the grid, and hands the entry's parameters to [`Launch::submit`]
//! ([`crate::kernel`]). Every check runs before anything reaches cutile or the driver, so a
//! wrong argument is a Python exception and never a panic; anything cutile still reports is
//! mapped by [`crate::error`], and [`guard`] turns a stray panic into an exception too.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cutile::cuda_core::{Context, Stream};
use cutile::tile_kernel::CompileOptions;
use pyo3::prelude::*;

pub use crate::array::elem_of;
use crate::array::{grid_from_py, Array, ElemType, Framework};
use crate::device;
use crate::error::{argument, error, panic_message, Kind};
use crate::profile::Stopwatch;

/// The state of one launch while its arguments are checked.
pub struct Launch<'py> {
    pub py: Python<'py>,
    pub kernel: &'static str,
    pub grid: (u32, u32, u32),
    stream: Option<Bound<'py, PyAny>>,
    pub(crate) sync: bool,
    device: Option<usize>,
    framework: Option<Framework>,
    /// Every admitted array: its parameter, its first and end byte, whether it is written, and
    /// (pointer, shape, strides) to tell an identical view where the kernel has in-place pairs.
    spans: Vec<Span>,
    /// (input, output) pairs that may be the same array: in-place updates, where the kernel reads
    /// the input before it writes the output, as cuTile Python allows them.
    in_place: &'static [(&'static str, &'static str)],
    pub(crate) hints: Option<Hints>,
    /// Earlier launches this one follows (`after=`): given, the launch returns its completion.
    pub(crate) after: Option<Bound<'py, PyAny>>,
    /// The raw `CUstream` the launch goes to, once looked up (see [`Launch::raw_stream`]).
    raw: Option<usize>,
    /// The stream the launch goes to, once resolved (see [`Launch::stream`]).
    resolved: Option<Arc<Stream>>,
    pub(crate) watch: Stopwatch,
    /// What else the kernel's launcher takes, where this is one of its variants for families of
    /// dtypes (see [`Launch::also_takes`]); empty otherwise.
    also: &'static str,
}

struct Span {
    name: Cow<'static, str>,
    lo: u64,
    hi: u64,
    write: bool,
    view: Option<(u64, Vec<i32>, Vec<i32>)>,
}

/// Kernel hints given at launch: (occupancy, num_ctas, num_worker_warps), each optional. They
/// override the translated kernel's own, as a `ct.kernel.replace_hints(...)` object (TileGym's
/// autotuned configurations) does for cuTile Python.
pub type Hints = (Option<i32>, Option<i32>, Option<i32>);

impl<'py> Launch<'py> {
    pub fn new(
        py: Python<'py>,
        kernel: &'static str,
        grid: &Bound<'py, PyAny>,
        stream: Option<Bound<'py, PyAny>>,
        sync: bool,
    ) -> PyResult<Self> {
        Ok(Launch {
            py,
            kernel,
            grid: grid_from_py(grid)?,
            stream,
            sync,
            device: None,
            framework: None,
            spans: Vec::new(),
            in_place: &[],
            hints: None,
            after: None,
            raw: None,
            resolved: None,
            watch: Stopwatch::start(),
            also: "",
        })
    }

    /// Says, in a dtype this launch refuses, what else the kernel's launcher takes: its variants
    /// for other families of dtypes, which it calls where the arrays have their dtypes.
    pub fn also_takes(&mut self, families: &'static str) {
        self.also = families;
    }

    /// Lets each (input, output) pair be one array, passed twice (an in-place update).
    pub fn allow_in_place(&mut self, pairs: &'static [(&'static str, &'static str)]) {
        self.in_place = pairs;
    }

    /// Launch-time kernel hints (see [`Hints`]); checked positive.
    pub fn set_hints(&mut self, hints: Option<Hints>) -> PyResult<()> {
        if let Some((occupancy, num_ctas, warps)) = hints {
            for (name, value) in [
                ("occupancy", occupancy),
                ("num_ctas", num_ctas),
                ("num_worker_warps", warps),
            ] {
                if let Some(v) = value.filter(|&v| v <= 0) {
                    return Err(argument(format!(
                        "hint {name}={v} for kernel `{}` must be positive",
                        self.kernel
                    )));
                }
            }
        }
        self.hints = hints.filter(|h| *h != (None, None, None));
        Ok(())
    }

    /// `after=`: the completions of earlier launches this one must follow (ownership-tracked
    /// handles pass those that hold its arrays); given, even empty, the launch returns its own
    /// [`crate::completion::Completion`].
    pub fn set_after(&mut self, after: Option<Bound<'py, PyAny>>) {
        self.after = after.filter(|a| !a.is_none());
    }

    /// Admits an array the kernel only reads.
    pub fn input(
        &mut self,
        obj: &Bound<'py, PyAny>,
        name: &'static str,
        rank: usize,
    ) -> PyResult<Array> {
        self.admit(Array::from_py(obj, name)?, rank, false)
    }

    /// Admits an array the kernel writes: it must be writable and overlap no other argument.
    pub fn output(
        &mut self,
        obj: &Bound<'py, PyAny>,
        name: &'static str,
        rank: usize,
    ) -> PyResult<Array> {
        self.admit(Array::from_py(obj, name)?, rank, true)
    }

    /// Checks an array against its parameter: writable if written, its rank, its device, and no
    /// overlap with another argument where either is written.
    pub(crate) fn admit(&mut self, array: Array, rank: usize, write: bool) -> PyResult<Array> {
        let name = &array.name;
        if write && array.readonly {
            return Err(argument(format!(
                "argument '{name}' is read-only, but kernel `{}` writes it",
                self.kernel
            )));
        }
        if array.rank() != rank {
            return Err(argument(format!(
                "argument '{name}' of kernel `{}` must have rank {rank}, got shape {:?}",
                self.kernel, array.shape
            )));
        }
        match self.device {
            Some(d) if d != array.device => {
                return Err(argument(format!(
                    "argument '{name}' is on cuda:{}, but earlier arguments are on cuda:{d}; \
                     all arrays of one launch must be on the same device",
                    array.device
                )))
            }
            _ => self.device = Some(array.device),
        }
        self.framework.get_or_insert(array.framework);
        let (lo, hi) = (array.ptr, array.ptr + array.extent_bytes() as u64);
        let view = (!self.in_place.is_empty())
            .then(|| (array.ptr, array.shape.clone(), array.strides.clone()));
        for other in &self.spans {
            if (write || other.write) && lo < other.hi && other.lo < hi {
                let (written, seen) = if write {
                    (name.as_ref(), other.name.as_ref())
                } else {
                    (other.name.as_ref(), name.as_ref())
                };
                if view.is_some()
                    && view == other.view
                    && self
                        .in_place
                        .iter()
                        .any(|&(a, b)| a == seen && b == written)
                {
                    continue; // the same array, read wholly before it is written: an in-place update
                }
                let allowed = if self.in_place.iter().any(|&(_, out)| out == written) {
                    " (it may be the very same array as an input it updates in place, not another view of it)"
                } else {
                    ""
                };
                return Err(argument(format!(
                    "arguments '{written}' and '{seen}' of kernel `{}` share memory, and '{written}' is \
                     written; an output must not alias any other argument{allowed}",
                    self.kernel
                )));
            }
        }
        self.spans.push(Span {
            name: array.name.clone(),
            lo,
            hi,
            write,
            view,
        });
        Ok(array)
    }

    /// Checks that the arrays of one dtype class agree, and that their dtype is one
    /// the extension was built for. Returns that dtype.
    pub fn same_elem(&self, arrays: &[&Array], allowed: &[ElemType]) -> PyResult<ElemType> {
        let first = arrays[0];
        for a in &arrays[1..] {
            if a.elem != first.elem {
                return Err(argument(format!(
                    "arguments '{}' ({}) and '{}' ({}) of kernel `{}` must have the same dtype",
                    first.name,
                    first.elem.as_str(),
                    a.name,
                    a.elem.as_str(),
                    self.kernel
                )));
            }
        }
        if !allowed.contains(&first.elem) {
            let names: Vec<&str> = allowed.iter().map(|e| e.as_str()).collect();
            let also = if self.also.is_empty() {
                String::new()
            } else {
                format!(" (and {})", self.also)
            };
            return Err(argument(format!(
                "argument '{}' has dtype {}, but kernel `{}` was built for {}{also}; rebuild with that \
                 dtype listed for it",
                first.name,
                first.elem.as_str(),
                self.kernel,
                names.join(", ")
            )));
        }
        Ok(first.elem)
    }

    /// The error of a launch whose arrays' dtypes the kernel promotes together where cuTile Python
    /// refuses to (f16 with bf16; a promotion stored into a narrower array, where its implicit
    /// cast only widens), or into two dtypes where the kernel computes in one (a product and the
    /// sum it fuses into). `arrays`: one of each dtype class involved.
    pub fn refused_promotion(&self, arrays: &[&Array]) -> PyErr {
        let named: Vec<String> = arrays
            .iter()
            .map(|a| format!("'{}' ({})", a.name, a.elem.as_str()))
            .collect();
        argument(format!(
            "kernel `{}` does not take the dtypes of {} together: cuTile Python refuses to promote \
             them (it mixes no f16 with bf16, and stores a tile only into an array of its dtype or a \
             wider one), or promotes them into two dtypes where this kernel computes in one (a \
             product and the sum it fuses into)",
            self.kernel,
            named.join(", ")
        ))
    }

    /// An output written one tile per block fixes the grid: `cdiv(shape, tile)` per axis.
    pub(crate) fn check_tile_grid(&self, out: &Array, tile: &[i32]) -> PyResult<()> {
        if out.shape.contains(&0) {
            return Err(argument(format!(
                "argument '{}' of kernel `{}` is empty (shape {:?}): the kernel writes one tile of it per \
                 block, so there is nothing to launch; skip the launch for empty arrays",
                out.name, self.kernel, out.shape
            )));
        }
        let mut expected = [1u32; 3];
        for (axis, (&n, &t)) in out.shape.iter().zip(tile).enumerate() {
            expected[axis] = (n.max(0) as u32).div_ceil(t as u32);
        }
        let grid = [self.grid.0, self.grid.1, self.grid.2];
        if grid != expected {
            return Err(argument(format!(
                "kernel `{}` writes one {tile:?} tile of '{}' (shape {:?}) per block, so its grid must be \
                 {:?}; got {:?}",
                self.kernel,
                out.name,
                out.shape,
                (expected[0], expected[1], expected[2]),
                self.grid
            )));
        }
        Ok(())
    }

    /// An output a grid-stride loop over `ct.bid(0)` stores: blocks of another `ct.bid(1)` or
    /// `ct.bid(2)` would store the same tiles, so the grid must be 1-D (any number of blocks).
    pub(crate) fn check_streamed_grid(&self, out: &Array) -> PyResult<()> {
        if (self.grid.1, self.grid.2) != (1, 1) {
            return Err(argument(format!(
                "kernel `{}` stores '{}' by a grid-stride loop over ct.bid(0), so its grid must be 1-D: \
                 (n, 1, 1); got {:?}",
                self.kernel, out.name, self.grid
            )));
        }
        Ok(())
    }

    /// An array the kernel addresses through pointers (gather/scatter) or whose strides it reads
    /// (`x.strides`): the translation fixes its last stride at 1, as cuTile Python's
    /// specialization for contiguous rows does, and computes element offsets in i32, so the last
    /// element must lie within 2^31 elements of the first (a masked gather's safety rests on it:
    /// no offset of an element inside the array overflows).
    pub fn check_pointer_access(&self, a: &Array, name: &str) -> PyResult<()> {
        if let Some(s) = a.last_stride_not_one() {
            return Err(argument(format!(
                "argument '{name}' of kernel `{}` has stride {s} in its last dimension; this kernel gathers, \
                 scatters or reads the strides of it and needs that dimension contiguous: pass a contiguous \
                 copy (.contiguous())",
                self.kernel
            )));
        }
        let elements = a.extent_bytes() / a.elem.size_in_bytes();
        if elements > i32::MAX as usize + 1 {
            return Err(argument(format!(
                "argument '{name}' of kernel `{}` spans {elements} elements; this kernel gathers or scatters \
                 it with 32-bit offsets, which reach 2^31 elements: split the array",
                self.kernel
            )));
        }
        Ok(())
    }

    /// The primary context of the device the arrays live on.
    pub fn context(&mut self) -> PyResult<Arc<Context>> {
        self.watch.lap(0);
        device::context(self.device.unwrap_or(0))
    }

    /// The raw stream the launch goes to: the `stream` argument, else the current stream of the
    /// arrays' framework (see [`device::raw_stream`]). Looked up once, when first needed.
    fn raw_stream(&mut self) -> PyResult<usize> {
        if let Some(raw) = self.raw {
            return Ok(raw);
        }
        let raw = device::raw_stream(
            self.py,
            self.stream.as_ref(),
            self.framework,
            self.device.unwrap_or(0),
        )?;
        self.raw = Some(raw);
        Ok(raw)
    }

    /// The stream the launch goes to (see [`Launch::raw_stream`]), wrapped for cutile.
    pub(crate) fn stream(&mut self, context: &Arc<Context>) -> PyResult<(Arc<Stream>, usize)> {
        let raw = self.raw_stream()?;
        if let Some(stream) = &self.resolved {
            return Ok((stream.clone(), raw));
        }
        let stream = device::borrow_stream(raw, context);
        self.resolved = Some(stream.clone());
        Ok((stream, raw))
    }

    /// Whether the launch goes to the current stream of its arrays' framework: no `stream`
    /// argument, or one that is that stream.
    pub(crate) fn on_current_stream(&mut self) -> PyResult<bool> {
        if self.stream.as_ref().is_none_or(|s| s.is_none()) {
            return Ok(true);
        }
        let given = self.raw_stream()?;
        let current = device::raw_stream(self.py, None, self.framework, self.device.unwrap_or(0))?;
        Ok(given == current)
    }
}

/// cutile's compile options for launch-time hints (see [`Hints`]), None without any.
pub fn compile_options(hints: Option<Hints>) -> Option<CompileOptions> {
    let (occupancy, num_ctas, warps) = hints.filter(|h| *h != (None, None, None))?;
    Some(CompileOptions {
        occupancy,
        num_cta_in_cga: num_ctas,
        num_worker_warps_per_cta: warps,
        ..CompileOptions::default()
    })
}

/// Checks that a `ct.Constant` used as a tile dimension is a positive power of two.
pub fn check_tile_dim(kernel: &str, name: &str, value: i32) -> PyResult<()> {
    if value <= 0 || value & (value - 1) != 0 {
        return Err(argument(format!(
            "{name}={value}: kernel `{kernel}` uses {name} as a tile dimension, which must be a positive \
             power of two"
        )));
    }
    Ok(())
}

/// Checks that a `ct.Constant` used as a divisor (`%`, `//`) is positive, which the
/// translation relies on to drop Python's sign correction.
pub fn check_positive(kernel: &str, name: &str, value: i32) -> PyResult<()> {
    if value <= 0 {
        return Err(argument(format!(
            "{name}={value}: kernel `{kernel}` divides by {name}, which must be positive"
        )));
    }
    Ok(())
}

/// Whether `obj` is an array of one of the dtypes `allowed` (see [`elem_of`]): with it, how a
/// launcher with a variant per family of dtypes picks one.
pub fn elem_in(obj: &Bound<'_, PyAny>, allowed: &[ElemType]) -> bool {
    elem_of(obj).is_some_and(|e| allowed.contains(&e))
}

/// Runs a launcher body, turning a panic anywhere beneath it into a Python exception.
pub fn guard<T>(kernel: &str, body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(error(
            Kind::Launch,
            format!(
                "kernel `{kernel}`: internal error in cutile: {}",
                panic_message(&*payload)
            ),
        ))
    })
}
