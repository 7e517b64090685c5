//! The settings of launch accounting and stall recovery, and CUPTI's own settings
//! that the GPU sweeps try. Part of [`crate::SETTINGS`].

use std::time::Duration;

use crate::config::MAX_PYTHON_STACK_DEPTH;
use crate::table::{duration_in, flag, size_in, Setting};
use crate::units::{format_duration, format_size};

fn count_in(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let n: u64 = v
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("{v:?} is not a whole number"))?;
    if n < lo || n > hi {
        return Err(format!("{n} is out of range"));
    }
    Ok(n)
}

fn on_off(on: bool) -> Option<String> {
    Some(if on { "1" } else { "0" }.to_owned())
}

pub(crate) const COUNT_LAUNCHES: Setting = Setting {
    name: "count_launches",
    env: "CUPMON_COUNT_LAUNCHES",
    flag: None,
    value: "0|1",
    default: "1",
    allowed: "0 or 1",
    help: "1: count kernel launches through CUPTI's launch callbacks, so kernels CUPTI \
           loses without counting them show as unaccounted (no flag: 0 only to measure \
           what the counter costs)",
    apply: |c, v| {
        c.count_launches = flag(v)?;
        Ok(())
    },
    show: |c| on_off(c.count_launches),
};

pub(crate) const PYTHON_STACKS: Setting = Setting {
    name: "python_stacks",
    env: "CUPMON_PYTHON_STACKS",
    flag: None,
    value: "0|1",
    default: "1",
    allowed: "0 or 1",
    help: "1: note the Python stack that launched each kernel (read at the launch callback, \
           interned; needs count_launches), for `stats --by-line`, traces and the report; \
           0: off for the whole run (a program switches it with `cupmon.python_stacks`; \
           no flag)",
    apply: |c, v| {
        c.python_stacks = flag(v)?;
        Ok(())
    },
    show: |c| on_off(c.python_stacks),
};

pub(crate) const PYTHON_STACK_DEPTH: Setting = Setting {
    name: "python_stack_depth",
    env: "CUPMON_PYTHON_STACK_DEPTH",
    flag: None,
    value: "N",
    default: "96",
    allowed: "1 to 96",
    help: "frames of each launch's Python stack kept, innermost first (a deeper stack \
           loses its outermost frames and is marked cut); each frame read costs a launch \
           1 to 12 ns on an H200 host (2-3 on the development VM): lower it to cheapen \
           deep stacks (no flag)",
    apply: |c, v| {
        c.python_stack_depth = count_in(v, 1, u64::from(MAX_PYTHON_STACK_DEPTH))? as u32;
        Ok(())
    },
    show: |c| Some(c.python_stack_depth.to_string()),
};

pub(crate) const PYTHON_STACK_TIMING: Setting = Setting {
    name: "python_stack_timing",
    env: "CUPMON_PYTHON_STACK_TIMING",
    flag: None,
    value: "0|1",
    default: "0",
    allowed: "0 or 1",
    help: "1: time each launch's Python stack read in the program itself (two clock reads \
           a launch, taken off the figure; for measuring, not for always), the meta's \
           `python_stack_timing` gives the reads and ns per read (no flag)",
    apply: |c, v| {
        c.python_stack_timing = flag(v)?;
        Ok(())
    },
    show: |c| on_off(c.python_stack_timing),
};

pub(crate) const RECOVER: Setting = Setting {
    name: "recover",
    env: "CUPMON_RECOVER",
    flag: None,
    value: "0|1",
    default: "1",
    allowed: "0 or 1",
    help: "1: when CUPTI delivers nothing while kernels are launched, get it going again \
           (a forced flush, then the activity kinds re-enabled, then the buffer callbacks \
           registered again); 0: only record the gap (no flag)",
    apply: |c, v| {
        c.recover = flag(v)?;
        Ok(())
    },
    show: |c| on_off(c.recover),
};

pub(crate) const STALL_PERIODS: Setting = Setting {
    name: "stall_periods",
    env: "CUPMON_STALL_PERIODS",
    flag: Some("stall-periods"),
    value: "N",
    default: "3",
    allowed: "1 to 1000",
    help: "CUPTI is stalled after this many flush periods without a buffer back while \
           kernels are launched (with --stall-kernels)",
    apply: |c, v| {
        c.stall_periods = count_in(v, 1, 1000)? as u32;
        Ok(())
    },
    show: |c| Some(c.stall_periods.to_string()),
};

pub(crate) const STALL_KERNELS: Setting = Setting {
    name: "stall_kernels",
    env: "CUPMON_STALL_KERNELS",
    flag: Some("stall-kernels"),
    value: "N",
    default: "20000",
    allowed: "1 to 10^12",
    help: "...and at least this many kernels launched since the last buffer came back \
           (more than a stream can queue behind one long kernel)",
    apply: |c, v| {
        c.stall_kernels = count_in(v, 1, 1_000_000_000_000)?;
        Ok(())
    },
    show: |c| Some(c.stall_kernels.to_string()),
};

pub(crate) const FLUSH_OVERLAP: Setting = Setting {
    name: "flush_overlap",
    env: "CUPMON_FLUSH_OVERLAP",
    flag: Some("flush-overlap"),
    value: "0|1",
    default: "0",
    allowed: "0 or 1",
    help: "1: call cupmon's periodic cuptiActivityFlushAll even while the previous one has \
           not returned (from another thread); 0: skip it until that one returns",
    apply: |c, v| {
        c.flush_overlap = flag(v)?;
        Ok(())
    },
    show: |c| on_off(c.flush_overlap),
};

pub(crate) const CUPTI_FLUSH_PERIOD: Setting = Setting {
    name: "cupti_flush_period",
    env: "CUPMON_CUPTI_FLUSH_PERIOD",
    flag: Some("cupti-flush-period"),
    value: "DURATION",
    default: "",
    allowed: "1ms to 1h",
    help: "CUPTI's own periodic flush (cuptiActivityFlushPeriod); unset: CUPTI's default",
    apply: |c, v| {
        c.cupti_flush_period = Some(duration_in(
            v,
            Duration::from_millis(1),
            Duration::from_secs(3600),
        )?);
        Ok(())
    },
    show: |c| c.cupti_flush_period.map(format_duration),
};

pub(crate) const CUPTI_DEVICE_BUFFER_SIZE: Setting = Setting {
    name: "cupti_device_buffer_size",
    env: "CUPMON_CUPTI_DEVICE_BUFFER_SIZE",
    flag: Some("cupti-device-buffer-size"),
    value: "SIZE",
    default: "",
    allowed: "64KiB to 4GiB",
    help: "size of each of CUPTI's device buffers (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, \
           3.2 MB by default in CUPTI 13.0); unset: CUPTI's default",
    apply: |c, v| {
        c.cupti_device_buffer_size = Some(size_in(v, 64 << 10, 4 << 30)?);
        Ok(())
    },
    show: |c| c.cupti_device_buffer_size.map(format_size),
};

pub(crate) const CUPTI_DEVICE_BUFFER_POOL_LIMIT: Setting = Setting {
    name: "cupti_device_buffer_pool_limit",
    env: "CUPMON_CUPTI_DEVICE_BUFFER_POOL_LIMIT",
    flag: Some("cupti-device-buffer-pool-limit"),
    value: "N",
    default: "",
    allowed: "1 to 100000",
    help: "device buffers CUPTI may have per context \
           (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, 250 by default in CUPTI 13.0); \
           unset: CUPTI's default",
    apply: |c, v| {
        c.cupti_device_buffer_pool_limit = Some(count_in(v, 1, 100_000)?);
        Ok(())
    },
    show: |c| c.cupti_device_buffer_pool_limit.map(|n| n.to_string()),
};
