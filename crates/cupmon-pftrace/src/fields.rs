//! Field numbers and enum values of Perfetto's trace protos that the writer
//! uses, by message. Copied from `proto/perfetto_trace.proto` (Perfetto's
//! merged public protos); the test below checks every one against that file.

pub(crate) mod trace {
    pub const PACKET: u32 = 1;
}

pub(crate) mod packet {
    pub const TIMESTAMP: u32 = 8;
    pub const CLOCK_SNAPSHOT: u32 = 6;
    pub const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const INTERNED_DATA: u32 = 12;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const TRACE_PACKET_DEFAULTS: u32 = 59;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    pub const CHROME_EVENTS: u32 = 5;
    /// `TracePacket.SequenceFlags`.
    pub const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
    pub const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
}

pub(crate) mod defaults {
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
}

pub(crate) mod clock_snapshot {
    pub const CLOCKS: u32 = 1;
    pub const PRIMARY_TRACE_CLOCK: u32 = 2;
    pub const CLOCK_ID: u32 = 1;
    pub const CLOCK_TIMESTAMP: u32 = 2;
}

pub(crate) mod track_event {
    pub const CATEGORY_IIDS: u32 = 3;
    pub const DEBUG_ANNOTATIONS: u32 = 4;
    pub const TYPE: u32 = 9;
    pub const NAME_IID: u32 = 10;
    pub const TRACK_UUID: u32 = 11;
    pub const CATEGORIES: u32 = 22;
    pub const NAME: u32 = 23;
    pub const COUNTER_VALUE: u32 = 30;
    pub const DOUBLE_COUNTER_VALUE: u32 = 44;
    pub const FLOW_IDS: u32 = 47;
    pub const TERMINATING_FLOW_IDS: u32 = 48;
    /// `TrackEvent.Type`.
    pub const TYPE_SLICE_BEGIN: u64 = 1;
    pub const TYPE_SLICE_END: u64 = 2;
    pub const TYPE_INSTANT: u64 = 3;
    pub const TYPE_COUNTER: u64 = 4;
}

pub(crate) mod interned {
    pub const EVENT_CATEGORIES: u32 = 1;
    pub const EVENT_NAMES: u32 = 2;
    pub const DEBUG_ANNOTATION_NAMES: u32 = 3;
    pub const DEBUG_ANNOTATION_STRING_VALUES: u32 = 29;
    /// `iid` and `name` (`str` in InternedString) of every entry kind above.
    pub const ENTRY_IID: u32 = 1;
    pub const ENTRY_NAME: u32 = 2;
}

pub(crate) mod annotation {
    pub const NAME_IID: u32 = 1;
    pub const BOOL_VALUE: u32 = 2;
    pub const UINT_VALUE: u32 = 3;
    pub const INT_VALUE: u32 = 4;
    pub const DOUBLE_VALUE: u32 = 5;
    pub const STRING_VALUE: u32 = 6;
    pub const NAME: u32 = 10;
    pub const DICT_ENTRIES: u32 = 11;
    pub const ARRAY_VALUES: u32 = 12;
    pub const STRING_VALUE_IID: u32 = 17;
    pub const LEGACY_JSON_VALUE: u32 = 9;
}

/// `ChromeEventBundle` and its `ChromeMetadata`: a JSON trace's top-level
/// members, which trace processor keeps in its metadata table (`cr-NAME`).
pub(crate) mod chrome {
    pub const METADATA: u32 = 2;
    pub const NAME: u32 = 1;
    pub const STRING_VALUE: u32 = 2;
    pub const BOOL_VALUE: u32 = 3;
    pub const INT_VALUE: u32 = 4;
    pub const JSON_VALUE: u32 = 5;
}

pub(crate) mod track_descriptor {
    pub const UUID: u32 = 1;
    pub const NAME: u32 = 2;
    pub const PROCESS: u32 = 3;
    pub const THREAD: u32 = 4;
    pub const PARENT_UUID: u32 = 5;
    pub const COUNTER: u32 = 8;
    pub const SIBLING_ORDER_RANK: u32 = 12;
    pub const SIBLING_MERGE_BEHAVIOR: u32 = 15;
    pub const PROCESS_ORDERING: u32 = 19;
    pub const THREAD_ORDERING: u32 = 20;
    pub const SIBLING_MERGE_BEHAVIOR_NONE: u64 = 2;
    pub const PROCESS_ORDERING_EXPLICIT: u64 = 1;
    pub const THREAD_ORDERING_EXPLICIT: u64 = 1;
}

pub(crate) mod process {
    pub const PID: u32 = 1;
    pub const LEGACY_SORT_INDEX: u32 = 3;
    pub const PROCESS_NAME: u32 = 6;
    pub const PROCESS_LABELS: u32 = 8;
}

pub(crate) mod thread {
    pub const PID: u32 = 1;
    pub const TID: u32 = 2;
    pub const LEGACY_SORT_INDEX: u32 = 3;
    pub const THREAD_NAME: u32 = 5;
}

pub(crate) mod counter {
    pub const UNIT: u32 = 3;
    pub const UNIT_NAME: u32 = 6;
    /// `CounterDescriptor.Unit`.
    pub const UNIT_TIME_NS: u64 = 1;
    pub const UNIT_COUNT: u64 = 2;
    pub const UNIT_SIZE_BYTES: u64 = 3;
}

/// `BuiltinClock` values (`protos/perfetto/common/builtin_clock.proto`).
pub(crate) mod clock {
    pub const REALTIME: u32 = 1;
}

#[cfg(test)]
mod tests {
    use prost_reflect::DescriptorPool;

    fn pool() -> DescriptorPool {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/proto");
        protox::Compiler::new([dir])
            .and_then(|mut c| {
                c.open_file("perfetto_trace.proto")?;
                Ok(c.descriptor_pool())
            })
            .expect("vendored perfetto_trace.proto compiles")
    }

    #[test]
    fn field_numbers_match_perfettos_protos() {
        use super::*;
        let fields: &[(&str, &str, u32)] = &[
            ("Trace", "packet", trace::PACKET),
            ("TracePacket", "timestamp", packet::TIMESTAMP),
            ("TracePacket", "clock_snapshot", packet::CLOCK_SNAPSHOT),
            (
                "TracePacket",
                "trusted_packet_sequence_id",
                packet::TRUSTED_PACKET_SEQUENCE_ID,
            ),
            ("TracePacket", "track_event", packet::TRACK_EVENT),
            ("TracePacket", "interned_data", packet::INTERNED_DATA),
            ("TracePacket", "sequence_flags", packet::SEQUENCE_FLAGS),
            (
                "TracePacket",
                "trace_packet_defaults",
                packet::TRACE_PACKET_DEFAULTS,
            ),
            ("TracePacket", "track_descriptor", packet::TRACK_DESCRIPTOR),
            ("TracePacket", "chrome_events", packet::CHROME_EVENTS),
            ("ChromeEventBundle", "metadata", chrome::METADATA),
            ("ChromeMetadata", "name", chrome::NAME),
            ("ChromeMetadata", "string_value", chrome::STRING_VALUE),
            ("ChromeMetadata", "bool_value", chrome::BOOL_VALUE),
            ("ChromeMetadata", "int_value", chrome::INT_VALUE),
            ("ChromeMetadata", "json_value", chrome::JSON_VALUE),
            (
                "DebugAnnotation",
                "legacy_json_value",
                annotation::LEGACY_JSON_VALUE,
            ),
            (
                "TracePacketDefaults",
                "timestamp_clock_id",
                defaults::TIMESTAMP_CLOCK_ID,
            ),
            ("ClockSnapshot", "clocks", clock_snapshot::CLOCKS),
            (
                "ClockSnapshot",
                "primary_trace_clock",
                clock_snapshot::PRIMARY_TRACE_CLOCK,
            ),
            ("ClockSnapshot.Clock", "clock_id", clock_snapshot::CLOCK_ID),
            (
                "ClockSnapshot.Clock",
                "timestamp",
                clock_snapshot::CLOCK_TIMESTAMP,
            ),
            ("TrackEvent", "category_iids", track_event::CATEGORY_IIDS),
            (
                "TrackEvent",
                "debug_annotations",
                track_event::DEBUG_ANNOTATIONS,
            ),
            ("TrackEvent", "type", track_event::TYPE),
            ("TrackEvent", "name_iid", track_event::NAME_IID),
            ("TrackEvent", "track_uuid", track_event::TRACK_UUID),
            ("TrackEvent", "categories", track_event::CATEGORIES),
            ("TrackEvent", "name", track_event::NAME),
            ("TrackEvent", "counter_value", track_event::COUNTER_VALUE),
            (
                "TrackEvent",
                "double_counter_value",
                track_event::DOUBLE_COUNTER_VALUE,
            ),
            ("TrackEvent", "flow_ids", track_event::FLOW_IDS),
            (
                "TrackEvent",
                "terminating_flow_ids",
                track_event::TERMINATING_FLOW_IDS,
            ),
            (
                "InternedData",
                "event_categories",
                interned::EVENT_CATEGORIES,
            ),
            ("InternedData", "event_names", interned::EVENT_NAMES),
            (
                "InternedData",
                "debug_annotation_names",
                interned::DEBUG_ANNOTATION_NAMES,
            ),
            (
                "InternedData",
                "debug_annotation_string_values",
                interned::DEBUG_ANNOTATION_STRING_VALUES,
            ),
            ("EventCategory", "iid", interned::ENTRY_IID),
            ("EventCategory", "name", interned::ENTRY_NAME),
            ("EventName", "iid", interned::ENTRY_IID),
            ("EventName", "name", interned::ENTRY_NAME),
            ("DebugAnnotationName", "iid", interned::ENTRY_IID),
            ("DebugAnnotationName", "name", interned::ENTRY_NAME),
            ("InternedString", "iid", interned::ENTRY_IID),
            ("InternedString", "str", interned::ENTRY_NAME),
            ("DebugAnnotation", "name_iid", annotation::NAME_IID),
            ("DebugAnnotation", "bool_value", annotation::BOOL_VALUE),
            ("DebugAnnotation", "uint_value", annotation::UINT_VALUE),
            ("DebugAnnotation", "int_value", annotation::INT_VALUE),
            ("DebugAnnotation", "double_value", annotation::DOUBLE_VALUE),
            ("DebugAnnotation", "string_value", annotation::STRING_VALUE),
            ("DebugAnnotation", "name", annotation::NAME),
            ("DebugAnnotation", "dict_entries", annotation::DICT_ENTRIES),
            ("DebugAnnotation", "array_values", annotation::ARRAY_VALUES),
            (
                "DebugAnnotation",
                "string_value_iid",
                annotation::STRING_VALUE_IID,
            ),
            ("TrackDescriptor", "uuid", track_descriptor::UUID),
            ("TrackDescriptor", "name", track_descriptor::NAME),
            ("TrackDescriptor", "process", track_descriptor::PROCESS),
            ("TrackDescriptor", "thread", track_descriptor::THREAD),
            (
                "TrackDescriptor",
                "parent_uuid",
                track_descriptor::PARENT_UUID,
            ),
            ("TrackDescriptor", "counter", track_descriptor::COUNTER),
            (
                "TrackDescriptor",
                "sibling_order_rank",
                track_descriptor::SIBLING_ORDER_RANK,
            ),
            (
                "TrackDescriptor",
                "sibling_merge_behavior",
                track_descriptor::SIBLING_MERGE_BEHAVIOR,
            ),
            (
                "TrackDescriptor",
                "process_ordering",
                track_descriptor::PROCESS_ORDERING,
            ),
            (
                "TrackDescriptor",
                "thread_ordering",
                track_descriptor::THREAD_ORDERING,
            ),
            ("ProcessDescriptor", "pid", process::PID),
            (
                "ProcessDescriptor",
                "legacy_sort_index",
                process::LEGACY_SORT_INDEX,
            ),
            ("ProcessDescriptor", "process_name", process::PROCESS_NAME),
            (
                "ProcessDescriptor",
                "process_labels",
                process::PROCESS_LABELS,
            ),
            ("ThreadDescriptor", "pid", thread::PID),
            ("ThreadDescriptor", "tid", thread::TID),
            (
                "ThreadDescriptor",
                "legacy_sort_index",
                thread::LEGACY_SORT_INDEX,
            ),
            ("ThreadDescriptor", "thread_name", thread::THREAD_NAME),
            ("CounterDescriptor", "unit", counter::UNIT),
            ("CounterDescriptor", "unit_name", counter::UNIT_NAME),
        ];
        let pool = pool();
        for &(message, field, number) in fields {
            let full = format!("perfetto.protos.{message}");
            let m = pool
                .get_message_by_name(&full)
                .unwrap_or_else(|| panic!("no message {full}"));
            let f = m
                .get_field_by_name(field)
                .unwrap_or_else(|| panic!("no field {full}.{field}"));
            assert_eq!(f.number(), number, "{full}.{field}");
        }
    }

    #[test]
    fn enum_values_match_perfettos_protos() {
        use super::*;
        let values: &[(&str, &str, u64)] = &[
            (
                "TracePacket.SequenceFlags",
                "SEQ_INCREMENTAL_STATE_CLEARED",
                packet::SEQ_INCREMENTAL_STATE_CLEARED,
            ),
            (
                "TracePacket.SequenceFlags",
                "SEQ_NEEDS_INCREMENTAL_STATE",
                packet::SEQ_NEEDS_INCREMENTAL_STATE,
            ),
            (
                "TrackEvent.Type",
                "TYPE_SLICE_BEGIN",
                track_event::TYPE_SLICE_BEGIN,
            ),
            (
                "TrackEvent.Type",
                "TYPE_SLICE_END",
                track_event::TYPE_SLICE_END,
            ),
            ("TrackEvent.Type", "TYPE_INSTANT", track_event::TYPE_INSTANT),
            ("TrackEvent.Type", "TYPE_COUNTER", track_event::TYPE_COUNTER),
            (
                "TrackDescriptor.SiblingMergeBehavior",
                "SIBLING_MERGE_BEHAVIOR_NONE",
                track_descriptor::SIBLING_MERGE_BEHAVIOR_NONE,
            ),
            (
                "TrackDescriptor.ProcessOrdering",
                "PROCESS_ORDERING_EXPLICIT",
                track_descriptor::PROCESS_ORDERING_EXPLICIT,
            ),
            (
                "TrackDescriptor.ThreadOrdering",
                "THREAD_ORDERING_EXPLICIT",
                track_descriptor::THREAD_ORDERING_EXPLICIT,
            ),
            (
                "BuiltinClock",
                "BUILTIN_CLOCK_REALTIME",
                u64::from(clock::REALTIME),
            ),
            (
                "CounterDescriptor.Unit",
                "UNIT_TIME_NS",
                counter::UNIT_TIME_NS,
            ),
            ("CounterDescriptor.Unit", "UNIT_COUNT", counter::UNIT_COUNT),
            (
                "CounterDescriptor.Unit",
                "UNIT_SIZE_BYTES",
                counter::UNIT_SIZE_BYTES,
            ),
        ];
        let pool = pool();
        for &(enum_name, value, number) in values {
            let full = format!("perfetto.protos.{enum_name}");
            let e = pool
                .get_enum_by_name(&full)
                .unwrap_or_else(|| panic!("no enum {full}"));
            let v = e
                .get_value_by_name(value)
                .unwrap_or_else(|| panic!("no value {full}.{value}"));
            assert_eq!(v.number() as u64, number, "{full}.{value}");
        }
    }
}
