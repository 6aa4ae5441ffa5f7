//! Support code that every tilebridge-generated extension links statically.
//!
//! A generated launcher does four things, each backed by one module here:
//! import its Python arguments as device arrays ([`array`]), validate them
//! against the kernel's signature ([`launch`]), find the CUDA context and the
//! caller's stream ([`device`]), and submit the launch, straight to the driver once
//! the specialization is compiled ([`direct`]) or through cutile, mapping every
//! failure to a Python exception ([`error`]). Nothing here panics across the
//! Python boundary.

pub mod array;
pub mod cache;
pub mod compile;
pub mod device;
pub mod direct;
pub mod error;
pub mod launch;
pub mod list;
pub mod profile;

pub use array::{Array, ElemType, Element};
pub use launch::Launch;

/// Everything a generated `lib.rs` uses.
pub mod prelude {
    pub use crate::array::{Array, ElemType, Element};
    pub use crate::direct::{Arg, DirectKernel, Generic, Scalar};
    pub use crate::launch::Launch;
    pub use crate::list::ArrayList;
    pub use cutile::cuda_core::{f8e4m3fn, f8e5m2};
    pub use cutile::half::{bf16, f16};
    pub use cutile::prelude::{DType, DeviceOp, PartitionMut, PartitionOp, TileKernel};
    pub use pyo3::prelude::*;
}
