"""PASS/FAIL lines for the GPU checks; run.sh counts them. Each check script
exits with `exit_code()` at the end."""

failures = []


def check(name, ok, detail=""):
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    if not ok:
        failures.append(name)


def exit_code():
    return 1 if failures else 0
