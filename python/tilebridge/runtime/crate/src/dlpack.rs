//! torch's DLPack C exchange API: a tensor's pointer, shape, strides, dtype and device in one C
//! call, and torch's current stream, without a Python call for either.
//!
//! DLPack 1.2 added `__dlpack_c_exchange_api__`: a capsule on the tensor type holding a table of
//! C functions that frameworks export for kernel libraries ("N0: library support" in
//! `dlpack.h`). torch has it since 2.10. Reading a tensor through its Python accessors costs five
//! Python calls (`get_device()`, `dtype`, `shape`, `stride()`, `data_ptr()`), about 0.9 µs per
//! tensor on the H200's host; through the table it is one C call that fills a `DLTensor` in place.
//!
//! Only exact `torch.Tensor` instances take this path (the table is the type's own; a subclass
//! may override what its accessors say), and only tensors it describes plainly: a CUDA device,
//! one lane, an element type cutile takes. Anything else, or any failure, goes the accessor way
//! ([`crate::array`]), which gives the same answers and the errors users know.
//!
//! The structures below are `dlpack.h`'s, major version 1 (the header's ABI rule: a consumer
//! checks the major version and may walk `prev_api` to an older table it understands).

use std::ffi::{c_int, c_void, CStr};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCapsule;

use crate::array::ElemType;

#[repr(C)]
struct Version {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct Header {
    version: Version,
    prev_api: *const Header,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Device {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: Device,
    ndim: i32,
    dtype: DataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

type TensorFromPyObject = unsafe extern "C" fn(py_object: *mut c_void, out: *mut DlTensor) -> c_int;
type CurrentWorkStream =
    unsafe extern "C" fn(device_type: i32, device_id: i32, out: *mut *mut c_void) -> c_int;

#[repr(C)]
struct ExchangeApi {
    header: Header,
    managed_tensor_allocator: *const c_void,
    managed_tensor_from_py_object_no_sync: *const c_void,
    managed_tensor_to_py_object_no_sync: *const c_void,
    /// May be null: a producer need not offer the non-owning export.
    dltensor_from_py_object_no_sync: Option<TensorFromPyObject>,
    current_work_stream: Option<CurrentWorkStream>,
}

const CUDA: i32 = 2; // kDLCUDA
const CAPSULE: &CStr = c"dlpack_exchange_api";

/// The two functions of torch's table this crate calls.
#[derive(Clone, Copy)]
struct Torch {
    tensor: TensorFromPyObject,
    stream: Option<CurrentWorkStream>,
}

/// torch's table, looked up once (None: torch has none, or none of major version 1).
fn torch(py: Python<'_>, tensor_type: &Bound<'_, PyAny>) -> Option<Torch> {
    static TORCH: PyOnceLock<Option<Torch>> = PyOnceLock::new();
    *TORCH.get_or_init(py, || {
        let capsule = tensor_type
            .getattr(intern!(py, "__dlpack_c_exchange_api__"))
            .ok()?;
        let pointer = capsule
            .cast::<PyCapsule>()
            .ok()?
            .pointer_checked(Some(CAPSULE))
            .ok()?;
        // SAFETY: a capsule named "dlpack_exchange_api" holds a `DLPackExchangeAPI*` that stays
        // valid for the life of the process (`dlpack.h`); each table in the `prev_api` chain
        // starts with the stable header, and only a major version 1 table is read as one.
        unsafe {
            let mut header = pointer.as_ptr() as *const Header;
            while !header.is_null() && (*header).version.major != 1 {
                header = (*header).prev_api;
            }
            let api = header.cast::<ExchangeApi>().as_ref()?;
            Some(Torch {
                tensor: api.dltensor_from_py_object_no_sync?,
                stream: api.current_work_stream,
            })
        }
    })
}

/// What one tensor's `DLTensor` says, copied out while it is valid.
pub struct Described {
    pub ptr: u64,
    pub shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub elem: ElemType,
    pub device: usize,
}

/// Reads `obj`, an instance of exactly `tensor_type` (torch.Tensor), through torch's table; None
/// where the table is missing or the tensor is not a plain CUDA tensor of a dtype cutile takes.
pub fn describe(obj: &Bound<'_, PyAny>, tensor_type: &Bound<'_, PyAny>) -> Option<Described> {
    let py = obj.py();
    let api = torch(py, tensor_type)?;
    let mut t = std::mem::MaybeUninit::<DlTensor>::uninit();
    // SAFETY: `obj` is an instance of the type the table came from, alive and borrowed for this
    // call with the GIL held; `t` is writable space for one `DLTensor`.
    let rc = unsafe { (api.tensor)(obj.as_ptr().cast(), t.as_mut_ptr()) };
    if rc != 0 {
        drop(PyErr::take(py)); // the accessor path reports what is wrong, in its own words
        return None;
    }
    // SAFETY: the producer filled `t` on success.
    let t = unsafe { t.assume_init() };
    let elem = elem(t.dtype)?;
    if t.device.device_type != CUDA || t.ndim < 0 {
        return None;
    }
    let n = t.ndim as usize;
    // SAFETY: `shape` and `strides` point to `ndim` values owned by the tensor, valid until
    // control returns to Python (none runs before these copies); a 0-d tensor may give null.
    let (shape, strides) = unsafe {
        if n == 0 {
            (Vec::new(), Vec::new())
        } else if t.shape.is_null() || t.strides.is_null() {
            return None;
        } else {
            (
                std::slice::from_raw_parts(t.shape, n).to_vec(),
                std::slice::from_raw_parts(t.strides, n).to_vec(),
            )
        }
    };
    Some(Described {
        ptr: t.data as u64 + t.byte_offset,
        shape,
        strides,
        elem,
        device: t.device.device_id as usize,
    })
}

/// torch's current stream on `device`, through its table (None: no table, or it failed).
pub fn torch_current_stream(
    py: Python<'_>,
    tensor_type: &Bound<'_, PyAny>,
    device: usize,
) -> Option<usize> {
    let current = torch(py, tensor_type)?.stream?;
    let mut stream: *mut c_void = std::ptr::null_mut();
    // SAFETY: `stream` is a valid out-pointer; the GIL is held, as the producer may need it.
    let rc = unsafe { current(CUDA, device as i32, &mut stream) };
    if rc != 0 {
        drop(PyErr::take(py));
        return None;
    }
    Some(stream as usize)
}

fn elem(d: DataType) -> Option<ElemType> {
    if d.lanes != 1 {
        return None;
    }
    Some(match (d.code, d.bits) {
        (2, 32) => ElemType::F32,
        (2, 16) => ElemType::F16,
        (4, 16) => ElemType::BF16,
        (2, 64) => ElemType::F64,
        (0, 32) => ElemType::I32,
        (0, 64) => ElemType::I64,
        (0, 16) => ElemType::I16,
        (0, 8) => ElemType::I8,
        (1, 8) => ElemType::U8,
        (1, 16) => ElemType::U16,
        (1, 32) => ElemType::U32,
        (1, 64) => ElemType::U64,
        (6, 8) => ElemType::Bool,
        (10, 8) => ElemType::F8E4M3FN,
        (12, 8) => ElemType::F8E5M2,
        _ => return None,
    })
}
