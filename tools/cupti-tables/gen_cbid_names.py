#!/usr/bin/env python3
"""Regenerate crates/cupmon-trace/src/cbid_names.rs from the newest CUPTI's headers.

usage: gen_cbid_names.py [--version 13.5.25] [--include DIR] [--reference JSON] [--out FILE]

Reads `cupti_runtime_cbid.h` and `cupti_driver_cbid.h` (downloaded with the wheel into a
temp dir unless --include names a directory that has them; NVIDIA's headers are never
copied into the repo), applies the seed's `_vNNNN` stripping rule, lets the LAST declared
name win for a duplicate value (as iterating the seed's IntEnum `__members__` does) and
writes the file in the format cbid_names_from_json.py made.

CUPTI 13.5 renamed the ids of removed APIs to placeholders (`cuda25`, `cuda248`, ...):
those keep the name the reference table (CUPTI 13.0's enums,
../shared/reference/cupti_cbid_names.json) gives them, since older CUPTIs still write
those ids; placeholder ids the reference does not name are left out (cupmon then shows
`cbid_N`). Every reference id is checked: a real rename in the newest header (13.5:
driver 783 `cuStreamCreateForCaptureToCig` -> `cuStreamBeginCaptureToCig`) takes the new
name and is listed; an id that lost its name makes the script exit non-zero.
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_layouts  # noqa: E402  (wheel download and header extraction)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def strip(name):
    """The seed's rule: drop a trailing `_v<digits>`."""
    if "_v" in name:
        prefix, v = name.rsplit("_v", 1)
        if v.isdigit():
            return prefix
    return name


def read_enum(path, prefix):
    """(name, value) in declaration order, INVALID/SIZE/FORCE_INT left out."""
    out = []
    for m in re.finditer(r"^\s*%s(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)" % prefix, open(path).read(), re.M):
        name, value = m.group(1), int(m.group(2), 0)
        if name not in ("INVALID", "SIZE", "FORCE_INT"):
            out.append((name, value))
    return out


def table(entries):
    names = {}
    for name, value in entries:  # the last declared name of a value wins
        names[value] = strip(name)
    return names


def render(api_version, runtime, driver):
    out = ["// @generated from CUPTI %d's callback-id enums; do not edit." % api_version,
           "// Names have the seed's `_vNNNN` suffix rule applied.", ""]
    for dom, names in (("RUNTIME", runtime), ("DRIVER", driver)):
        out.append("pub(crate) static %s: &[(u32, &str)] = &[" % dom)
        out += ['    (%d, "%s"),' % (v, names[v]) for v in sorted(names)]
        out += ["];", ""]
    return "\n".join(out)


def is_placeholder(value, name):
    return name == "cuda%d" % value


def merge(newest, reference):
    """Newest names, placeholders replaced by the reference's name or dropped."""
    out = {}
    for value, name in newest.items():
        if not is_placeholder(value, name):
            out[value] = name
        elif value in reference:
            out[value] = reference[value]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default=gen_layouts.VERSIONS[-1], help="CUPTI wheel version (default: newest)")
    ap.add_argument("--include", help="a directory with CUPTI's headers (skips the download)")
    ap.add_argument("--reference", default=os.path.join(REPO, "..", "shared", "reference", "cupti_cbid_names.json"))
    ap.add_argument("--out", default=os.path.join(REPO, "crates", "cupmon-trace", "src", "cbid_names.rs"))
    a = ap.parse_args()
    include = a.include
    if not include:
        work = tempfile.mkdtemp(prefix="cupti-cbid-")
        package = "nvidia-cuda-cupti-cu12" if a.version.startswith("12.") else "nvidia-cuda-cupti"
        include = os.path.join(work, "include")
        gen_layouts.extract_include(gen_layouts.pip_download(package, a.version, work), include)
    api = int(re.search(r"#define CUPTI_API_VERSION (\d+)",
                        open(os.path.join(include, "cupti_version.h")).read()).group(1))
    import json
    ref = json.load(open(a.reference))
    ref_runtime, ref_driver = table(ref["runtime"]), table(ref["driver"])
    runtime = merge(table(read_enum(os.path.join(include, "cupti_runtime_cbid.h"), "CUPTI_RUNTIME_TRACE_CBID_")),
                    ref_runtime)
    driver = merge(table(read_enum(os.path.join(include, "cupti_driver_cbid.h"), "CUPTI_DRIVER_TRACE_CBID_")),
                   ref_driver)
    open(a.out, "w").write(render(api, runtime, driver))
    print(f"{a.out}: CUPTI {api}, {len(runtime)} runtime and {len(driver)} driver ids", file=sys.stderr)

    renamed, lost = [], []
    for dom, names, ref_names in (("runtime", runtime, ref_runtime), ("driver", driver, ref_driver)):
        for value, name in ref_names.items():
            if value not in names:
                lost.append(f"{dom} {value}: {name} has no name any more")
            elif names[value] != name:
                renamed.append(f"{dom} {value}: {name} -> {names[value]}")
    print(f"reference CUPTI {ref['cupti_api_version']}: {len(ref_runtime) + len(ref_driver)} ids checked, "
          f"{len(renamed)} renamed, {len(lost)} lost", file=sys.stderr)
    for line in renamed + lost:
        print("  " + line, file=sys.stderr)
    sys.exit(1 if lost else 0)


if __name__ == "__main__":
    main()
