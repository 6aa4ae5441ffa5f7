//! Python exceptions for launch-time failures.
//!
//! The classes live in the pure-Python package (`tilebridge.errors`) so that every
//! generated extension raises the same types. If that package cannot be imported
//! (an extension used on its own), the nearest built-in exception is raised instead.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// What went wrong, in the terms of `tilebridge.errors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Kind {
    /// A wrong argument: dtype, rank, shape, device, strides, aliasing, grid.
    Argument,
    /// The JIT (Rust frontend or `tileiras`) rejected the kernel.
    Compile,
    /// No usable GPU or CUDA driver, or a CUDA driver call failed.
    Device,
    /// Anything else that failed while launching.
    Launch,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Argument => "ArgumentError",
            Kind::Compile => "KernelCompileError",
            Kind::Device => "DeviceError",
            Kind::Launch => "LaunchError",
        }
    }
}

/// Builds the Python exception for `kind` with `message`.
pub fn error(kind: Kind, message: impl Into<String>) -> PyErr {
    static CLASSES: PyOnceLock<Option<[Py<PyType>; 4]>> = PyOnceLock::new();
    let message = message.into();
    Python::attach(|py| {
        let classes = CLASSES.get_or_init(py, || {
            let module = py.import("tilebridge.errors").ok()?;
            let class = |kind: Kind| -> Option<Py<PyType>> {
                Some(
                    module
                        .getattr(kind.class_name())
                        .ok()?
                        .cast_into::<PyType>()
                        .ok()?
                        .unbind(),
                )
            };
            Some([
                class(Kind::Argument)?,
                class(Kind::Compile)?,
                class(Kind::Device)?,
                class(Kind::Launch)?,
            ])
        });
        match classes {
            Some(classes) => PyErr::from_type(classes[kind as usize].bind(py).clone(), message),
            None if kind == Kind::Argument => PyValueError::new_err(message),
            None => PyRuntimeError::new_err(message),
        }
    })
}

/// Shorthand for an [`Kind::Argument`] error.
pub fn argument(message: impl Into<String>) -> PyErr {
    error(Kind::Argument, message)
}

/// Maps a cutile launch error to the matching exception, keeping cutile's whole message.
pub fn from_device_error(kernel: &str, err: &cutile::cuda_async::error::DeviceError) -> PyErr {
    use cutile::cuda_async::error::DeviceError as E;
    let text = err.to_string();
    let kind = match err {
        E::Driver(_) | E::Context { .. } => Kind::Device,
        _ if text.contains("JIT") || text.contains("tileiras") || text.contains("compile") => {
            Kind::Compile
        }
        _ => Kind::Launch,
    };
    let fault = match err {
        E::Driver(driver) if is_fault(driver.0) => {
            " (a fault on the GPU, here or in earlier work on this stream: CUDA leaves the context \
             unusable after it, so every later CUDA call in this process fails, torch's included; \
             restart the process)"
        }
        _ => "",
    };
    error(kind, format!("kernel `{kernel}`: {text}{fault}"))
}

/// Whether `code` is one of CUDA's sticky errors: a kernel faulted, and the context is lost.
fn is_fault(code: cutile::cuda_core::sys::CUresult) -> bool {
    use cutile::cuda_core::sys as cu;
    [
        cu::cudaError_enum_CUDA_ERROR_ILLEGAL_ADDRESS,
        cu::cudaError_enum_CUDA_ERROR_LAUNCH_TIMEOUT,
        cu::cudaError_enum_CUDA_ERROR_ASSERT,
        cu::cudaError_enum_CUDA_ERROR_HARDWARE_STACK_ERROR,
        cu::cudaError_enum_CUDA_ERROR_ILLEGAL_INSTRUCTION,
        cu::cudaError_enum_CUDA_ERROR_MISALIGNED_ADDRESS,
        cu::cudaError_enum_CUDA_ERROR_INVALID_ADDRESS_SPACE,
        cu::cudaError_enum_CUDA_ERROR_INVALID_PC,
        cu::cudaError_enum_CUDA_ERROR_LAUNCH_FAILED,
    ]
    .contains(&code)
}

/// Text of a caught panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}
