//! The environment variables this crate reads, in one place.

/// Path of the libcupti to load. When set, no search happens, and a library that
/// fails to load is an error rather than a reason to look elsewhere.
pub const CUPMON_LIBCUPTI: &str = "CUPMON_LIBCUPTI";

/// Path of the NVIDIA driver library checked before any CUPTI call (default
/// `libcuda.so.1` through the dynamic loader's search). Tests point it at a stand-in.
pub const CUPMON_LIBCUDA: &str = "CUPMON_LIBCUDA";

/// The CUDA toolkit root searched for libcupti before `/usr/local/cuda*`.
pub const CUDA_HOME: &str = "CUDA_HOME";

/// Also a CUDA toolkit root (the name NVIDIA's installers use on some systems);
/// searched after `CUDA_HOME`.
pub const CUDA_PATH: &str = "CUDA_PATH";

/// An active Python virtual environment, searched for the `nvidia-cuda-cupti` wheel.
pub const VIRTUAL_ENV: &str = "VIRTUAL_ENV";

/// An active conda environment, searched for the `nvidia-cuda-cupti` wheel.
pub const CONDA_PREFIX: &str = "CONDA_PREFIX";
