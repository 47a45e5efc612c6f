#!/usr/bin/env python3
"""Synthesize a larger cook from a real one, for dashboard scale figures:
every asset of SRC_OUT's report.json (and its clips in report-sidecar.json)
repeated COPIES times under copy<k>/ source paths, into DST_OUT. The
figures are the real cook's, repeated; only the report's totals change.

usage: tools/dashboard-scale.py SRC_OUT DST_OUT COPIES
"""

import copy
import json
import os
import sys


def renamed(source, k):
    head, tail = os.path.split(source)
    return os.path.join(head, f"copy{k:03d}", tail)


def main():
    src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "report.json")) as f:
        report = json.load(f)
    with open(os.path.join(src, "report-sidecar.json")) as f:
        side = json.load(f)
    assets, clips = [], []
    for k in range(copies):
        for a in report["assets"]:
            b = copy.deepcopy(a)
            b["source"] = renamed(a["source"], k)
            assets.append(b)
        for c in side["clips"]:
            d = dict(c)
            d["source"] = renamed(c["source"], k)
            clips.append(d)
    report["assets"] = assets
    t = report["totals"]
    t["assets"] = len(assets)
    t["clips"] = sum(len(a["clips"]) for a in assets)
    for key in ("raw_bytes", "compressed_bytes", "package_bytes", "warnings"):
        t[key] *= copies
    side["clips"] = clips
    side.pop("content", None)
    with open(os.path.join(dst, "report.json"), "w") as f:
        json.dump(report, f)
    with open(os.path.join(dst, "report-sidecar.json"), "w") as f:
        json.dump(side, f, separators=(",", ":"))
    print(f"{t['clips']} clips in {len(assets)} assets -> {dst}")


if __name__ == "__main__":
    main()
