//! Support code that every tilebridge-generated extension links statically.
//!
//! A generated launcher does four things, each backed by one module here:
//! import its Python arguments as device arrays ([`array`]), validate them
//! against the kernel's signature ([`launch`]), find the CUDA context and the
//! caller's stream ([`device`]), and launch the kernel's specialization, compiled
//! by cutile at its first launch ([`kernel`]), mapping every failure to a Python
//! exception ([`error`]). Nothing here panics across the Python boundary.

pub mod aot;
pub mod array;
pub mod cache;
pub mod compile;
pub mod completion;
pub mod device;
pub mod dlpack;
pub mod error;
pub mod keepalive;
pub mod kernel;
pub mod launch;
pub mod list;
pub mod profile;

pub use array::{Array, ElemType};
pub use launch::Launch;

/// Everything a generated `lib.rs` uses.
pub mod prelude {
    pub use crate::array::{Array, ElemType, ANY_DTYPE, ANY_DTYPE_BUT_BOOL};
    pub use crate::completion::Completion;
    pub use crate::kernel::{Arg, Generic, Kernel, Scalar};
    pub use crate::launch::Launch;
    pub use crate::list::ArrayList;
    pub use pyo3::prelude::*;
}
