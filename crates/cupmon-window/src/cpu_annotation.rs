//! Annotations on the CPU thread that made them: NVTX ranges (push/pop, start/end,
//! any domain) and marks, as a window carries them in its `cpu_annotations` member.
//! Traces draw a range as a `user_annotation` slice on its thread's track (as Kineto
//! draws `record_function`) and a mark as a thread-scoped instant.
//!
//! A member of its own rather than window `events`: PyTorch's merge ignores unknown
//! members, but it reads `end_ns` of every event of an unknown kind (the trailing
//! buffer request's test), so ranges among the events would change its output.

use serde::{Deserialize, Serialize};

/// A range, or a mark (an instant: `end_ns == start_ns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuAnnotationKind {
    Range,
    Mark,
}

/// One NVTX range or mark of a window. Times are Unix ns (the clock of the window's
/// API records).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuAnnotation {
    #[serde(rename = "type")]
    pub kind: CpuAnnotationKind,
    pub name: String,
    pub process_id: u32,
    /// The OS thread id, as API records carry it.
    pub thread_id: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Ranges open on the thread below this one when it was opened (any domain).
    pub depth: u32,
    /// The NVTX domain's name; `None` for NVTX's default domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The event attributes' category: its registered name (`nvtxNameCategory*`),
    /// else its number; `None` for category 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The event attributes' ARGB color as `#rrggbb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// The CUSTOM1 external id pushed for the range (its `gpu_user_annotation` spans'
    /// `External id`); `None` for marks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<u64>,
    /// Opened before the window started: drawn from the window's start.
    #[serde(default, skip_serializing_if = "is_false")]
    pub open_at_window_start: bool,
    /// Still open when the window ended: drawn to the window's end.
    #[serde(default, skip_serializing_if = "is_false")]
    pub open_at_window_end: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// `argb`'s color as `#rrggbb` (the alpha byte dropped).
pub fn rgb_hex(argb: u32) -> String {
    format!("#{:06x}", argb & 0x00ff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colors_drop_alpha() {
        assert_eq!(rgb_hex(0xff00ff00), "#00ff00");
        assert_eq!(rgb_hex(0x80123456), "#123456");
    }

    #[test]
    fn a_range_reads_back_as_written() {
        let range = CpuAnnotation {
            kind: CpuAnnotationKind::Range,
            name: "forward".into(),
            process_id: 1,
            thread_id: 2,
            start_ns: 10,
            end_ns: 20,
            depth: 1,
            domain: Some("mylib".into()),
            category: Some("3".into()),
            color: Some("#00ff00".into()),
            external_id: Some(7),
            open_at_window_start: false,
            open_at_window_end: true,
        };
        let json = serde_json::to_string(&range).expect("serialise");
        assert_eq!(
            json,
            r##"{"type":"range","name":"forward","process_id":1,"thread_id":2,"start_ns":10,"end_ns":20,"depth":1,"domain":"mylib","category":"3","color":"#00ff00","external_id":7,"open_at_window_end":true}"##
        );
        assert_eq!(
            serde_json::from_str::<CpuAnnotation>(&json).expect("read"),
            range
        );
    }
}
