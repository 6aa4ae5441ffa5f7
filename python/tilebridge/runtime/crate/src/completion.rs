//! The completion of a tracked launch: an event recorded on the launch's stream right after the
//! kernel, from a pool.
//!
//! Ownership-tracked handles (`tilebridge.kernels(ext)`, Python's `ownership.py`) lend arrays
//! to a launch until it completes, and order a launch on one stream after earlier launches on
//! others that hold the same arrays. A launcher called with `after=[...]` does both ends here,
//! in the call that launches: the launch's stream waits for each earlier completion on another
//! stream, and the launch returns its own [`Completion`]. Creating a CUDA event costs more than
//! recording one, so events come from a pool and go back when their completion is dropped (a
//! wait enqueued on an event reads its state when it is enqueued, so a later record cannot
//! disturb it).

use std::sync::{Arc, Mutex};

use cutile::cuda_async::error::DeviceError;
use cutile::cuda_core::sys as cu;
use cutile::cuda_core::{Context, DriverError, Event, Stream};
use pyo3::prelude::*;

use crate::error::from_device_error;

/// Events whose completions were dropped, with the device each belongs to.
static POOL: Mutex<Vec<(usize, Event)>> = Mutex::new(Vec::new());
const POOL_LIMIT: usize = 256;

/// When the work a launch enqueued has run: query it, wait for it, or make another stream wait.
#[pyclass(frozen, module = "tilebridge")]
pub struct Completion {
    /// None where the stream was being captured into a CUDA graph: nothing ran, nothing will
    /// until the graph is replayed.
    event: Option<Event>,
    stream: usize,
    device: usize,
    kernel: &'static str,
}

impl Completion {
    /// Records a pooled event on `stream` after what is enqueued there (`raw` is its handle).
    pub(crate) fn record(
        kernel: &'static str,
        context: &Arc<Context>,
        stream: &Stream,
        raw: usize,
    ) -> Result<Completion, DriverError> {
        let device = context.ordinal();
        let event = if crate::keepalive::capturing(stream)? {
            None
        } else {
            let pooled = {
                let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
                let at = pool.iter().rposition(|(d, _)| *d == device);
                at.map(|i| pool.swap_remove(i).1)
            };
            let event = match pooled {
                Some(event) => event,
                None => context.new_event_with_flags(None)?, // timing off: the cheaper kind
            };
            event.record(stream)?;
            Some(event)
        };
        Ok(Completion {
            event,
            stream: raw,
            device,
            kernel,
        })
    }

    fn check<T>(&self, r: Result<T, DriverError>) -> PyResult<T> {
        r.map_err(|e| from_device_error(self.kernel, &DeviceError::Driver(e)))
    }

    /// Makes `stream` wait for this launch, unless the launch went there (the stream orders it).
    pub(crate) fn order_before(&self, stream: usize) -> PyResult<()> {
        let Some(event) = &self.event else {
            return Ok(());
        };
        if stream == self.stream {
            return Ok(());
        }
        // SAFETY: `event` is a live event of this completion's device and `stream` a live stream
        // the caller launches on, on the same device (checked by the caller's launch).
        let code = unsafe { cu::cuStreamWaitEvent(stream as cu::CUstream, event.cu_event(), 0) };
        self.check(if code == cu::cudaError_enum_CUDA_SUCCESS {
            Ok(())
        } else {
            Err(DriverError(code))
        })
    }
}

#[pymethods]
impl Completion {
    /// The raw `CUstream` the launch went to.
    #[getter]
    fn stream(&self) -> usize {
        self.stream
    }

    /// The device the launch went to.
    #[getter]
    fn device(&self) -> usize {
        self.device
    }

    /// Whether the launch was captured into a CUDA graph rather than run.
    #[getter]
    fn captured(&self) -> bool {
        self.event.is_none()
    }

    /// Whether the launch has completed (never waits).
    fn done(&self) -> PyResult<bool> {
        match &self.event {
            Some(event) => self.check(event.query()),
            None => Ok(true),
        }
    }

    /// Waits for the launch to complete (other Python threads run meanwhile).
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        match &self.event {
            Some(event) => self.check(py.detach(|| event.synchronize())),
            None => Ok(()),
        }
    }

    /// Makes the raw stream `stream` wait for this launch before what is enqueued there next.
    fn block(&self, stream: usize) -> PyResult<()> {
        if let Some(event) = &self.event {
            self.check(event.context().bind_to_thread())?;
        }
        self.order_before(stream)
    }

    fn __repr__(&self) -> String {
        let state = match &self.event {
            None => "captured",
            Some(e) if e.query().unwrap_or(true) => "done",
            Some(_) => "running",
        };
        format!(
            "<Completion of {} on stream {:#x}: {state}>",
            self.kernel, self.stream
        )
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        if let Some(event) = self.event.take() {
            let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
            if pool.len() < POOL_LIMIT {
                pool.push((self.device, event));
            }
        }
    }
}
