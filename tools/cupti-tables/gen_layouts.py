#!/usr/bin/env python3
"""Measure CUPTI activity-record layouts for every CUPTI version cupmon supports.

usage: gen_layouts.py [--out cupti_layouts.json] [--one-per-minor] [--versions V ...] [--keep DIR]

For each CUPTI version this downloads NVIDIA's wheel (`nvidia-cuda-cupti-cu12` for
12.x, `nvidia-cuda-cupti` for 13.x) and a `cuda.h` from the matching runtime wheel
into a temporary directory (NVIDIA's headers are never copied into the repo), finds
the newest struct version the headers declare for each activity kind cupmon reads
(that is the struct CUPTI writes), compiles a small C probe with gcc and prints the
struct size and the offset/size of every field cupmon reads, as JSON. Each family also
records `documented`: the struct the `CUpti_ActivityKind` enum's own comment names for
each of its kinds ("The corresponding activity record structure is CUpti_ActivityX"), a
second opinion on "newest declared" that the tests require to agree.

The JSON is checked in as tools/cupti-tables/cupti_layouts.json; the tests of
crates/cupmon-records compare the crate's layout tables with it.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

# Every CUPTI wheel on PyPI from 12.0 on (12.7 was never released). All patch releases are
# measured because the CUPTI_API_VERSION that a dump's meta records (cuptiGetVersion) moves
# within a minor in 12.x; `--one-per-minor` takes the last patch of each minor only.
VERSIONS = ["12.0.90", "12.0.146", "12.1.62", "12.1.105", "12.2.60", "12.2.131", "12.2.142",
            "12.3.52", "12.3.101", "12.4.99", "12.4.127", "12.5.39", "12.5.82", "12.6.37",
            "12.6.68", "12.6.80", "12.8.57", "12.8.90", "12.9.19", "12.9.79",
            "13.0.48", "13.0.85", "13.1.75", "13.1.115", "13.2.23", "13.2.75", "13.2.86",
            "13.3.35", "13.3.75", "13.4.58", "13.4.92", "13.5.25"]
# cuda.h/builtin_types.h: the activity structs only use pointers to driver types, so the
# newest runtime wheel of the same major serves every minor.
RUNTIME = {"12": ("nvidia-cuda-runtime-cu12", "12.9.79"), "13": ("nvidia-cuda-runtime", "13.5.37")}

# cupmon kind name -> the CUPTI_ACTIVITY_KIND_* names it decodes.
KIND_NAMES = {
    "kernel": ["KERNEL", "CONCURRENT_KERNEL"], "memcpy": ["MEMCPY"], "memset": ["MEMSET"],
    "api": ["RUNTIME", "DRIVER"], "external_correlation": ["EXTERNAL_CORRELATION"],
    "overhead": ["OVERHEAD"], "cuda_event": ["CUDA_EVENT"], "synchronization": ["SYNCHRONIZATION"],
    "memory2": ["MEMORY2"], "memory_pool": ["MEMORY_POOL"],
}

# cupmon kind name -> (CUpti_Activity struct family, C fields cupmon reads).
KINDS = {
    "kernel": ("Kernel", [
        "kind", "cacheConfig", "sharedMemoryConfig", "registersPerThread",
        "partitionedGlobalCacheRequested", "partitionedGlobalCacheExecuted", "start", "end",
        "completed", "deviceId", "contextId", "streamId", "gridX", "gridY", "gridZ", "blockX",
        "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread",
        "localMemoryTotal", "correlationId", "gridId", "name", "queued", "submitted",
        "launchType", "isSharedMemoryCarveoutRequested", "sharedMemoryCarveoutRequested",
        "sharedMemoryExecuted", "graphNodeId", "shmemLimitConfig", "graphId", "channelID",
        "channelType", "clusterX", "clusterY", "clusterZ", "clusterSchedulingPolicy",
        "localMemoryTotal_v2", "maxPotentialClusterSize", "maxActiveClusters", "isDeviceLaunched",
        "priority", "executionModel", "sourceGraphId", "sourceGraphNodeId"]),
    "memcpy": ("Memcpy", [
        "kind", "copyKind", "srcKind", "dstKind", "flags", "bytes", "start", "end", "deviceId",
        "contextId", "streamId", "correlationId", "runtimeCorrelationId", "graphNodeId", "graphId",
        "channelID", "channelType", "isDeviceLaunched", "copyCount", "sourceGraphId",
        "sourceGraphNodeId"]),
    "memset": ("Memset", [
        "kind", "value", "bytes", "start", "end", "deviceId", "contextId", "streamId",
        "correlationId", "flags", "memoryKind", "graphNodeId", "graphId", "channelID",
        "channelType", "isDeviceLaunched", "sourceGraphId", "sourceGraphNodeId"]),
    "api": ("API", [
        "kind", "cbid", "start", "end", "processId", "threadId", "correlationId", "returnValue"]),
    "external_correlation": ("ExternalCorrelation", [
        "kind", "externalKind", "externalId", "correlationId"]),
    "overhead": ("Overhead", [
        "kind", "overheadKind", "objectKind", "objectId", "start", "end", "correlationId",
        "overheadData"]),
    "cuda_event": ("CudaEvent", [
        "kind", "correlationId", "contextId", "streamId", "eventId", "deviceId", "deviceTimestamp",
        "cudaEventSyncId", "graphNodeId", "graphId", "sourceGraphId", "sourceGraphNodeId"]),
    "synchronization": ("Synchronization", [
        "kind", "type", "start", "end", "correlationId", "contextId", "streamId", "cudaEventId",
        "cudaEventSyncId", "returnValue"]),
    # MEMORY2: CUpti_ActivityMemory3 (12.x) / Memory4 (13.x); nested fields as C spells them.
    "memory2": ("Memory", [
        "kind", "memoryOperationType", "memoryKind", "correlationId", "address", "bytes",
        "timestamp", "PC", "processId", "deviceId", "contextId", "streamId", "name", "isAsync",
        "memoryPoolConfig.memoryPoolType", "memoryPoolConfig.address",
        "memoryPoolConfig.releaseThreshold", "memoryPoolConfig.pool.size",
        "memoryPoolConfig.utilizedSize", "source"]),
    "memory_pool": ("MemoryPool", [
        "kind", "memoryPoolOperationType", "memoryPoolType", "correlationId", "processId",
        "deviceId", "minBytesToKeep", "address", "size", "releaseThreshold", "timestamp",
        "utilizedSize", "isManagedPool"]),
}


def pip_download(package, version, dest):
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", f"{package}=={version}",
                    "-d", dest], check=True)
    return glob.glob(os.path.join(dest, f"{package.replace('-', '_')}-{version}-*.whl"))[0]


def extract_include(wheel, dest):
    """Unpack every header under the wheel's include/ directory into dest."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if "/include/" in name and name.endswith(".h"):
                rel = name.split("/include/", 1)[1]
                os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(dest, rel), "wb") as f:
                    f.write(z.read(name))


def strip_comments(src):
    return re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", src), flags=re.S)


def struct_bodies(include):
    """name -> body of every `typedef struct {...} CUpti_ActivityX;` in the activity headers."""
    bodies = {}
    for header in ("cupti_activity.h", "cupti_activity_deprecated.h"):
        path = os.path.join(include, header)
        if not os.path.exists(path):
            continue
        src = strip_comments(open(path, encoding="latin-1").read())
        for m in re.finditer(r"typedef struct (?:PACKED_ALIGNMENT )?\{((?:(?!typedef struct).)*?)\}\s*"
                             r"(?:PACKED_ALIGNMENT )?(CUpti_Activity\w+);", src, re.S):
            bodies[m.group(2)] = m.group(1)
    return bodies


def newest(bodies, family):
    """The newest declared struct of a family: CUpti_ActivityKernel13 over Kernel12 ... Kernel."""
    best, best_n = None, -1
    for name in bodies:
        m = re.fullmatch(r"CUpti_Activity%s(\d*)" % family, name)
        if m:
            n = int(m.group(1) or 1)
            if n > best_n:
                best, best_n = name, n
    return best


def documented_structs(include):
    """CUPTI_ACTIVITY_KIND_X -> the last CUpti_Activity struct its enum comment names."""
    src = open(os.path.join(include, "cupti_activity.h"), encoding="latin-1").read()
    enum = re.search(r"typedef enum \{(.*?)\}\s*CUpti_ActivityKind;", src, re.S).group(1)
    documented = {}
    for m in re.finditer(r"/\*\*(.*?)\*/\s*CUPTI_ACTIVITY_KIND_(\w+)\s*=", enum, re.S):
        names = re.findall(r"CUpti_Activity\w+", m.group(1))
        if names:
            documented[m.group(2)] = names[-1]
    return documented


def probe_source(plan):
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <cupti_activity.h>",
             "#define F(S, f) printf(\"%s\\\"%s\\\": [%zu, %zu]\", sep, #f, offsetof(S, f), sizeof(((S *)0)->f)); sep = \", \";",
             "int main(void) {", "  const char *sep;", "  printf(\"{\");"]
    first = True
    for kind, (struct, fields) in plan.items():
        lines.append('  printf("%s\\"%s\\": {\\"struct\\": \\"%s\\", \\"size\\": %%zu, \\"fields\\": {", sizeof(%s));'
                     % ("" if first else ", ", kind, struct, struct))
        first = False
        lines.append('  sep = "";')
        lines += [f"  F({struct}, {f})" for f in fields]
        lines.append('  printf("}}");')
    lines += ['  printf("}\\n");', "  return 0;", "}"]
    return "\n".join(lines) + "\n"


def measure(version, work, runtime_include):
    package = "nvidia-cuda-cupti-cu12" if version.startswith("12.") else "nvidia-cuda-cupti"
    include = os.path.join(work, "cupti-" + version)
    extract_include(pip_download(package, version, os.path.join(work, "wheels")), include)
    bodies = struct_bodies(include)
    plan = {}
    for kind, (family, wanted) in KINDS.items():
        struct = newest(bodies, family)
        body = bodies[struct]
        # A nested field (`a.b`) is looked up by its last component.
        present = [f for f in wanted
                   if re.search(r"[\s*}]%s\s*(\[[^\]]*\])?\s*(:\s*\d+\s*)?;" % re.escape(f.split(".")[-1]), body)]
        plan[kind] = (struct, present)
    src = os.path.join(work, f"probe-{version}.c")
    exe = os.path.join(work, f"probe-{version}")
    open(src, "w").write(probe_source(plan))
    # An empty builtin_types.h: the runtime's pulls in nvcc-only headers (crt/), and no
    # activity struct uses a runtime type (gcc would fail if one did).
    stub = os.path.join(work, "stub")
    os.makedirs(stub, exist_ok=True)
    open(os.path.join(stub, "builtin_types.h"), "w").close()
    subprocess.run(["gcc", "-w", "-I", include, "-I", stub, "-I", runtime_include, src, "-o", exe], check=True)
    layouts = json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)
    documented = documented_structs(include)
    for kind, names in KIND_NAMES.items():
        layouts[kind]["documented"] = {n: documented.get(n) for n in names}
    api = re.search(r"#define CUPTI_API_VERSION (\d+)", open(os.path.join(include, "cupti_version.h")).read())
    return {"api_version": int(api.group(1)), **layouts}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    ap.add_argument("--versions", nargs="*", default=VERSIONS)
    ap.add_argument("--one-per-minor", action="store_true", help="only the last patch of each minor")
    ap.add_argument("--keep", help="work in this directory and keep it (default: a temp dir)")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="cupti-layouts-")
    os.makedirs(work, exist_ok=True)
    runtime_includes = {}
    result = {}
    versions = a.versions
    if a.one_per_minor:
        versions = list({".".join(v.split(".")[:2]): v for v in versions}.values())
    for version in versions:
        major = version.split(".")[0]
        if major not in runtime_includes:
            package, rt_version = RUNTIME[major]
            inc = os.path.join(work, "runtime-" + major)
            extract_include(pip_download(package, rt_version, os.path.join(work, "wheels")), inc)
            runtime_includes[major] = inc
        result[version] = measure(version, work, runtime_includes[major])
        print(f"{version} (API {result[version]['api_version']}): " + ", ".join(
            f"{k}={v['struct'][14:]}/{v['size']}" for k, v in result[version].items() if k != "api_version"),
            file=sys.stderr)
    text = json.dumps(result, indent=1) + "\n"
    if a.out:
        open(a.out, "w").write(text)
    else:
        sys.stdout.write(text)
    if not a.keep:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
