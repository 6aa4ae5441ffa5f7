//! Arrays lent to a launch on another stream than their framework's current one, kept alive
//! until the kernel completes.
//!
//! A framework orders the release of an array's memory on its own current stream: torch's
//! caching allocator hands a freed block to the next allocation on the stream it came from,
//! without waiting for work on other streams. A kernel launched on another stream may still
//! read or write the array when the caller drops its last reference, so such a launch keeps a
//! reference to each array it was passed until an event recorded after it has completed (what
//! cutile's own launch path does with its arrays). Completed entries are let go at later
//! launches; nothing here ever waits.
//!
//! A launch recorded into a CUDA graph runs again at every replay: the arrays of a graph are
//! its owner's to keep, as for every other kernel torch captures, so nothing is held for it.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cutile::cuda_core::sys as cu;
use cutile::cuda_core::{Context, DriverError, Event, Stream};
use pyo3::prelude::*;

/// Launches still in flight on another stream: the event recorded after each, and its arrays.
static PENDING: Mutex<Vec<(Event, Vec<Py<PyAny>>)>> = Mutex::new(Vec::new());
/// `PENDING.len()`, read without the lock by every launch.
static PENDING_LEN: AtomicUsize = AtomicUsize::new(0);

/// Keeps `owners` alive until the work enqueued so far on `stream` has completed.
pub fn hold(
    py: Python<'_>,
    context: &Arc<Context>,
    stream: &Stream,
    owners: Vec<Py<PyAny>>,
) -> Result<(), DriverError> {
    if owners.is_empty() || capturing(stream)? {
        return Ok(());
    }
    let event = context.new_event()?;
    event.record(stream)?;
    let mut pending = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    pending.push((event, owners));
    PENDING_LEN.store(pending.len(), Ordering::Relaxed);
    drop(pending);
    retire(py);
    Ok(())
}

/// Lets go of the arrays of every launch that has completed (or whose context has failed:
/// nothing runs there any more). Cheap when nothing is pending.
pub fn retire(_py: Python<'_>) {
    if PENDING_LEN.load(Ordering::Relaxed) == 0 {
        return;
    }
    let done: Vec<_> = {
        let mut pending = PENDING.lock().unwrap_or_else(|p| p.into_inner());
        let (done, running) = std::mem::take(&mut *pending)
            .into_iter()
            .partition(|(event, _)| event.query().unwrap_or(true));
        *pending = running;
        PENDING_LEN.store(pending.len(), Ordering::Relaxed);
        done
    };
    // Dropped with the lock released and the GIL held: a dropped array may run Python code.
    drop(done);
}

/// Whether `stream` is being captured into a CUDA graph.
pub(crate) fn capturing(stream: &Stream) -> Result<bool, DriverError> {
    let mut status = MaybeUninit::uninit();
    // SAFETY: `stream` is a live stream handle and `status` a valid out-pointer; the query is
    // legal on a capturing stream.
    let code = unsafe { cu::cuStreamIsCapturing(stream.cu_stream(), status.as_mut_ptr()) };
    if code != cu::cudaError_enum_CUDA_SUCCESS {
        return Err(DriverError(code));
    }
    // SAFETY: the driver initialized `status` on success.
    let status = unsafe { status.assume_init() };
    Ok(status != cu::CUstreamCaptureStatus_enum_CU_STREAM_CAPTURE_STATUS_NONE)
}
