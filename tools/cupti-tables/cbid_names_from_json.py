#!/usr/bin/env python3
"""Bootstrap generator: cbid_names.rs from the reference's cupti_cbid_names.json (CUPTI 13.0).
Superseded by gen_cbid_names.py, which reads CUPTI's headers directly."""
import json, sys

def strip(name):
    if "_v" in name:
        prefix, v = name.rsplit("_v", 1)
        if v.isdigit():
            return prefix
    return name

t = json.load(open(sys.argv[1]))
out = ["// @generated from CUPTI %d's callback-id enums; do not edit." % t["cupti_api_version"],
       "// Names have the seed's `_vNNNN` suffix rule applied.", ""]
for dom in ("runtime", "driver"):
    names = {}
    for n, v in t[dom]:
        names[v] = strip(n)
    out.append("pub(crate) static %s: &[(u32, &str)] = &[" % dom.upper())
    for v in sorted(names):
        out.append('    (%d, "%s"),' % (v, names[v]))
    out.append("];")
    out.append("")
open(sys.argv[2], "w").write("\n".join(out))
