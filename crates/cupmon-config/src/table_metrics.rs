//! `cupmon run`'s live signals for the tools operators already run: per rank, in
//! Prometheus' text format, on an HTTP port and/or in a textfile for node-exporter's
//! textfile collector. Read by `cupmon run` itself (outside the traced program), not
//! by the injection library. Part of [`crate::SETTINGS`].

use std::path::PathBuf;

use crate::table::{duration_in, Setting, SEC};
use crate::units::format_duration;

pub(crate) const METRICS_PORT: Setting = Setting {
    name: "metrics_port",
    env: "CUPMON_METRICS_PORT",
    flag: Some("metrics-port"),
    value: "[ADDR:]PORT",
    default: "",
    allowed: "a TCP port, 1 to 65535, with an optional IPv4 address (default 0.0.0.0)",
    help: "cupmon run serves per-rank metrics in Prometheus' text format at \
           http://ADDR:PORT/metrics (GPU progress age, busy, kernels/s, NCCL share, dropped \
           and unaccounted records, straggler score)",
    apply: |c, v| {
        let v = v.trim();
        let (addr, port) = match v.rsplit_once(':') {
            Some((a, p)) => (a, p),
            None => ("0.0.0.0", v),
        };
        let port: u16 = port
            .parse()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| format!("{port:?} is not a port from 1 to 65535"))?;
        let addr: std::net::Ipv4Addr = addr
            .parse()
            .map_err(|_| format!("{addr:?} is not an IPv4 address"))?;
        c.metrics_port = Some(std::net::SocketAddrV4::new(addr, port));
        Ok(())
    },
    show: |c| c.metrics_port.map(|a| a.to_string()),
};

pub(crate) const METRICS_FILE: Setting = Setting {
    name: "metrics_file",
    env: "CUPMON_METRICS_FILE",
    flag: Some("metrics-file"),
    value: "PATH",
    default: "",
    allowed: "a file path ending in .prom in a writable directory",
    help: "cupmon run writes the same metrics to this file every --metrics-interval, \
           atomically (a temporary file renamed), for node-exporter's textfile collector; \
           removed when the run ends",
    apply: |c, v| {
        let path = PathBuf::from(v);
        if !v.ends_with(".prom") {
            return Err(format!(
                "{v:?} does not end in .prom (node-exporter reads only those)"
            ));
        }
        c.metrics_file = Some(path);
        Ok(())
    },
    show: |c| c.metrics_file.as_ref().map(|p| p.display().to_string()),
};

pub(crate) const METRICS_INTERVAL: Setting = Setting {
    name: "metrics_interval",
    env: "CUPMON_METRICS_INTERVAL",
    flag: Some("metrics-interval"),
    value: "DURATION",
    default: "15s",
    allowed: "100ms to 1h",
    help: "how often the metrics are computed (each time the last minute of every rank's \
           dump is read)",
    apply: |c, v| {
        c.metrics_interval = duration_in(v, std::time::Duration::from_millis(100), 3600 * SEC)?;
        Ok(())
    },
    show: |c| Some(format_duration(c.metrics_interval)),
};
