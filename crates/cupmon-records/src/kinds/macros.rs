//! `activity_record!`: one declaration per record family (struct, CUPTI's layouts per
//! version, fields) from which the record type, its decoder, its encoder and its
//! [`KindSpec`](super::KindSpec) are generated.

/// Declares a record family. Syntax (see `memcpy.rs`):
///
/// ```text
/// activity_record! {
///     /// doc
///     MemcpyRecord = "memcpy", kinds [MEMCPY],
///     structs [18 => "CUpti_ActivityMemcpy5" / 88, 26 => "CUpti_ActivityMemcpy6" / 96],
///     timestamps [start, end],
///     fields {
///         kind: ActivityKind = "kind" @ 0,
///         /// doc
///         copy_kind: u8 = "copyKind" @ 4,
///         is_device_launched: u8 = "isDeviceLaunched" @ 84 since 130_000,
///     }
/// }
/// ```
///
/// A field that ends past the struct of a record's CUPTI version, or whose `since`
/// is newer than it, reads as 0 and is not written.
macro_rules! activity_record {
    (
        $(#[$doc:meta])*
        $name:ident = $key:literal, kinds [$($kind:ident),+ $(,)?],
        structs [$($since:literal => $cname:literal / $size:literal),+ $(,)?],
        timestamps [$($ts:ident),* $(,)?],
        fields {
            $(
                $(#[$fdoc:meta])*
                $field:ident: $ty:ty = $c:literal @ $off:literal $(since $fsince:literal)?,
            )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct $name {
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        /// Byte offsets of the record's fields.
        #[allow(non_upper_case_globals, dead_code)]
        mod offsets {
            $(pub const $field: usize = $off;)*
        }

        impl $name {
            /// The family's layouts and fields.
            pub const SPEC: $crate::kinds::KindSpec = $crate::kinds::KindSpec {
                key: $key,
                kinds: &[$($crate::ActivityKind::$kind),+],
                structs: &[$($crate::kinds::StructVersion {
                    since_api: $since, name: $cname, size: $size,
                }),+],
                fields: &[$($crate::kinds::Field {
                    name: stringify!($field),
                    c_name: $c,
                    offset: $off,
                    size: <$ty as $crate::kinds::Scalar>::SIZE,
                    since_api: activity_record!(@since $($fsince)?),
                }),*],
                timestamps: &[$(offsets::$ts),*],
            };

            /// Decode one record: `rec` is exactly the struct API version `api` writes.
            /// `None` when `rec` is shorter than the oldest struct of the family.
            #[inline(always)]
            pub fn decode(rec: &[u8], api: u32) -> Option<Self> {
                const MIN: usize = [$($size),+][0];
                if rec.len() < MIN {
                    return None;
                }
                Some(Self {
                    $($field: if $crate::kinds::since(api, activity_record!(@since $($fsince)?)) {
                        <$ty as $crate::kinds::Scalar>::read(rec, $off)
                    } else {
                        Default::default()
                    },)*
                })
            }

            /// Whether a timestamp of the record is on another clock than Unix ns.
            #[inline(always)]
            pub fn has_foreign_timestamp(&self) -> bool {
                // `|` rather than `||`: a few compares, no branch per timestamp.
                false $(| $crate::clock::is_foreign(self.$ts))*
            }

            /// Replace every timestamp (CUPTI-clock field) by `f` of it; 0 stays 0 (unknown).
            #[allow(unused_variables)]
            pub fn map_timestamps(&mut self, f: &dyn Fn(u64) -> u64) {
                $(if self.$ts != 0 {
                    self.$ts = f(self.$ts);
                })*
            }

            /// Set the field at byte `offset` to the value whose low bytes are `v`'s
            /// (what decoding gives after `v`'s low bytes were written there); an
            /// offset where no field starts changes nothing.
            #[inline]
            pub(crate) fn set_bits(&mut self, offset: usize, v: u64) {
                match offset {
                    $($off => self.$field = <$ty as $crate::kinds::Scalar>::from_bits(v),)*
                    _ => {}
                }
            }

            /// Write every field into `b` (zeroed, exactly the struct's size for `api`).
            pub fn encode(&self, b: &mut [u8], api: u32) {
                $(if $crate::kinds::since(api, activity_record!(@since $($fsince)?)) {
                    $crate::kinds::Scalar::write(self.$field, b, $off);
                })*
            }
        }
    };
    (@since) => { 0 };
    (@since $v:literal) => { $v };
}
