//! The communicator and message size of a collective, where the CPU trace has them:
//! PyTorch's ProcessGroupNCCL wraps each collective in a `record_param_comms` CPU op
//! whose args name it (`Collective name`, `In msg nelems`, `dtype`, `Process Group
//! Name`, ...), and Kineto copies those args onto every kernel launched under that op
//! (`libkineto/src/output_json.cpp`, "Populate NCCL collective metadata from CPU to
//! GPU"). The complete trace does the same for the kernels it links to such an op by
//! `External id`, in Kineto's order and on Kineto's conditions, and adds the message
//! sizes in bytes (elements times the dtype's size), which Kineto leaves to the reader.

/// The CPU op PyTorch records collectives' metadata on (`at::kParamCommsCallName`).
pub(crate) const OP_NAME: &str = "record_param_comms";

/// Kineto's keys, in the order it writes them.
const KEYS: [&str; 14] = [
    "Collective name",
    "In msg nelems",
    "Out msg nelems",
    "Group size",
    "dtype",
    "Input Tensors start",
    "Output Tensors start",
    "In split size",
    "Out split size",
    "Process Group Name",
    "Process Group Description",
    "Process Group Ranks",
    "Dst Rank",
    "Src Rank",
];
const COLLECTIVE: usize = 0;
const IN_NELEMS: usize = 1;
const OUT_NELEMS: usize = 2;
const GROUP_SIZE: usize = 3;
const DTYPE: usize = 4;
const IN_TENSORS: usize = 5;
const OUT_TENSORS: usize = 6;
const IN_SPLIT: usize = 7;
const OUT_SPLIT: usize = 8;
const PG_NAME: usize = 9;
const PG_DESC: usize = 10;
const PG_RANKS: usize = 11;
const DST: usize = 12;
const SRC: usize = 13;

/// The collective metadata of one `record_param_comms` op: each key's value as JSON
/// text, as the CPU trace has it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ParamComms {
    values: [Option<String>; KEYS.len()],
}

impl ParamComms {
    /// Which of Kineto's keys `key` is.
    pub fn key_index(key: &[u8]) -> Option<usize> {
        KEYS.iter().position(|k| k.as_bytes() == key)
    }

    /// Set key `index` to the JSON text `raw` (a later value of a repeated key wins,
    /// as in Python's dict).
    pub fn set(&mut self, index: usize, raw: &[u8]) {
        self.values[index] = Some(String::from_utf8_lossy(raw).into_owned());
    }

    fn get(&self, index: usize) -> Option<&str> {
        // Kineto's getMetadataValue gives "" for a missing key and tests `empty()`.
        self.values[index].as_deref().filter(|v| !v.is_empty())
    }

    /// The args Kineto gives a kernel launched under this op (key, JSON text), then
    /// cupmon's `in_msg_bytes` and `out_msg_bytes` where the dtype's size is known.
    pub fn kernel_args(&self) -> Vec<(&'static str, String)> {
        let mut args = Vec::new();
        let mut push = |index: usize| {
            if let Some(v) = self.get(index) {
                args.push((KEYS[index], v.to_owned()));
            }
        };
        let head = [COLLECTIVE, IN_NELEMS, OUT_NELEMS, GROUP_SIZE, DTYPE];
        if head.iter().all(|&i| self.get(i).is_some()) {
            head.into_iter().for_each(&mut push);
        }
        push(IN_TENSORS);
        push(OUT_TENSORS);
        if self.get(IN_SPLIT).is_some() && self.get(OUT_SPLIT).is_some() {
            push(IN_SPLIT);
            push(OUT_SPLIT);
        }
        push(PG_NAME);
        if self.get(PG_NAME).is_some() {
            push(PG_DESC);
        }
        push(PG_RANKS);
        push(DST);
        push(SRC);
        if let Some(size) = self.get(DTYPE).and_then(|d| element_size(unquote(d)?)) {
            for (key, index) in [("in_msg_bytes", IN_NELEMS), ("out_msg_bytes", OUT_NELEMS)] {
                let nelems = self.get(index).and_then(|n| n.trim().parse::<u64>().ok());
                if let Some(bytes) = nelems.and_then(|n| n.checked_mul(size)) {
                    args.push((key, bytes.to_string()));
                }
            }
        }
        args
    }

    /// Whether the op carries Kineto's `dtype` (the tensor's type, more exact than the
    /// kernel name's).
    pub fn has_dtype(&self) -> bool {
        self.get(DTYPE).is_some()
    }
}

/// The text of a JSON string without escapes.
fn unquote(json: &str) -> Option<&str> {
    let s = json.strip_prefix('"')?.strip_suffix('"')?;
    (!s.contains('\\')).then_some(s)
}

/// Bytes per element of a `c10::ScalarType`, by the name PyTorch records (`Float`,
/// `BFloat16`).
fn element_size(scalar_type: &str) -> Option<u64> {
    Some(match scalar_type {
        "Byte" | "Char" | "Bool" | "QInt8" | "QUInt8" | "QUInt4x2" | "QUInt2x4" => 1,
        "Float8_e5m2" | "Float8_e4m3fn" | "Float8_e5m2fnuz" | "Float8_e4m3fnuz" => 1,
        "Float8_e8m0fnu" => 1,
        "Short" | "Half" | "BFloat16" | "UInt16" => 2,
        "Int" | "Float" | "ComplexHalf" | "QInt32" | "UInt32" => 4,
        "Long" | "Double" | "ComplexFloat" | "UInt64" => 8,
        "ComplexDouble" => 16,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comms(pairs: &[(&str, &str)]) -> ParamComms {
        let mut c = ParamComms::default();
        for (k, v) in pairs {
            c.set(ParamComms::key_index(k.as_bytes()).unwrap(), v.as_bytes());
        }
        c
    }

    #[test]
    fn kinetos_order_and_conditions_then_the_sizes_in_bytes() {
        let c = comms(&[
            ("Process Group Description", "\"default_pg\""),
            ("dtype", "\"BFloat16\""),
            ("Collective name", "\"allreduce\""),
            ("In msg nelems", "1048576"),
            ("Out msg nelems", "1048576"),
            ("Group size", "8"),
            ("In split size", "[]"),
            ("Out split size", "[]"),
            ("Process Group Name", "\"0\""),
            ("Process Group Ranks", "\"[0, 1, 2, 3, 4, 5, 6, 7]\""),
        ]);
        let keys: Vec<&str> = c.kernel_args().iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "Collective name",
                "In msg nelems",
                "Out msg nelems",
                "Group size",
                "dtype",
                "In split size",
                "Out split size",
                "Process Group Name",
                "Process Group Description",
                "Process Group Ranks",
                "in_msg_bytes",
                "out_msg_bytes",
            ]
        );
        let args = c.kernel_args();
        assert_eq!(args[10], ("in_msg_bytes", "2097152".to_owned()));
        assert_eq!(args[4], ("dtype", "\"BFloat16\"".to_owned()));
    }

    #[test]
    fn without_the_whole_head_kineto_writes_none_of_it() {
        let c = comms(&[
            ("Collective name", "\"send\""),
            ("dtype", "\"Float\""),
            ("Dst Rank", "1"),
            ("Process Group Description", "\"x\""),
        ]);
        // No nelems: no head, no bytes; no PG name: no description.
        assert_eq!(c.kernel_args(), [("Dst Rank", "1".to_owned())]);
        assert!(comms(&[("dtype", "\"Float\"")]).has_dtype());
        assert!(!comms(&[("dtype", "")]).has_dtype());
    }

    #[test]
    fn bytes_need_a_known_dtype_and_integer_counts() {
        let head = |dtype: &'static str, n: &'static str| {
            comms(&[
                ("Collective name", "\"allgather\""),
                ("In msg nelems", n),
                ("Out msg nelems", "8"),
                ("Group size", "2"),
                ("dtype", dtype),
            ])
        };
        let bytes = |c: ParamComms| -> Vec<(&str, String)> {
            c.kernel_args()
                .into_iter()
                .filter(|(k, _)| k.ends_with("bytes"))
                .collect()
        };
        assert_eq!(
            bytes(head("\"Float\"", "4")),
            [
                ("in_msg_bytes", "16".into()),
                ("out_msg_bytes", "32".into())
            ]
        );
        assert_eq!(bytes(head("\"Quaternion\"", "4")), []);
        assert_eq!(
            bytes(head("\"Float\"", "4.5")),
            [("out_msg_bytes", "32".into())]
        );
    }
}
