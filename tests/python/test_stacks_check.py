"""tests/gpu/stacks_check.py compare, the H200 check of issue 33's kernel -> line mapping
against torch.profiler: on hand-made pairs of traces, it passes when cupmon's lines agree
and names the kernel when one is a line off."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json

from conftest import ROOT

spec = importlib.util.spec_from_file_location(
    "stacks_check", ROOT / "tests" / "gpu" / "stacks_check.py")
stacks_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stacks_check)

WORKLOAD = """\
class Block:
    def forward(self, x):
        with label("norm"): h = self.norm(x)  # line: norm
        with label("up"): return self.up(h)  # line: up
"""


def torch_trace(tmp_path):
    """torch's side: labels on the Python thread (tid 1), two launches under them, one
    launch on the autograd engine's thread (tid 2); the ops' stacks in lines.json."""
    events = [
        {"cat": "python_function", "name": "w.py(2): forward", "pid": 1, "tid": 1,
         "ts": 0, "dur": 100},
        {"cat": "user_annotation", "name": "norm", "pid": 1, "tid": 1, "ts": 1, "dur": 20},
        {"cat": "user_annotation", "name": "up", "pid": 1, "tid": 1, "ts": 30, "dur": 20},
    ]
    for corr, ext, tid, ts in ((5, 7, 1, 10), (6, 8, 1, 40), (9, 20, 2, 60)):
        args = {"correlation": corr, "External id": ext}
        events.append({"cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": tid, "ts": ts, "dur": 2, "args": args})
        events.append({"cat": "kernel", "name": f"k{corr}", "pid": 0, "tid": 7,
                       "ts": ts + 5, "dur": 3, "args": args})
    path = tmp_path / "torch.json"
    path.write_text(json.dumps({"traceEvents": events}))
    ops = [
        {"id": 7, "op": "aten::native_layer_norm", "thread": 1, "start_us": 9,
         "stack": ["<built-in method layer_norm>", "nn.Module: LayerNorm_0",
                   "w.py(2): forward"]},
        {"id": 8, "op": "aten::addmm", "thread": 1, "start_us": 39,
         "stack": ["<built-in function linear>", "w.py(2): forward"]},
        {"id": 20, "op": "aten::mm", "thread": 2, "start_us": 59,
         "stack": ["w.py(2): forward"]},
    ]
    (tmp_path / "torch.json.lines.json").write_text(json.dumps(ops))
    return path


def cupmon_trace(tmp_path, lines):
    events = []
    for corr, line in lines.items():
        args = {"correlation": corr}
        if line is None:
            args["source line"] = "(no Python frames)"
        else:
            args["source line"] = f"/src/w.py:{line}"
            args["python stack"] = f"/src/w.py:{line} Block.forward [user]"
        events.append({"cat": "kernel", "name": f"k{corr}", "args": args})
    path = tmp_path / "cupmon.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def compare(tmp_path, lines):
    workload = tmp_path / "w.py"
    workload.write_text(WORKLOAD)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        stacks_check.compare(str(torch_trace(tmp_path)), str(cupmon_trace(tmp_path, lines)),
                             str(workload))
    return out.getvalue()


def verdicts(text):
    return [line.split()[0] for line in text.splitlines() if line.startswith(("PASS", "FAIL"))]


def test_agreeing_lines_pass_all_three_and_engine_kernels_are_set_aside(tmp_path):
    out = compare(tmp_path, {5: 3, 6: 4, 9: None})
    assert verdicts(out) == ["PASS", "PASS", "PASS"], out
    assert "2/2 kernels launched under a label" in out
    assert "1 from the autograd engine's threads not compared" in out


def test_a_kernel_one_line_off_fails_the_exact_line_and_is_named(tmp_path):
    # Line 3 instead of 4: the same function, so only the exact-line check can see it.
    out = compare(tmp_path, {5: 3, 6: 3, 9: None})
    assert verdicts(out) == ["PASS", "PASS", "FAIL"], out
    assert "correlation 6 k6: label up is w.py:4, cupmon w.py:3" in out


def test_a_python_kernel_without_a_line_fails_rather_than_matching_nothing(tmp_path):
    out = compare(tmp_path, {5: None, 6: 4, 9: None})
    assert verdicts(out) == ["FAIL", "FAIL", "FAIL"], out


def replay_reads(tmp_path, many, few):
    """The check's verdict line for runs of 2000 and 200 replays whose metas counted
    `many` and `few` stack reads (None: no count)."""
    dumps = []
    for name, reads in (("many", many), ("few", few)):
        meta = {"python_stack_timing": {"reads": reads}} if reads is not None else {}
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "cupti_monitor_meta.bin").write_bytes(
            b"\0" * 16 + json.dumps(meta).encode())
        dumps.append(str(tmp_path / name))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        stacks_check.replay_reads(dumps[0], "2000", dumps[1], "200")
    return out.getvalue()


def test_replays_that_read_no_stack_pass_and_ones_that_do_fail(tmp_path):
    assert replay_reads(tmp_path / "a", 72, 72).startswith("PASS"), "warm-up and capture only"
    assert replay_reads(tmp_path / "b", 2072, 272).startswith("FAIL"), "one read a replay"
    assert replay_reads(tmp_path / "c", 73, 72).startswith("FAIL"), "a replay read one"
    assert replay_reads(tmp_path / "d", None, None).startswith("FAIL"), "no count"


def timed_summary(tmp_path, model_ns):
    """The part 7 verdict for rounds of two builds whose first build's model read took
    `model_ns` each round."""
    lines = ["== 7. the stack read timed in the program"]
    for ns in model_ns:
        lines += [
            f"INFO stack read timed in the program, this, model: {ns} ns per launch over 9 launches",
            "INFO stack read timed in the program, this, loop: 100.0 ns per launch over 9 launches",
            "INFO stack read timed in the program, before, model: 999.0 ns per launch over 9 launches",
        ]
    results = tmp_path / "results.txt"
    results.write_text("\n".join(lines) + "\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        stacks_check.timed_summary(str(results))
    return out.getvalue().splitlines()[-1]


def test_the_timed_model_read_is_judged_by_the_median_of_the_first_build(tmp_path):
    assert timed_summary(tmp_path, [212.8, 290.6, 230.8]).startswith("PASS")
    assert "median 230.8 ns of 3 runs" in timed_summary(tmp_path, [212.8, 290.6, 230.8])
    # One slow round does not fail it; most rounds over the goal do.
    assert timed_summary(tmp_path, [212.8, 329.5, 230.8]).startswith("PASS")
    assert timed_summary(tmp_path, [312.8, 329.5, 230.8]).startswith("FAIL")
    assert timed_summary(tmp_path, []).startswith("FAIL")
