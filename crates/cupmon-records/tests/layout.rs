//! The families declared under `src/kinds/` against the numbers gcc measured on CUPTI's
//! own headers (tools/cupti-tables/cupti_layouts.json, made by gen_layouts.py): every
//! wheel version, every family, struct name, size and the offset and size of every field.

use cupmon_records::kinds::FAMILIES;
use cupmon_records::layout::GENERATIONS;
use cupmon_records::{ActivityKind, CuptiVersion, Layout};
use serde_json::Value;

const MEASURED: &str = include_str!("../../../tools/cupti-tables/cupti_layouts.json");

#[test]
fn families_match_the_measured_headers_of_every_cupti_wheel() {
    let measured: serde_json::Map<String, Value> = serde_json::from_str(MEASURED).unwrap();
    assert_eq!(
        measured.len(),
        32,
        "every CUPTI wheel from 12.0.90 to 13.5.25"
    );
    for (wheel, m) in &measured {
        let api = m["api_version"].as_u64().unwrap() as u32;
        let layout = Layout::for_api_version(api).unwrap_or_else(|e| panic!("{wheel}: {e}"));
        assert!(
            layout.generation().measured.contains(&wheel.as_str()),
            "{wheel} in {}",
            layout.generation().name
        );
        let keys: Vec<&str> = m
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "api_version")
            .collect();
        assert_eq!(
            keys.len(),
            FAMILIES.len(),
            "{wheel}: a family per measured kind"
        );
        for family in FAMILIES {
            let want = &m[family.key];
            assert!(want.is_object(), "{wheel}: {} not measured", family.key);
            let kind = family.kinds[0];
            let s = layout.struct_layout(kind).unwrap();
            assert_eq!(want["struct"], s.name, "{wheel} {}", family.key);
            assert_eq!(want["size"], s.size, "{wheel} {}", family.key);
            let mut fields: Vec<(String, u64, u64)> = layout
                .fields(kind)
                .map(|f| (f.c_name.to_owned(), f.offset as u64, f.size as u64))
                .collect();
            let mut want_fields: Vec<(String, u64, u64)> = want["fields"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(n, v)| (n.clone(), v[0].as_u64().unwrap(), v[1].as_u64().unwrap()))
                // isDeviceLaunched of memcpy/memset took over padding in 13.0: the
                // headers measured before 13.0 do not have it.
                .collect();
            fields.sort();
            want_fields.sort();
            assert_eq!(fields, want_fields, "{wheel} {}", family.key);
        }
    }
}

/// The sizes, pinned by hand per version (struct version / size) so a change shows in review.
#[test]
fn pinned_struct_sizes_per_version() {
    // (api, kernel, memcpy, memset, api, ext corr, overhead, cuda event, sync, memory2, pool)
    let kinds = [
        ActivityKind::CONCURRENT_KERNEL,
        ActivityKind::MEMCPY,
        ActivityKind::MEMSET,
        ActivityKind::RUNTIME,
        ActivityKind::EXTERNAL_CORRELATION,
        ActivityKind::OVERHEAD,
        ActivityKind::CUDA_EVENT,
        ActivityKind::SYNCHRONIZATION,
        ActivityKind::MEMORY2,
        ActivityKind::MEMORY_POOL,
    ];
    let pins: [(u32, [usize; 10]); 15] = [
        (18, [208, 88, 88, 40, 24, 40, 24, 40, 120, 72]), // 12.0, 12.1
        (20, [208, 88, 88, 40, 24, 40, 24, 40, 120, 72]), // 12.2
        (21, [208, 88, 88, 40, 24, 48, 24, 40, 120, 72]), // 12.3: Overhead2
        (22, [208, 88, 88, 40, 24, 56, 24, 40, 120, 72]), // 12.4: Overhead3
        (23, [208, 88, 88, 40, 24, 56, 24, 40, 120, 72]), // 12.5
        (24, [208, 88, 88, 40, 24, 56, 24, 40, 128, 72]), // 12.6: Memory4
        (26, [208, 96, 88, 40, 24, 56, 56, 56, 128, 72]), // 12.8: Memcpy6, CudaEvent2, Sync2
        (27, [208, 96, 88, 40, 24, 56, 56, 56, 128, 72]), // 12.9.19
        (28, [208, 96, 88, 40, 24, 56, 56, 56, 128, 72]), // 12.9.79
        (130_001, [216, 96, 88, 40, 24, 56, 56, 56, 128, 80]), // 13.0: Kernel10, MemoryPool3
        (130_101, [224, 96, 88, 40, 24, 56, 56, 56, 128, 80]), // 13.1: Kernel11
        (130_202, [224, 96, 88, 40, 24, 56, 56, 56, 128, 80]), // 13.2
        (130_301, [232, 96, 88, 40, 24, 56, 56, 56, 128, 80]), // 13.3: Kernel12
        (130_401, [248, 112, 104, 40, 24, 56, 56, 56, 128, 80]), // 13.4: Kernel13, Memcpy7, Memset5
        (130_500, [248, 112, 104, 40, 24, 56, 80, 56, 128, 80]), // 13.5: CudaEvent3
    ];
    for (api, sizes) in pins {
        let layout = Layout::for_api_version(api).unwrap();
        for (kind, size) in kinds.iter().zip(sizes) {
            assert_eq!(
                layout.struct_layout(*kind).unwrap().size,
                size,
                "API {api} {kind}"
            );
            assert_eq!(layout.record_size(kind.as_u32()), Some(size));
        }
        // KERNEL and CONCURRENT_KERNEL, RUNTIME and DRIVER share structs.
        assert_eq!(layout.record_size(3), layout.record_size(10));
        assert_eq!(layout.record_size(4), layout.record_size(5));
        assert_eq!(layout.record_size(45), None, "MEMORY (v1) is not decoded");
    }
}

#[test]
fn unknown_versions_are_refused_not_guessed() {
    for api in [0, 17, 25, 29, 129_999, 130_600, 140_000] {
        let err = Layout::for_api_version(api).unwrap_err();
        assert!(
            err.to_string().contains("has no record layout table"),
            "{err}"
        );
    }
    assert_eq!(Layout::newest().version(), CuptiVersion::from_api(130_500));
    assert_eq!(Layout::cupti_13_0().generation().name, "13.0");
}

#[test]
fn every_struct_size_is_8_byte_aligned() {
    for family in FAMILIES {
        for s in family.structs {
            assert_eq!(s.size % 8, 0, "{} {}", family.key, s.name);
        }
    }
    assert!(!GENERATIONS.is_empty());
}
