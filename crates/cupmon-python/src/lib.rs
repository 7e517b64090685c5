//! `cupmon._cupmon`: the Python package's native half, a thin layer over
//! cupmon-trace and cupmon-records for the offline work (merge, export, dump
//! decoding). The live monitor is not here: the package reaches the one
//! monitor of the process through the injection library's C ABI (ctypes),
//! with requests encoded here ([`abi_request`]) by the enum the library decodes.
//!
//! Windows cross the boundary as JSON bytes (the `trace_window` dict of PyTorch's monitor
//! through `json.dumps`), so this layer has no dict walking of its own and the
//! merge reads them with the same parser as `cupmon merge`. Every function
//! releases the GIL while it works; errors become Python exceptions in
//! [`error`] only.

mod abi_request;
mod error;
mod offline;

use pyo3::prelude::*;

#[pymodule]
fn _cupmon(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(offline::merge_json, m)?)?;
    m.add_function(wrap_pyfunction!(offline::merge_file, m)?)?;
    m.add_function(wrap_pyfunction!(offline::export_json, m)?)?;
    m.add_function(wrap_pyfunction!(offline::export_file, m)?)?;
    m.add_function(wrap_pyfunction!(offline::read_dump_json, m)?)?;
    m.add_function(wrap_pyfunction!(offline::window_trace_files, m)?)?;
    m.add_function(wrap_pyfunction!(error::error_codes, m)?)?;
    m.add_function(wrap_pyfunction!(abi_request::abi_request, m)?)?;
    Ok(())
}
