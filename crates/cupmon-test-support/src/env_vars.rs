//! The environment variables the test support reads, in one place.

/// Path of the fake libcupti the tests load, instead of the one cargo built
/// beside the test binary. `scripts/test-python.sh` sets it for the Python
/// tests too (`tests/python/conftest.py` reads the same name).
pub const CUPMON_FAKE_CUPTI: &str = "CUPMON_FAKE_CUPTI";
