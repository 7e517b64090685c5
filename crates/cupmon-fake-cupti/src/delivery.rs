//! Handing buffers back: asynchronously from a delivery thread when they fill
//! (as CUPTI's own thread does), synchronously inside `cuptiActivityFlushAll`.

use std::sync::Once;
use std::time::Duration;

use cupmon_records::{encode_record, ExternalCorrelationRecord, Record};

use crate::layout;
use crate::state::{fake, lock, Counters, LentBuffer};

/// Starts the delivery thread once (at the first callback registration).
pub(crate) fn start_thread() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        std::thread::Builder::new()
            .name("fake-cupti-delivery".into())
            .spawn(deliver_full_buffers)
            .expect("spawning the fake CUPTI delivery thread");
    });
}

/// Delivers full buffers whose records are all complete, oldest first, forever.
fn deliver_full_buffers() {
    let fake = fake();
    loop {
        {
            let mut buffers = lock(&fake.buffers);
            while !buffers.full.front().is_some_and(LentBuffer::is_complete) {
                buffers = fake
                    .buffers_changed
                    .wait(buffers)
                    .unwrap_or_else(|p| p.into_inner());
            }
        }
        let delay_us = lock(&fake.config).completion_delay_us;
        if delay_us > 0 {
            std::thread::sleep(Duration::from_micros(delay_us));
        }
        let _delivery = lock(&fake.delivery);
        let next = {
            let mut buffers = lock(&fake.buffers);
            let ready = buffers.full.front().is_some_and(LentBuffer::is_complete);
            if ready {
                buffers.full.pop_front()
            } else {
                None
            }
        };
        if let Some(buffer) = next {
            deliver(buffer);
        }
    }
}

/// `cuptiActivityFlushAll`: delivers, in order, every buffer whose records are
/// complete (all of them when `forced`, pending kernels keeping `end = 0`), the
/// partly filled open buffer included. With `give_back_empty`, an open buffer
/// without records is returned too (used by reset, so the client gets all its
/// memory back).
pub(crate) fn flush(forced: bool, give_back_empty: bool) {
    let fake = fake();
    let _delivery = lock(&fake.delivery);
    let ready = {
        let mut buffers = lock(&fake.buffers);
        let mut ready = Vec::new();
        while buffers
            .full
            .front()
            .is_some_and(|b| forced || b.is_complete())
        {
            ready.extend(buffers.full.pop_front());
        }
        if buffers.full.is_empty() {
            let take = |open: &mut LentBuffer| {
                (give_back_empty || !open.records.is_empty()) && (forced || open.is_complete())
            };
            ready.extend(buffers.open.take_if(take));
        }
        ready
    };
    for buffer in ready {
        deliver(buffer);
    }
}

/// Encodes `buffer`'s records into the client's memory and calls its completion
/// callback. Called with only the `delivery` lock held.
fn deliver(buffer: LentBuffer) {
    let fake = fake();
    let Some(callbacks) = lock(&fake.config).callbacks else {
        return;
    };
    // SAFETY: the client lent `size` bytes at `ptr` through its request callback
    // and they are the fake's until the completion callback below.
    let memory = unsafe { std::slice::from_raw_parts_mut(buffer.ptr as *mut u8, buffer.size) };
    let mut offset = 0;
    for held in &buffer.records {
        offset += encode_record(&held.record, layout(), &mut memory[offset..])
            .expect("room was checked when appending");
    }
    debug_assert_eq!(offset, buffer.used);
    Counters::bump(&fake.counters.buffers_delivered);
    // SAFETY: the client's completion callback, called as CUPTI calls it (global
    // buffer: null context, stream 0), with the buffer it lent.
    unsafe {
        (callbacks.complete)(
            std::ptr::null_mut(),
            0,
            buffer.ptr as *mut u8,
            buffer.size,
            buffer.used,
        )
    };
}

/// Passes a buffer the fake owns to the completion callback (what cupmon sees
/// when another client's buffers reach it), then frees it.
pub(crate) fn deliver_foreign_buffer() -> bool {
    let fake = fake();
    let _delivery = lock(&fake.delivery);
    let Some(callbacks) = lock(&fake.config).callbacks else {
        return false;
    };
    let mut memory = vec![0u64; 128];
    let bytes = {
        // SAFETY: viewing the u64s as bytes: same memory, u8 has no alignment or
        // validity requirements.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(memory.as_mut_ptr().cast::<u8>(), memory.len() * 8)
        };
        let record = Record::ExternalCorrelation(ExternalCorrelationRecord {
            kind: cupmon_records::ActivityKind::EXTERNAL_CORRELATION,
            external_kind: 3,
            external_id: 7,
            correlation_id: 1,
        });
        encode_record(&record, layout(), bytes).expect("1 KiB holds one record")
    };
    Counters::bump(&fake.counters.foreign_buffers_delivered);
    // SAFETY: a valid 1 KiB buffer owned by the fake; a correct client neither
    // frees nor keeps it.
    unsafe {
        (callbacks.complete)(
            std::ptr::null_mut(),
            0,
            memory.as_mut_ptr().cast(),
            memory.len() * 8,
            bytes,
        )
    };
    drop(memory);
    true
}
