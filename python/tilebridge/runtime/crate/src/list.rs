//! Lists of arrays: a kernel parameter such as group_gemm's `As`, one array per group.
//!
//! The host ABI is cuTile Python's: the kernel takes a table with one row per array, each row
//! `1 + 2 * rank` i64 words (base pointer, shape, strides in elements) padded to a power of two,
//! and makes a tensor view from the row of the array it indexes. Every item is admitted like an
//! array argument (rank, device, dtype, aliasing against every other argument, writability for
//! an output) and must have contiguous rows, which the kernel's views assume. The table is
//! allocated and filled on the launch's stream and freed on it after the launch, so it is
//! stream-ordered like the kernel.

use std::sync::Arc;

use cutile::cuda_core::{free_async, malloc_async, memcpy_htod_async, Stream};
use cutile::cutile_compiler::specialization::DivHint;
use pyo3::prelude::*;

use crate::array::Array;
use crate::error::{argument, error, Kind};
use crate::launch::Launch;

/// The arrays of one list parameter, admitted.
#[derive(Debug)]
pub struct ArrayList {
    pub name: &'static str,
    pub items: Vec<Array>,
}

impl ArrayList {
    /// The first item: it stands for the list's dtype (all items share it).
    pub fn first(&self) -> &Array {
        &self.items[0]
    }

    /// What every array of the list is divisible by, in the order of the kernel's `*_DIV`
    /// generics: the base pointer in bytes, then each extent and each stride but the last in
    /// elements. Each is the largest power of two up to 16 that divides it on every array (0
    /// counts as 16), measured by cutile's own `DivHint`, as it measures a single array.
    pub fn divisors(&self) -> Vec<i32> {
        let rank = self.first().rank();
        let mut divisors = vec![16; 2 * rank];
        for a in &self.items {
            let measured = std::iter::once(DivHint::from_ptr(a.ptr).divisor).chain(
                a.shape
                    .iter()
                    .chain(&a.strides[..rank - 1])
                    .map(|&v| DivHint::from_value(v).divisor),
            );
            for (d, v) in divisors.iter_mut().zip(measured) {
                *d = (*d).min(v);
            }
        }
        divisors
    }
}

/// The width of a table row: `1 + 2 * rank` words, rounded up to a power of two.
pub fn row_words(rank: usize) -> usize {
    (1 + 2 * rank).next_power_of_two()
}

impl<'py> Launch<'py> {
    /// Admits a list (or tuple) of arrays the kernel only reads.
    pub fn inputs(
        &mut self,
        obj: &Bound<'py, PyAny>,
        name: &'static str,
        rank: usize,
    ) -> PyResult<ArrayList> {
        self.admit_list(obj, name, rank, false)
    }

    /// Admits a list of arrays the kernel writes: each writable and overlapping nothing else.
    pub fn outputs(
        &mut self,
        obj: &Bound<'py, PyAny>,
        name: &'static str,
        rank: usize,
    ) -> PyResult<ArrayList> {
        self.admit_list(obj, name, rank, true)
    }

    fn admit_list(
        &mut self,
        obj: &Bound<'py, PyAny>,
        name: &'static str,
        rank: usize,
        write: bool,
    ) -> PyResult<ArrayList> {
        let kernel = self.kernel;
        let objects: Vec<Bound<'py, PyAny>> = if obj.is_instance_of::<pyo3::types::PyList>()
            || obj.is_instance_of::<pyo3::types::PyTuple>()
        {
            obj.extract()?
        } else {
            return Err(argument(format!(
                "argument '{name}' of kernel `{kernel}` must be a list or tuple of arrays, got {}",
                obj.get_type().name()?
            )));
        };
        if objects.is_empty() {
            return Err(argument(format!(
                "argument '{name}' of kernel `{kernel}` is an empty list; it needs at least one array"
            )));
        }
        let mut items: Vec<Array> = Vec::with_capacity(objects.len());
        for (i, item) in objects.iter().enumerate() {
            let array = self.admit(Array::from_py(item, format!("{name}[{i}]"))?, rank, write)?;
            if let Some(first) = items.first() {
                if array.elem != first.elem {
                    return Err(argument(format!(
                        "the arrays of '{name}' must share one dtype: '{}' is {}, '{}' is {}",
                        first.name,
                        first.elem.as_str(),
                        array.name,
                        array.elem.as_str()
                    )));
                }
            }
            if let Some(s) = array.last_stride_not_one() {
                return Err(argument(format!(
                    "argument '{}' of kernel `{kernel}` has stride {s} in its last dimension; the arrays \
                     of a list need contiguous rows: pass contiguous copies (.contiguous())",
                    array.name
                )));
            }
            items.push(array);
        }
        Ok(ArrayList { name, items })
    }

    /// The list's table on the device, as the kernel takes it.
    pub fn table(&mut self, list: &ArrayList) -> PyResult<Table> {
        let rank = list.first().rank();
        let width = row_words(rank);
        let mut words = vec![0i64; list.items.len() * width];
        for (row, a) in words.chunks_mut(width).zip(&list.items) {
            row[0] = a.ptr as i64;
            for axis in 0..rank {
                row[1 + axis] = a.shape[axis] as i64;
                row[1 + rank + axis] = a.strides[axis] as i64;
            }
        }
        let context = self.context()?;
        let (stream, _) = self.stream(&context)?;
        let bytes = words.len() * std::mem::size_of::<i64>();
        let failed = |e: &dyn std::fmt::Display| {
            error(
                Kind::Launch,
                format!(
                    "kernel `{}`: cannot pass the list '{}' to the device: {e}",
                    self.kernel, list.name
                ),
            )
        };
        // SAFETY: the stream is the launch's live stream of `context`. The allocation is made
        // and filled in its order, used by the kernel launched after this on it, and freed on
        // it when the table is dropped (`Table::drop`), after that launch. The copy reads
        // `words`, which lives across the call; a copy from pageable memory has read it when
        // the call returns.
        let ptr = unsafe { malloc_async(bytes, &stream) }.map_err(|e| failed(&e))?;
        let table = Table {
            ptr,
            shape: vec![list.items.len() as i32, width as i32],
            strides: vec![width as i32, 1],
            stream,
            items: list.items.iter().map(|a| a.owner(self.py)).collect(),
        };
        unsafe { memcpy_htod_async(ptr, words.as_ptr(), words.len(), &table.stream) }
            .map_err(|e| failed(&e))?;
        Ok(table)
    }
}

/// A list's table: stream-ordered device memory, freed on its stream when dropped, after the
/// launch that reads it was enqueued there.
pub struct Table {
    pub ptr: u64,
    /// `[rows, row width]`, as the kernel's `&Tensor<i64, { [-1, W] }>` takes it.
    pub shape: Vec<i32>,
    pub strides: Vec<i32>,
    stream: Arc<Stream>,
    /// The Python arrays the table points into.
    items: Vec<Py<PyAny>>,
}

impl Table {
    /// New references to the Python arrays the table points into.
    pub(crate) fn owners(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        self.items.iter().map(|o| o.clone_ref(py)).collect()
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_async` on this stream, and every use of it (the copy and
        // the kernel) was enqueued on the same stream before the table is dropped. A failure
        // here (a context already torn down) leaves nothing to free.
        let _ = unsafe { free_async(self.ptr, &self.stream) };
    }
}
