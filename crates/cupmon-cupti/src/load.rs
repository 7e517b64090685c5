//! Loading: the driver check, finding and opening libcupti, the process-global
//! instance.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use libloading::Library;

use crate::cupti::Cupti;
use crate::env_vars;
use crate::error::LoadError;
use crate::locate::{search, SearchOptions};
use crate::raw::RawApi;

/// What [`Cupti::load_with`] loads.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub search: SearchOptions,
    /// The driver library to check; `None` means `libcuda.so.1` from the loader's path.
    pub libcuda: Option<PathBuf>,
}

impl LoadOptions {
    /// `CUPMON_LIBCUPTI`, `CUPMON_LIBCUDA` and the search of [`SearchOptions::from_env`].
    pub fn from_env() -> Self {
        LoadOptions {
            search: SearchOptions::from_env(),
            libcuda: std::env::var_os(env_vars::CUPMON_LIBCUDA)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        }
    }
}

static GLOBAL: Mutex<Option<&'static Cupti>> = Mutex::new(None);

impl Cupti {
    /// The process's libcupti, loaded on first use with [`LoadOptions::from_env`]
    /// and kept loaded for the life of the process. A failure is returned, not
    /// remembered: a later call tries again.
    pub fn load() -> Result<&'static Cupti, LoadError> {
        let mut global = GLOBAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(cupti) = *global {
            return Ok(cupti);
        }
        let cupti = Cupti::load_with(&LoadOptions::from_env())?;
        *global = Some(cupti);
        Ok(cupti)
    }

    /// [`Cupti::load`], loading `libcupti` (a setting) instead of searching when it is
    /// given and no libcupti is loaded yet.
    pub fn load_preferring(libcupti: Option<&Path>) -> Result<&'static Cupti, LoadError> {
        let Some(path) = libcupti else {
            return Self::load();
        };
        let mut global = GLOBAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(cupti) = *global {
            return Ok(cupti);
        }
        let mut options = LoadOptions::from_env();
        options.search.explicit = Some(path.to_path_buf());
        let cupti = Cupti::load_with(&options)?;
        *global = Some(cupti);
        Ok(cupti)
    }

    /// Makes `cupti` (from [`Cupti::load_with`]) the process-global instance
    /// that [`Cupti::load`] returns, unless one is loaded already; returns the
    /// global instance. For a program that chooses its libcupti itself, and for
    /// tests that load the fake library.
    pub fn install_global(cupti: &'static Cupti) -> &'static Cupti {
        let mut global = GLOBAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        global.get_or_insert(cupti)
    }

    /// The process-global instance if [`Cupti::load`] has succeeded.
    pub fn loaded() -> Option<&'static Cupti> {
        *GLOBAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Checks the driver, then finds, opens and resolves libcupti as `options`
    /// say. The search order: `options.search.explicit` alone when set
    /// (`CUPMON_LIBCUPTI`); else a libcupti already mapped into the process; the
    /// toolkits (`CUDA_HOME`, `CUDA_PATH`, then `/usr/local/cuda-X.Y` newest first,
    /// then `/usr/local/cuda`; in each `lib64`, `targets/<arch>-linux/lib`,
    /// `extras/CUPTI/lib64`); the `nvidia-cuda-cupti` wheel in the site-packages of
    /// `VIRTUAL_ENV`, `CONDA_PREFIX` and the running Python; last, the site-packages
    /// `python3` reports. The error of a failed search lists every place tried. A
    /// libcupti of a version cupmon has no record layouts for is refused
    /// ([`LoadError::UnsupportedVersion`]), not searched past: the user chose it or
    /// the process already runs it. Each call opens the library again (the dynamic loader shares one copy)
    /// and leaks a small table: meant for [`Cupti::load`] and for tests.
    pub fn load_with(options: &LoadOptions) -> Result<&'static Cupti, LoadError> {
        check_driver(options.libcuda.as_deref())?;
        let ((library, raw), path) = match &options.search.explicit {
            Some(path) => match open(path) {
                Ok(opened) => (opened, path.clone()),
                Err(detail) => {
                    return Err(LoadError::ExplicitLibrary {
                        path: path.clone(),
                        detail,
                    })
                }
            },
            None => search(&options.search, open).map_err(|tried| LoadError::NotFound { tried })?,
        };
        let cupti = Cupti::new(library, raw, path, options.libcuda.clone())?;
        check_version(&cupti)?;
        Ok(Box::leak(Box::new(cupti)))
    }
}

/// Refuses a libcupti whose `cuptiGetVersion` is outside the versions cupmon has
/// record layouts for, before anything is enabled: guessing would misread every
/// record after the first whose struct changed size.
fn check_version(cupti: &Cupti) -> Result<(), LoadError> {
    match cupmon_records::Layout::for_api_version(cupti.version()) {
        Ok(_) => Ok(()),
        Err(source) => Err(LoadError::UnsupportedVersion {
            path: cupti.path().to_path_buf(),
            source,
        }),
    }
}

/// Opens `path` and resolves CUPTI's functions from it. The library is leaked:
/// CUPTI keeps threads and callbacks into cupmon alive for the life of the
/// process, so it must never be unloaded.
fn open(path: &Path) -> Result<(&'static Library, RawApi), String> {
    if !path.exists() {
        return Err("does not exist".into());
    }
    // SAFETY: loading runs the library's initialisers. libcupti's are made to run
    // in any CUDA process; the driver check before this makes sure the driver it
    // binds to is present.
    let library = unsafe { Library::new(path) }.map_err(|error| error.to_string())?;
    // SAFETY: the names resolved are CUPTI's documented entry points with the
    // signatures in `raw`; the library is leaked just below if it qualifies, so
    // the pointers stay valid.
    let raw = unsafe { RawApi::resolve(&library) }?;
    Ok((Box::leak(Box::new(library)), raw))
}

/// Whether this machine has an NVIDIA driver: loads the library
/// `CUPMON_LIBCUDA` names (else `libcuda.so.1`, as CUDA would), so that a command
/// that saw no process use CUDA can say whether one could have. The error says
/// what the loader said.
pub fn find_driver() -> Result<(), LoadError> {
    check_driver(LoadOptions::from_env().libcuda.as_deref())
}

/// Loads the NVIDIA driver library (and keeps it loaded; CUPTI needs it anyway).
/// Without it CUPTI must not be called at all.
fn check_driver(libcuda: Option<&Path>) -> Result<(), LoadError> {
    let name = libcuda.map_or_else(|| "libcuda.so.1".into(), |p| p.as_os_str().to_owned());
    // SAFETY: libcuda's initialisers are made to run in any process that loads it;
    // a stand-in named by CUPMON_LIBCUDA is the tester's responsibility.
    match unsafe { Library::new(&name) } {
        Ok(library) => {
            std::mem::forget(library);
            Ok(())
        }
        Err(error) => Err(LoadError::NoDriver {
            detail: error.to_string(),
        }),
    }
}
