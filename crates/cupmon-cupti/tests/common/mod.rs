//! A recording sink and setup shared by the tests that drive the fake libcupti.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use cupmon_cupti::{ActivityBuffer, ActivitySink, CompletedBuffer, Cupti};
use cupmon_records::{Layout, Record, RecordIter};
use cupmon_test_support::{self as testing, FakeControls};

/// What the sink kept of one completed buffer.
#[derive(Debug, Clone)]
pub struct Collected {
    pub bytes: Vec<u8>,
    /// Kernel names first seen in this buffer.
    pub new_names: Vec<(u64, String)>,
    pub dropped: u64,
    pub cupti_version: u32,
}

/// Lends buffers of `buffer_size` (or none when `refuse`), records what comes
/// back, panics when `panic_on_request`/`panic_on_complete`.
#[derive(Debug, Default)]
pub struct RecordingSink {
    pub buffer_size: AtomicUsize,
    pub refuse: AtomicBool,
    pub panic_on_complete: AtomicBool,
    pub panic_on_request: AtomicBool,
    pub collected: Mutex<Vec<Collected>>,
    seen_names: Mutex<HashSet<u64>>,
}

impl ActivitySink for RecordingSink {
    fn request_buffer(&self) -> Option<ActivityBuffer> {
        if self.panic_on_request.load(Ordering::SeqCst) {
            panic!("test sink panics on request on purpose");
        }
        if self.refuse.load(Ordering::SeqCst) {
            return None;
        }
        Some(ActivityBuffer::new(self.buffer_size.load(Ordering::SeqCst)))
    }

    fn buffer_completed(&self, completed: CompletedBuffer) {
        if self.panic_on_complete.load(Ordering::SeqCst) {
            panic!("test sink panics on purpose");
        }
        let mut seen = self.seen_names.lock().unwrap();
        let new_names = completed.kernel_names(|ptr| seen.insert(ptr)).collect();
        self.collected.lock().unwrap().push(Collected {
            bytes: completed.bytes().to_vec(),
            new_names,
            dropped: completed.dropped(),
            cupti_version: completed.cupti_version(),
        });
    }
}

impl RecordingSink {
    pub fn set(&self, flag: &AtomicBool, on: bool) {
        flag.store(on, Ordering::SeqCst);
    }

    pub fn set_buffer_size(&self, bytes: usize) {
        self.buffer_size.store(bytes, Ordering::SeqCst);
    }

    pub fn take(&self) -> Vec<Collected> {
        std::mem::take(&mut self.collected.lock().unwrap())
    }

    pub fn buffers_so_far(&self) -> usize {
        self.collected.lock().unwrap().len()
    }
}

/// One test's exclusive use of the fake: registered sink, everything reset.
pub struct Session {
    pub cupti: &'static Cupti,
    pub fake: FakeControls,
    pub sink: &'static RecordingSink,
    _exclusive: MutexGuard<'static, ()>,
}

pub fn session() -> Session {
    let exclusive = testing::exclusive();
    let (cupti, fake) = testing::load_fake();
    static SINK: OnceLock<&'static RecordingSink> = OnceLock::new();
    let sink = *SINK.get_or_init(|| {
        let sink: &'static RecordingSink = Box::leak(Box::default());
        cupti
            .register_callbacks(sink)
            .expect("registering callbacks with the fake");
        sink
    });
    sink.refuse.store(false, Ordering::SeqCst);
    sink.panic_on_complete.store(false, Ordering::SeqCst);
    sink.panic_on_request.store(false, Ordering::SeqCst);
    sink.buffer_size.store(64 * 1024, Ordering::SeqCst);
    fake.reset(); // returns every lent buffer to the sink
    sink.take();
    sink.seen_names.lock().unwrap().clear();
    Session {
        cupti,
        fake,
        sink,
        _exclusive: exclusive,
    }
}

/// Every record of the collected buffers, in delivery order.
pub fn decode(collected: &[Collected]) -> Vec<Record> {
    let mut records = Vec::new();
    for buffer in collected {
        let layout = Layout::for_api_version(buffer.cupti_version).unwrap();
        for record in RecordIter::new(&buffer.bytes, layout) {
            records.push(record.expect("the fake writes decodable records"));
        }
    }
    records
}

pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
