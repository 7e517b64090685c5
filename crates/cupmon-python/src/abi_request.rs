//! `_cupmon.abi_request`: the Python package's requests to the injection
//! library's C ABI, encoded by the one enum the library decodes them with
//! (`cupmon_abi::Request`), so that an op or field it does not know fails here,
//! in the caller, as the library would answer it (BadRequest).

use cupmon_abi::Request;
use cupmon_error_code::ErrorCode;
use pyo3::prelude::*;

use crate::error::Failure;

/// `_cupmon.abi_request(request_json) -> str`: the request (`{"op": ..., ...}`)
/// read as a [`Request`] and written back as `cupmon_call` takes it.
#[pyfunction]
pub fn abi_request(request_json: &str) -> PyResult<String> {
    let request =
        Request::from_json(request_json).map_err(|e| Failure::new(ErrorCode::BadRequest, e.0))?;
    Ok(request.to_json())
}
