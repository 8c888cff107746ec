#!/usr/bin/env python3
"""Turn the measurements that bench/run.sh collected into bench/RESULTS.md.

usage: make_report.py RESULTS_TSV OUT_MD [ENV_TXT]

RESULTS_TSV has one line per (profile, command) with tab-separated columns:
  file_key file_path size_bytes events row_id label what status reason
  hyperfine_json rss_kb
status is ok, failed, missing or skipped; reason says why when not ok.
ENV_TXT, when given, is copied under the tables (machine, versions).
"""

import json
import re
import sys

COLUMNS = ["file_key", "file_path", "size_bytes", "events", "row_id", "label", "what",
           "status", "reason", "hyperfine_json", "rss_kb"]


def load(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            parts += [""] * (len(COLUMNS) - len(parts))
            row = dict(zip(COLUMNS, parts))
            row["mean"] = row["stddev"] = None
            row["runs"] = 0
            if row["status"] == "ok" and row["hyperfine_json"]:
                try:
                    with open(row["hyperfine_json"], encoding="utf-8") as h:
                        result = json.load(h)["results"][0]
                    row["mean"] = float(result["mean"])
                    row["stddev"] = float(result.get("stddev") or 0.0)
                    row["runs"] = len(result.get("times", []))
                except (OSError, ValueError, KeyError, IndexError) as e:
                    row["status"], row["reason"] = "failed", f"no timing: {e}"
            try:
                row["rss_bytes"] = int(row["rss_kb"]) * 1024 if row["rss_kb"] else None
            except ValueError:
                row["rss_bytes"] = None
            rows.append(row)
    return rows


def fmt_time(sec):
    if sec is None:
        return "—"
    if sec < 1.0:
        return f"{sec * 1e3:.1f} ms"
    return f"{sec:.2f} s"


def fmt_ratio(x):
    if x is None:
        return "—"
    if x >= 100:
        return f"{x:.0f}×"
    if x >= 10:
        return f"{x:.1f}×"
    return f"{x:.2f}×"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def section(rows):
    first = rows[0]
    size = int(first["size_bytes"] or 0)
    events = first["events"]
    ev = f"{int(events):,} events" if events.isdigit() else "events: unknown"
    out = [f"### {cell(first['file_key'])}: {size / 1e6:.1f} MB, {ev}", ""]
    out.append(f"`{cell(first['file_path'])}`")
    out.append("")
    out.append("| command | computes | mean ± σ (runs) | time vs jaxprof | time vs baseline_protobuf "
               "| peak RSS MB | RSS / file size |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    by_id = {r["row_id"]: r for r in rows}

    def mean_of(row_id):
        r = by_id.get(row_id)
        return r["mean"] if r and r["status"] == "ok" else None

    ref_mean, pb_mean = mean_of("jaxprof"), mean_of("protobuf")
    for r in rows:
        if r["status"] != "ok":
            why = {"missing": "missing", "skipped": "skipped"}.get(r["status"], "not available")
            reason = f"{why}: {r['reason']}" if r["reason"] else why
            out.append(f"| {cell(r['label'])} | {cell(r['what'])} | {cell(reason)} | — | — | — | — |")
            continue
        if r["runs"] > 1:
            t = f"{fmt_time(r['mean'])} ± {fmt_time(r['stddev'])} ({r['runs']})"
        else:
            t = f"{fmt_time(r['mean'])} (1 run)"
        ratio = fmt_ratio(r["mean"] / ref_mean) if ref_mean and r["mean"] else "—"
        pb_ratio = fmt_ratio(r["mean"] / pb_mean) if pb_mean and r["mean"] else "—"
        rss = r["rss_bytes"]
        rss_mb = f"{rss / 1e6:.0f}" if rss else "—"
        rss_ratio = f"{rss / size:.2f}" if rss and size else "—"
        out.append(f"| {cell(r['label'])} | {cell(r['what'])} | {t} | {ratio} | {pb_ratio} | {rss_mb} "
                   f"| {rss_ratio} |")
    out.append("")
    out.extend(checks(by_id, size))
    out.append("")
    return out


def checks(by_id, size):
    """The three requirements on `jaxprof ops`, judged on means."""
    j = by_id.get("jaxprof")
    if not j or j["status"] != "ok":
        return ["Requirements: not judged (jaxprof not measured)."]
    lines = ["Requirements on `jaxprof ops BIG --format json`:", ""]
    p = by_id.get("protobuf")
    if p and p["status"] == "ok":
        speedup = p["mean"] / j["mean"]
        verdict = "PASS" if speedup >= 10 else "FAIL"
        lines.append(f"- (a) ≥ 10× faster than baseline_protobuf: {speedup:.1f}× — {verdict}")
    else:
        lines.append("- (a) ≥ 10× faster than baseline_protobuf: not judged (baseline missing)")
    w = by_id.get("walk")
    if w and w["status"] == "ok":
        ratio = j["mean"] / w["mean"]
        verdict = "PASS" if ratio <= 1.0 else "FAIL"
        lines.append(f"- (b) no slower than baseline_walk: jaxprof takes {ratio:.2f}× the walk's time — {verdict}")
    else:
        lines.append("- (b) no slower than baseline_walk: not judged (baseline missing)")
    if j["rss_bytes"] and size:
        ratio = j["rss_bytes"] / size
        verdict = "PASS" if ratio <= 1.5 else "FAIL"
        lines.append(f"- (c) peak RSS ≤ 1.5 × file size: {ratio:.2f} × — {verdict}")
    else:
        lines.append("- (c) peak RSS ≤ 1.5 × file size: not judged (no RSS)")
    return lines


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    rows = load(argv[1])
    files = []
    for r in rows:
        if r["file_key"] not in files:
            files.append(r["file_key"])
    out = ["# jaxprof benchmark results", "",
           "Made by `bench/run.sh`; see `bench/README.md` for what each command computes. "
           "Times are hyperfine means of end-to-end process runs (page cache warm); "
           "\"time vs X\" is the command's mean divided by X's (above 1× means slower "
           "than X). Peak RSS is GNU time's maximum resident set size of the "
           "process and its children; MB are 10^6 bytes.", ""]
    for key in files:
        out.extend(section([r for r in rows if r["file_key"] == key]))
    if len(argv) == 4:
        with open(argv[3], encoding="utf-8") as f:
            env = f.read().strip()
        out += ["### Environment", "", "```", env, "```", ""]
    text = "\n".join(out)
    # Sections that other scripts keep between their own markers (bench/autotune_quality.py)
    # survive a new report.
    try:
        with open(argv[2], encoding="utf-8") as f:
            old = f.read()
    except OSError:
        old = ""
    for m in re.finditer(r"<!-- ([\w-]+):start -->.*?<!-- \1:end -->\n?", old, re.S):
        text = text.rstrip("\n") + "\n\n" + m.group(0)
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main(sys.argv)
