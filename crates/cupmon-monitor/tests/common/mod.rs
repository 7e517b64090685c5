//! Setup shared by the monitor's tests.

use cupmon_cupti::Cupti;
use cupmon_monitor::MonitorConfig;
use cupmon_test_support::{load_fake, FakeControls};
use cupmon_trace::WindowEvent;

/// The fake libcupti, reset. Hold `cupmon_test_support::exclusive()` first.
pub fn fake() -> (&'static Cupti, FakeControls) {
    let (cupti, controls) = load_fake();
    controls.reset();
    (cupti, controls)
}

/// Small buffers and a small cap, dumping into `dir/dump`.
pub fn config(dir: &std::path::Path) -> MonitorConfig {
    let mut c = MonitorConfig::new(dir.join("dump"));
    c.buffer_size = 64 << 10;
    c.max_outstanding_bytes = 4 << 20;
    c
}

/// How many of `events` are of the window kind `kind`.
pub fn kinds(events: &[WindowEvent], kind: &str) -> usize {
    events.iter().filter(|e| e.kind_name() == kind).count()
}
