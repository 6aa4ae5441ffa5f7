//! Device arrays from Python, zero-copy.
//!
//! A launcher argument becomes an [`Array`]: pointer, shape, strides (in elements),
//! element type and device, plus a strong reference to the Python object that owns
//! the memory. Three sources are understood, cheapest first:
//! - torch tensors, read in one C call through torch's DLPack exchange table
//!   ([`crate::dlpack`]), else through their own accessors (`data_ptr()`, `stride()`, ...);
//! - anything with `__cuda_array_interface__` (CuPy, Numba, ...);
//! - objects that only speak DLPack are asked for their device, so that a host
//!   array (NumPy) gets a clear "this is on the CPU" error.
//!
//! A launch passes the pointer, shape and strides to the kernel ([`crate::kernel`]).

use std::borrow::Cow;

use cutile::DTypeId;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyInt, PyString, PyTuple};

use crate::error::argument;

/// Element types a Python array can carry across, by their cutile names.
pub type ElemType = DTypeId;

/// Where an array's memory lives, as its owner reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framework {
    Torch,
    CudaArrayInterface,
}

/// A device array lent to one launch.
#[derive(Debug)]
pub struct Array {
    /// The kernel parameter this array is bound to (for messages): `x`, or `As[2]` for an item
    /// of a list.
    pub name: Cow<'static, str>,
    pub ptr: u64,
    pub shape: Vec<i32>,
    /// Strides in elements.
    pub strides: Vec<i32>,
    pub elem: ElemType,
    pub device: usize,
    pub readonly: bool,
    pub framework: Framework,
    owner: Py<PyAny>,
}

/// Every element type an array can have, in `tilebridge.dtypes`' order: what a launcher takes for
/// an array the kernel only moves (loads, stores, converts).
pub const ANY_DTYPE: [ElemType; 15] = [
    DTypeId::F32,
    DTypeId::F16,
    DTypeId::BF16,
    DTypeId::F64,
    DTypeId::I32,
    DTypeId::I64,
    DTypeId::I16,
    DTypeId::I8,
    DTypeId::U8,
    DTypeId::U16,
    DTypeId::U32,
    DTypeId::U64,
    DTypeId::Bool,
    DTypeId::F8E4M3FN,
    DTypeId::F8E5M2,
];

/// `ANY_DTYPE` but bool, which cutile's `convert_tile` does not take: what a launcher takes for an
/// array the kernel only moves and converts.
pub const ANY_DTYPE_BUT_BOOL: [ElemType; 14] = [
    DTypeId::F32,
    DTypeId::F16,
    DTypeId::BF16,
    DTypeId::F64,
    DTypeId::I32,
    DTypeId::I64,
    DTypeId::I16,
    DTypeId::I8,
    DTypeId::U8,
    DTypeId::U16,
    DTypeId::U32,
    DTypeId::U64,
    DTypeId::F8E4M3FN,
    DTypeId::F8E5M2,
];

const TORCH_DTYPES: [(&str, ElemType); 15] = [
    ("float32", DTypeId::F32),
    ("float16", DTypeId::F16),
    ("bfloat16", DTypeId::BF16),
    ("float64", DTypeId::F64),
    ("int32", DTypeId::I32),
    ("int64", DTypeId::I64),
    ("int16", DTypeId::I16),
    ("int8", DTypeId::I8),
    ("uint8", DTypeId::U8),
    ("uint16", DTypeId::U16),
    ("uint32", DTypeId::U32),
    ("uint64", DTypeId::U64),
    ("bool", DTypeId::Bool),
    ("float8_e4m3fn", DTypeId::F8E4M3FN),
    ("float8_e5m2", DTypeId::F8E5M2),
];

/// The element type of a `torch.dtype`, found by identity in a table built once
/// (comparing objects is cheaper than formatting the dtype's name on every launch).
fn elem_from_torch(dtype: &Bound<'_, PyAny>) -> PyResult<Option<ElemType>> {
    static TABLE: PyOnceLock<Vec<(Py<PyAny>, ElemType)>> = PyOnceLock::new();
    let py = dtype.py();
    let table = TABLE.get_or_try_init(py, || -> PyResult<_> {
        let torch = py.import("torch")?;
        Ok(TORCH_DTYPES
            .iter()
            .filter_map(|(name, elem)| torch.getattr(*name).ok().map(|d| (d.unbind(), *elem)))
            .collect())
    })?;
    Ok(table.iter().find(|(d, _)| d.is(dtype)).map(|(_, e)| *e))
}

/// The dtype of `obj` where it is an array, read as cheaply as it can be: of a torch tensor its
/// `dtype` alone (one attribute, compared by identity), of anything else all of it; None where it
/// is no array cutile takes. What a launcher with a variant per family of dtypes picks one by.
pub fn elem_of(obj: &Bound<'_, PyAny>) -> Option<ElemType> {
    let py = obj.py();
    if let Some(tensor) = torch_tensor_type(py) {
        if obj.is_instance(tensor).unwrap_or(false) {
            let dtype = obj.getattr(intern!(py, "dtype")).ok()?;
            return elem_from_torch(&dtype).ok().flatten();
        }
    }
    Array::from_py(obj, "").ok().map(|a| a.elem)
}

/// `torch.Tensor`, once torch is imported (nothing here imports it): its instances are read
/// without first asking what they are.
pub(crate) fn torch_tensor_type(py: Python<'_>) -> Option<&Bound<'_, PyAny>> {
    static TENSOR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if let Some(t) = TENSOR.get(py) {
        return Some(t.bind(py));
    }
    let modules = py
        .import(intern!(py, "sys"))
        .ok()?
        .getattr(intern!(py, "modules"))
        .ok()?;
    let torch = modules
        .cast::<PyDict>()
        .ok()?
        .get_item(intern!(py, "torch"))
        .ok()??;
    let tensor = torch.getattr(intern!(py, "Tensor")).ok()?.unbind();
    Some(TENSOR.get_or_init(py, || tensor).bind(py))
}

fn elem_from_typestr(typestr: &str) -> Option<ElemType> {
    // `<f4`, `|u1`, ...: byte order, kind, size. Only little-endian or not-applicable.
    let rest = typestr
        .strip_prefix('<')
        .or_else(|| typestr.strip_prefix('|'))?;
    Some(match rest {
        "f4" => DTypeId::F32,
        "f2" => DTypeId::F16,
        "f8" => DTypeId::F64,
        "i4" => DTypeId::I32,
        "i8" => DTypeId::I64,
        "i2" => DTypeId::I16,
        "i1" => DTypeId::I8,
        "u1" => DTypeId::U8,
        "u2" => DTypeId::U16,
        "u4" => DTypeId::U32,
        "u8" => DTypeId::U64,
        "b1" => DTypeId::Bool,
        _ => return None,
    })
}

fn to_i32(name: &str, what: &str, values: &[i64]) -> PyResult<Vec<i32>> {
    values
        .iter()
        .map(|&v| {
            i32::try_from(v).map_err(|_| {
                argument(format!(
                    "argument '{name}': {what} {values:?} do not fit in 32 bits; cutile indexes tensors with i32"
                ))
            })
        })
        .collect()
}

impl Array {
    /// Reads `obj` as a device array bound to kernel parameter `name`.
    pub fn from_py(obj: &Bound<'_, PyAny>, name: impl Into<Cow<'static, str>>) -> PyResult<Array> {
        let name = name.into();
        let py = obj.py();
        if let Some(tensor) = torch_tensor_type(py) {
            if obj.is_instance(tensor)? {
                return Self::from_torch(obj, tensor, name);
            }
        }
        if let Ok(cai) = obj.getattr(intern!(py, "__cuda_array_interface__")) {
            return Self::from_cuda_array_interface(obj, &cai, name);
        }
        if let Ok(device) = obj.call_method0(intern!(py, "__dlpack_device__")) {
            let (kind, _id): (i32, i64) = device.extract()?;
            if kind == 1 || kind == 3 {
                return Err(argument(format!(
                    "argument '{name}' is a host (CPU) array; tilebridge launchers take CUDA device arrays \
                     (e.g. torch.as_tensor(x, device='cuda') or cupy.asarray(x))"
                )));
            }
            return Err(argument(format!(
                "argument '{name}' is a DLPack array on device type {kind}; only CUDA arrays (type 2) are supported"
            )));
        }
        Err(argument(format!(
            "argument '{name}' must be a CUDA array (torch tensor, CuPy array, or any object with \
             __cuda_array_interface__), got {}",
            obj.get_type().name()?
        )))
    }

    fn from_torch(
        obj: &Bound<'_, PyAny>,
        tensor_type: &Bound<'_, PyAny>,
        name: Cow<'static, str>,
    ) -> PyResult<Array> {
        if obj.get_type().is(tensor_type) {
            if let Some(t) = crate::dlpack::describe(obj, tensor_type) {
                let device = t.device;
                return Self::checked(
                    name,
                    t.ptr,
                    &t.shape,
                    &t.strides,
                    t.elem,
                    device,
                    false,
                    Framework::Torch,
                    obj,
                );
            }
        }
        let py = obj.py();
        // -1 for a CPU tensor.
        let device: i64 = obj.call_method0(intern!(py, "get_device"))?.extract()?;
        if device < 0 {
            return Err(argument(format!(
                "argument '{name}' is a CPU tensor; tilebridge launchers take CUDA tensors (call .cuda() first)"
            )));
        }
        let dtype = obj.getattr(intern!(py, "dtype"))?;
        let elem = elem_from_torch(&dtype)?.ok_or_else(|| {
            argument(format!(
                "argument '{name}' has dtype {dtype}, which cutile cannot take"
            ))
        })?;
        let shape: Vec<i64> = obj.getattr(intern!(py, "shape"))?.extract()?;
        let strides: Vec<i64> = obj.call_method0(intern!(py, "stride"))?.extract()?;
        let ptr: u64 = obj.call_method0(intern!(py, "data_ptr"))?.extract()?;
        Self::checked(
            name,
            ptr,
            &shape,
            &strides,
            elem,
            device as usize,
            false,
            Framework::Torch,
            obj,
        )
    }

    fn from_cuda_array_interface(
        obj: &Bound<'_, PyAny>,
        cai: &Bound<'_, PyAny>,
        name: Cow<'static, str>,
    ) -> PyResult<Array> {
        let py = obj.py();
        let cai = cai.cast::<PyDict>().map_err(|_| {
            argument(format!(
                "argument '{name}': __cuda_array_interface__ is not a dict"
            ))
        })?;
        let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
            cai.get_item(key)?.ok_or_else(|| {
                argument(format!(
                    "argument '{name}': __cuda_array_interface__ has no '{key}'"
                ))
            })
        };
        let typestr: String = get("typestr")?.extract()?;
        let elem = elem_from_typestr(&typestr).ok_or_else(|| {
            argument(format!(
                "argument '{name}' has typestr {typestr:?}, which cutile cannot take"
            ))
        })?;
        let shape: Vec<i64> = get("shape")?.extract()?;
        let (ptr, readonly): (u64, bool) = get("data")?.extract()?;
        let size = elem.size_in_bytes() as i64;
        let strides: Vec<i64> = match cai.get_item("strides")? {
            Some(s) if !s.is_none() => {
                let bytes: Vec<i64> = s.extract()?;
                if bytes.iter().any(|b| b % size != 0) {
                    return Err(argument(format!(
                        "argument '{name}': strides {bytes:?} (bytes) are not a multiple of the element size {size}"
                    )));
                }
                bytes.iter().map(|b| b / size).collect()
            }
            _ => contiguous_strides(&shape),
        };
        // CuPy and Numba arrays name their device; other producers are taken to be on device 0.
        let device = obj
            .getattr(intern!(py, "device"))
            .and_then(|d| d.getattr(intern!(py, "id")))
            .and_then(|id| id.extract::<usize>())
            .unwrap_or(0);
        Self::checked(
            name,
            ptr,
            &shape,
            &strides,
            elem,
            device,
            readonly,
            Framework::CudaArrayInterface,
            obj,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn checked(
        name: Cow<'static, str>,
        ptr: u64,
        shape: &[i64],
        strides: &[i64],
        elem: ElemType,
        device: usize,
        readonly: bool,
        framework: Framework,
        obj: &Bound<'_, PyAny>,
    ) -> PyResult<Array> {
        if shape.len() != strides.len() {
            return Err(argument(format!(
                "argument '{name}': shape {shape:?} and strides {strides:?} differ in rank"
            )));
        }
        if let Some(s) = strides.iter().find(|&&s| s < 0) {
            return Err(argument(format!(
                "argument '{name}' has a negative stride ({s}); pass a copy with non-negative strides"
            )));
        }
        let (shape, strides) = (
            to_i32(&name, "shape", shape)?,
            to_i32(&name, "strides", strides)?,
        );
        Ok(Array {
            name,
            ptr,
            shape,
            strides,
            elem,
            device,
            readonly,
            framework,
            owner: obj.clone().unbind(),
        })
    }

    /// A new reference to the Python object that owns the memory.
    pub(crate) fn owner(&self, py: Python<'_>) -> Py<PyAny> {
        self.owner.clone_ref(py)
    }

    /// The stride of the last dimension where it is not 1 and matters (that dimension has more
    /// than one element): the kernel then cannot address the array as contiguous rows.
    pub fn last_stride_not_one(&self) -> Option<i32> {
        match (self.shape.last(), self.strides.last()) {
            (Some(&n), Some(&s)) if n > 1 && s != 1 => Some(s),
            _ => None,
        }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The array's first `rows` elements along dimension 0 (all of them where it has fewer, none
    /// where `rows` is negative): what a grid-stride loop over its tiles up to a stop reaches
    /// (`rows` = stop x the tile's extent there), as the kernel's output.
    pub fn first_rows(mut self, rows: i64) -> Array {
        if let Some(extent) = self.shape.first_mut() {
            *extent = rows.clamp(0, i64::from(*extent)) as i32;
        }
        self
    }

    /// The view of an output a kernel takes where it stores one tile per block at block indices
    /// in another order than the array's dimensions, or split in two (`bid // P`, `bid % P`):
    /// view dimension i spans the array's dimensions `dims[i]` (see [`regroup`]). `divisors`
    /// gives each merged pair's parameter (name, value), in order: the kernel's block index
    /// addresses the pair as one dimension only where the value is the inner extent and the
    /// pair is laid out as one (outer stride = extent x inner stride). So each element of the
    /// view is one element of the array, and no two are the same one.
    pub fn block_view(
        self,
        kernel: &str,
        dims: &[&[usize]],
        divisors: &[(&str, i64)],
    ) -> PyResult<Array> {
        let mut divisors = divisors.iter();
        for group in dims.iter().filter(|g| g.len() == 2) {
            let (outer, inner) = (group[0], group[1]);
            let Some(&(param, value)) = divisors.next() else {
                return Err(argument(format!(
                    "kernel `{kernel}`: internal error: no divisor for dimensions {group:?} of \
                     '{}'; please report this",
                    self.name
                )));
            };
            let (name, extent) = (&self.name, i64::from(self.shape[inner]));
            if value != extent {
                return Err(argument(format!(
                    "kernel `{kernel}` stores '{name}' at ct.bid(..) // {param} and % {param} in its \
                     dimensions {outer} and {inner}, so {param} must be its extent there: \
                     {param} is {value}, '{name}' has shape {:?}",
                    self.shape
                )));
            }
            let joined = i64::from(self.strides[inner]) * extent;
            if self.shape[outer] > 1 && i64::from(self.strides[outer]) != joined {
                return Err(argument(format!(
                    "kernel `{kernel}` stores '{name}' as one dimension of its dimensions {outer} \
                     and {inner}, which its strides {:?} do not lay out as one: pass a contiguous tensor",
                    self.strides
                )));
            }
            if i64::from(self.shape[outer]) * extent > i64::from(i32::MAX) {
                return Err(argument(format!(
                    "argument '{name}': its dimensions {outer} and {inner} hold more than 2^31 - 1 \
                     (shape {:?}); cutile indexes tensors with i32",
                    self.shape
                )));
            }
        }
        let (shape, strides) = regroup(&self.shape, &self.strides, dims);
        let name = format!(
            "{} as the kernel views it: dimensions {dims:?} of it",
            self.name
        );
        Ok(Array {
            name: Cow::Owned(name),
            shape,
            strides,
            ..self
        })
    }

    /// Bytes from the base pointer to one past the last addressable element.
    pub fn extent_bytes(&self) -> usize {
        if self.shape.contains(&0) {
            return 0;
        }
        let last: usize = self
            .shape
            .iter()
            .zip(&self.strides)
            .map(|(&n, &s)| (n as usize - 1) * s as usize)
            .sum();
        (last + 1) * self.elem.size_in_bytes()
    }
}

/// The extents and strides of a view whose dimension i spans the dimensions `dims[i]` of an
/// array of these extents and strides (one, or several laid out as one, outer first): the
/// product of their extents, the innermost one's stride. A launch views its arguments so
/// ([`Array::block_view`]), and compiling a specialization does the same to its arrays.
pub fn regroup<T: Copy + std::iter::Product<T>>(
    shape: &[T],
    strides: &[T],
    dims: &[&[usize]],
) -> (Vec<T>, Vec<T>) {
    dims.iter()
        .map(|group| {
            let inner = *group.last().expect("a view dimension spans a dimension");
            (
                group.iter().map(|&d| shape[d]).product::<T>(),
                strides[inner],
            )
        })
        .unzip()
}

fn contiguous_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1].max(1);
    }
    strides
}

/// The largest grid CUDA launches, per axis (every GPU since compute capability 3.0).
pub const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65535, 65535];

/// The grid of a launch, as `ct.launch` takes it: an int or a tuple of 1 to 3 ints.
pub fn grid_from_py(obj: &Bound<'_, PyAny>) -> PyResult<(u32, u32, u32)> {
    // Asked by type first: a failed extraction builds an exception, which costs more than the
    // rest of the parsing.
    let dims: Vec<i64> = if obj.is_instance_of::<PyInt>() {
        obj.extract::<i64>().map(|n| vec![n]).unwrap_or_default()
    } else if let Ok(t) = obj.cast::<PyTuple>() {
        t.iter()
            .map(|d| d.extract::<i64>())
            .collect::<PyResult<_>>()
            .unwrap_or_default()
    } else if obj.is_instance_of::<PyString>() {
        Vec::new() // a str would extract as a sequence of characters
    } else {
        obj.extract().unwrap_or_default()
    };
    if dims.is_empty() && !obj.cast::<PyTuple>().is_ok_and(|t| t.is_empty()) {
        return Err(argument(format!(
            "grid must be an int or a tuple of 1 to 3 ints, as for ct.launch; got {}",
            obj.repr()?
        )));
    }
    if dims.is_empty() || dims.len() > 3 {
        return Err(argument(format!(
            "grid {dims:?} must have 1 to 3 dimensions"
        )));
    }
    let mut grid = [1u32; 3];
    for ((slot, &d), limit) in grid.iter_mut().zip(&dims).zip(MAX_GRID) {
        if d <= 0 {
            return Err(argument(format!(
                "grid {dims:?} must be made of positive ints (an empty input launches nothing: \
                 skip the launch)"
            )));
        }
        if d > i64::from(limit) {
            return Err(argument(format!(
                "grid {dims:?} is too large: CUDA allows at most {MAX_GRID:?} blocks per axis; \
                 make the tiles larger or loop over tiles inside the kernel"
            )));
        }
        *slot = d as u32;
    }
    Ok((grid[0], grid[1], grid[2]))
}

#[cfg(test)]
mod tests {
    use super::regroup;

    /// Attention's [B, H, S, D] output as block (x, y) stores it: [S, B*H, D], and a batched
    /// [Q, M, N] stored at (bid(1), bid(0), 0) as [M, Q, N]; a merged pair's stride is its inner
    /// one's, its extent the product.
    #[test]
    fn a_view_regroups_extents_and_strides() {
        let (shape, strides) = ([2i64, 3, 200, 64], [3 * 200 * 64i64, 200 * 64, 64, 1]);
        assert_eq!(
            regroup(&shape, &strides, &[&[2], &[0, 1], &[3]]),
            (vec![200, 6, 64], vec![64, 200 * 64, 1])
        );
        assert_eq!(
            regroup(&[5i32, 100, 48], &[4800, 48, 1], &[&[1], &[0], &[2]]),
            (vec![100, 5, 48], vec![48, 4800, 1])
        );
    }
}
