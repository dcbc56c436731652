#!/bin/sh
# Builds and runs every benchmark (bench/core, bench/media) in full mode; writes each one's JSON,
# a combined summary.json and a Markdown table summary.md (the README's) to BUILD/bench-results/;
# then the soak (tests/soak) with 1,000,000 frames (GPUHANDLE_SOAK_FRAMES to change it).
#
# Usage: bench/run.sh [--no-build] [BUILD_DIR]
#   BUILD_DIR: relative to the repository root, default build; set up with `meson setup` when it
#   does not exist, then built (`meson compile`). --no-build runs what is built already.
#
# The benchmarks are the tests of meson suite `bench` (CI runs them with --short); this runs the
# same programs, with the same environment, without --short and with --json. Timing is never
# asserted: a benchmark fails only when it cannot run; targets not met are shown in the table.
set -eu

build=1
if [ "${1:-}" = "--no-build" ]; then
	build=0
	shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
case $dir in
/*) ;;
*) dir=$root/$dir ;;
esac

if [ "$build" = 1 ]; then
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$root"
	meson compile -C "$dir"
fi
results=$dir/bench-results
mkdir -p "$results"
meson introspect --tests "$dir" >"$results/tests.json"

exec python3 - "$results" <<'PY'
# Runs each `bench` test's program in full mode and gathers the results.
import datetime, json, os, platform, subprocess, sys

results = sys.argv[1]
all_tests = json.load(open(os.path.join(results, "tests.json")))
tests = [t for t in all_tests if any(s.split(":")[-1] == "bench" for s in t["suite"])]
os.remove(os.path.join(results, "tests.json"))
if not tests:
    sys.exit("no benchmarks in this build (suite `bench`): were they configured?")

def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"

summary = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": "%s, %d CPUs, %s %s" % (cpu_model(), os.cpu_count() or 0,
                                                platform.system(), platform.release()),
           "benchmarks": [], "failed": [], "skipped": []}
for n, t in enumerate(tests, 1):
    name = t["name"]
    out = os.path.join(results, name + ".json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [a for a in t["cmd"] if a != "--short"] + ["--json", out]
    env = dict(os.environ, **(t.get("env") or {}))
    print("[%d/%d] %s" % (n, len(tests), name), flush=True)
    with open(os.path.join(results, name + ".log"), "w") as log:
        try:
            run = subprocess.run(cmd, env=env, cwd=t.get("workdir") or None, timeout=1800,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            code, text = run.returncode, run.stdout
        except subprocess.TimeoutExpired:
            code, text = "timeout", "timed out after 1800 s\n"
        except OSError as e:
            code, text = "not built", "%s\n" % e
        log.write(text)
    sys.stdout.write(text)
    if code == 77:
        summary["skipped"].append(name)
    elif code != 0 or not os.path.exists(out):
        summary["failed"].append("%s (exit %s)" % (name, code))
    if os.path.exists(out):
        data = json.load(open(out))
        data["program"] = name
        summary["benchmarks"].append(data)

# The soak in bench mode: the `soak` test's program (20,000 frames in CI) with 1,000,000 frames,
# its memory and fd figures kept in the summary.
summary["soak"] = []
soak = [t for t in all_tests if t["name"] == "soak"]
if soak:
    cmd = [a if a != "20000" else os.environ.get("GPUHANDLE_SOAK_FRAMES", "1000000")
           for a in soak[0]["cmd"]]
    env = dict(os.environ, **(soak[0].get("env") or {}))
    print("[soak] %s" % " ".join(cmd[-1:]), flush=True)
    run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=7200)
    sys.stdout.write(run.stdout)
    summary["soak"] = [l for l in run.stdout.splitlines() if l.startswith("soak")]
    if run.returncode != 0:
        summary["failed"].append("soak (exit %s)" % run.returncode)

json.dump(summary, open(os.path.join(results, "summary.json"), "w"), indent=2)

def figure(value, unit):
    scale = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}.get(unit)
    if scale is None:
        return "%.4g %s" % (value, unit)
    ns = value * scale
    if ns >= 1e6:
        return "%.2f ms" % (ns / 1e6)
    if ns >= 1e3:
        return "%.1f µs" % (ns / 1e3) if ns >= 1e4 else "%.2f µs" % (ns / 1e3)
    return "%.0f ns" % ns

def ratio_text(ratio):
    text = "%.3f" % ratio
    if 0 < ratio < 1:
        text += (" (%.0f× faster)" if ratio < 0.1 else " (%.1f× faster)") % (1 / ratio)
    return text

lines = ["Measured %s on %s." % (summary["date"], summary["machine"]), "",
         "| Benchmark | Case | Baseline | Baseline | gpuhandle | Ratio | Target | Met |",
         "|---|---|---|---:|---:|---:|---:|:---:|"]
for b in summary["benchmarks"]:
    for r in b["results"]:
        has_max = r.get("max_value", -1) >= 0
        target = ("≤ %.2f" % r["target_ratio"] if r["target_ratio"] > 0 else
                  "≤ %g %s" % (r["max_value"], r["unit"]) if has_max else "–")
        met = ("yes" if r["met"] else "**no**") if r["target_ratio"] > 0 or has_max else "–"
        ratio = ratio_text(r["ratio"])
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            b["benchmark"].replace("|", "/"), r["name"], r["baseline"].replace("|", "/"),
            figure(r["baseline_value"], r["unit"]), figure(r["value"], r["unit"]),
            ratio, target, met))
if summary["soak"]:
    lines += ["", "Soak:", ""] + ["- " + l for l in summary["soak"]]
if any(b.get("short") for b in summary["benchmarks"]):
    lines += ["", "Short mode: figures not meaningful."]
for key, what in (("skipped", "Skipped (could not run here)"), ("failed", "Failed")):
    if summary[key]:
        lines += ["", "%s: %s." % (what, ", ".join(summary[key]))]
open(os.path.join(results, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\nwrote %s/summary.json and summary.md" % results)
print("\n".join(lines))
sys.exit(1 if summary["failed"] else 0)
PY
