//! CUDA contexts and the caller's stream.
//!
//! torch, CuPy and cutile all work in each device's primary context, so one retained
//! context per device serves every launch. Launches always go to the caller's stream
//! (torch's or CuPy's current stream unless one is given), never to cutile's own pool
//! streams, which do not order against the frameworks' work.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cutile::cuda_core::{Context, Stream};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyInt;

use crate::array::Framework;
use crate::error::{error, Kind};

static CONTEXTS: Mutex<Vec<Option<Arc<Context>>>> = Mutex::new(Vec::new());

/// The primary context of `device`, retained once per process.
pub fn context(device: usize) -> PyResult<Arc<Context>> {
    if !cutile::cuda_core::sys::is_cuda_driver_available() {
        return Err(error(
            Kind::Device,
            "no CUDA driver on this machine (libcuda.so.1 could not be loaded): launching a kernel needs \
             an NVIDIA GPU; translating and building do not",
        ));
    }
    let mut contexts = CONTEXTS.lock().unwrap_or_else(|p| p.into_inner());
    if contexts.len() <= device {
        contexts.resize(device + 1, None);
    }
    if let Some(ctx) = &contexts[device] {
        return Ok(ctx.clone());
    }
    crate::cache::enable_once(); // the first launch of the process: compiles from here on persist
    let ctx = Context::new(device).map_err(|e| {
        error(
            Kind::Device,
            format!("cannot open CUDA device {device}: {e}"),
        )
    })?;
    contexts[device] = Some(ctx.clone());
    Ok(ctx)
}

/// The raw `CUstream` to launch on: the explicit `stream` argument, else the current
/// stream of the framework the arrays came from, else the legacy default stream.
pub fn raw_stream(
    py: Python<'_>,
    explicit: Option<&Bound<'_, PyAny>>,
    framework: Option<Framework>,
    device: usize,
) -> PyResult<usize> {
    if let Some(s) = explicit {
        if s.is_none() {
            return raw_stream(py, None, framework, device);
        }
        if s.is_instance_of::<PyInt>() {
            return s.extract::<usize>();
        }
        for attr in [intern!(py, "cuda_stream"), intern!(py, "ptr")] {
            if let Ok(ptr) = s.getattr(attr).and_then(|p| p.extract::<usize>()) {
                return Ok(ptr);
            }
        }
        return Err(crate::error::argument(
            "stream must be an int (a CUstream), a torch.cuda.Stream or a cupy.cuda.Stream",
        ));
    }
    match framework {
        Some(Framework::Torch) => {
            let table = crate::array::torch_tensor_type(py)
                .and_then(|t| crate::dlpack::torch_current_stream(py, t, device));
            match table {
                Some(stream) => Ok(stream),
                None => torch_current_stream(py)?.call1((device,))?.extract(),
            }
        }
        Some(Framework::CudaArrayInterface) => match py.import(intern!(py, "cupy")) {
            Ok(cupy) => cupy
                .getattr(intern!(py, "cuda"))?
                .call_method0(intern!(py, "get_current_stream"))?
                .getattr(intern!(py, "ptr"))?
                .extract(),
            Err(_) => Ok(0),
        },
        None => Ok(0),
    }
}

/// A callable `device -> raw CUstream` of torch's current stream, looked up once.
fn torch_current_stream(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static CURRENT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = CURRENT.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let torch_c = py.import("torch._C")?;
        // The raw-pointer accessor skips building a torch.cuda.Stream object per launch.
        if let Ok(f) = torch_c.getattr("_cuda_getCurrentRawStream") {
            return Ok(f.unbind());
        }
        let code = "lambda d: __import__('torch').cuda.current_stream(d).cuda_stream";
        Ok(py
            .eval(&std::ffi::CString::new(code).unwrap(), None, None)?
            .unbind())
    })?;
    Ok(f.bind(py))
}

/// The wrapper of a raw stream owned by the caller's framework, made once per (device,
/// stream) and kept for the life of the process.
///
/// Kept, not dropped after each launch, because dropping cutile's `Stream` asks the driver
/// whether the stream is idle (`cuStreamQuery`) and, while it is busy, records an event for
/// a retirement thread: that costs every launch a driver round trip and an event, and on a
/// stream that is being captured into a CUDA graph the query is illegal and invalidates the
/// capture. A wrapper is a pointer and a context reference; the set stays as small as the
/// number of streams the process launches on.
pub fn borrow_stream(raw: usize, context: &Arc<Context>) -> Arc<Stream> {
    static STREAMS: Mutex<Vec<(usize, usize, Arc<Stream>)>> = Mutex::new(Vec::new());
    let device = context.ordinal();
    let mut streams = STREAMS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, _, s)) = streams.iter().find(|(d, r, _)| *d == device && *r == raw) {
        return s.clone();
    }
    // SAFETY: `raw` is a live stream of `context`'s device handed in by the caller (or 0,
    // the legacy default stream). The wrapper never destroys it, and it is never dropped,
    // so it never touches the handle after the framework destroys the stream; a later
    // stream that reuses the handle is the same `CUstream` to the driver.
    let stream = unsafe { Stream::borrow_raw(raw as *mut c_void, context) };
    streams.push((device, raw, stream.clone()));
    stream
}
