//! The families declared under `src/kinds/` against the numbers gcc measured on CUPTI's
//! own headers (tools/cupti-tables/cupti_layouts.json, made by gen_layouts.py): every
//! wheel version, every family, struct name, size and the offset and size of every field,
//! and the struct the header's `CUpti_ActivityKind` comment names for each kind.

use std::collections::BTreeMap;

use cupmon_records::kinds::{KindSpec, FAMILIES};
use cupmon_records::layout::GENERATIONS;
use cupmon_records::{ActivityKind, CuptiVersion, Layout};
use serde_json::Value;

const MEASURED: &str = include_str!("../../../tools/cupti-tables/cupti_layouts.json");

/// Every difference between cupmon's declaration of `family` for `layout` and what
/// the headers of `wheel` measured (`want`), one line each.
fn differences(wheel: &str, layout: &Layout, family: &KindSpec, want: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let kind = family.kinds[0];
    let key = family.key;
    let Some(s) = layout.struct_layout(kind) else {
        return vec![format!(
            "{wheel} {key}: cupmon has no struct for this version"
        )];
    };
    if want["struct"] != s.name || want["size"] != s.size {
        out.push(format!(
            "{wheel} {key}: cupmon {} / {} bytes, headers {} / {} bytes",
            s.name, s.size, want["struct"], want["size"]
        ));
    }
    // The kind's own documentation in the header names the struct CUPTI writes.
    for (c_kind, named) in want["documented"].as_object().into_iter().flatten() {
        if named != &want["struct"] {
            out.push(format!(
                "{wheel} {key}: CUPTI_ACTIVITY_KIND_{c_kind} is documented as {named}, \
                 the newest declared struct is {}",
                want["struct"]
            ));
        }
    }
    let ours: BTreeMap<&str, (u64, u64)> = layout
        .fields(kind)
        .map(|f| (f.c_name, (f.offset as u64, f.size as u64)))
        .collect();
    let theirs: BTreeMap<&str, (u64, u64)> = want["fields"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(n, v)| (n.as_str(), (v[0].as_u64().unwrap(), v[1].as_u64().unwrap())))
        .collect();
    for (name, (offset, size)) in &ours {
        match theirs.get(name) {
            None => out.push(format!(
                "{wheel} {key}.{name}: cupmon reads it at {offset} ({size} bytes), \
                 the header's struct has no such field"
            )),
            Some(&(o, n)) if (o, n) != (*offset, *size) => out.push(format!(
                "{wheel} {key}.{name}: cupmon offset {offset} size {size}, \
                 header offset {o} size {n}"
            )),
            Some(_) => {}
        }
    }
    for (name, (o, n)) in &theirs {
        if !ours.contains_key(name) {
            out.push(format!(
                "{wheel} {key}.{name}: header offset {o} size {n}, not declared for this \
                 version in cupmon"
            ));
        }
    }
    out
}

#[test]
fn families_match_the_measured_headers_of_every_cupti_wheel() {
    let measured: serde_json::Map<String, Value> = serde_json::from_str(MEASURED).unwrap();
    assert_eq!(
        measured.len(),
        32,
        "every CUPTI wheel from 12.0.90 to 13.5.25"
    );
    let mut diffs = Vec::new();
    for (wheel, m) in &measured {
        let api = m["api_version"].as_u64().unwrap() as u32;
        let layout = match Layout::for_api_version(api) {
            Ok(layout) => layout,
            Err(e) => {
                diffs.push(format!("{wheel}: {e}"));
                continue;
            }
        };
        if !layout.generation().measured.contains(&wheel.as_str()) {
            diffs.push(format!(
                "{wheel}: not listed as measured in generation {}",
                layout.generation().name
            ));
        }
        let keys = m
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "api_version");
        if keys.count() != FAMILIES.len() {
            diffs.push(format!(
                "{wheel}: not one measured family per cupmon family"
            ));
        }
        for family in FAMILIES {
            let want = &m[family.key];
            if !want.is_object() {
                diffs.push(format!("{wheel}: {} not measured", family.key));
                continue;
            }
            diffs.extend(differences(wheel, &layout, family, want));
        }
    }
    assert!(
        diffs.is_empty(),
        "cupmon's layouts differ from CUPTI's headers ({} differences):\n{}",
        diffs.len(),
        diffs.join("\n")
    );
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
        let text = err.to_string();
        assert!(text.contains(&api.to_string()), "{text}");
        assert!(
            text.ends_with(
                "has no record layout in this cupmon: it decodes CUPTI 12.0-13.5 \
                 (cuptiGetVersion API versions 18-24, 26-28, 130000-130599)"
            ),
            "{text}"
        );
    }
    assert!(Layout::for_api_version(130_600)
        .unwrap_err()
        .to_string()
        .starts_with("CUPTI 13.6 (API version 130600) has no record layout"),);
    assert!(Layout::for_api_version(17)
        .unwrap_err()
        .to_string()
        .starts_with("CUPTI API version 17 has no record layout"));
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
