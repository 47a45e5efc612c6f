#!/usr/bin/env python3
"""Retarget done-when table (#42): every shared mocap source onto every
shared fixture humanoid, from the command line, without hand edits.

Per pair: `ludus-anim retarget suggest SOURCE TARGET -o P` (its exit code:
0 when the proposal fits), then `ludus-anim cook SOURCE --retarget P`
(exit code, the error codes of a failure), and from `report.json` per
pair the worst over its clips of
  - facing agreement (`facing.agreement`, the cook fails below 0),
  - foot pop: target foot speed over (1.5 x the source's + 0.5 leg
    lengths/s) in a contact frame (`foot_speeds[].peak_ratio`, > 1 pops),
  - floor penetration of the result (`floor_penetration.target_m`).
Per rig onto itself (identity): the cooked result's decoded joint
positions against the source clip's, both from the sidecar's `poses` and
`source_poses` (30 Hz, component space), worst distance over joints and
frames, beside the codec's bound (`threshold_m`).

Usage: tools/retarget-matrix.py [--bin PATH] [--work DIR] [--markdown]
Needs the cooker built (`cargo build --profile ci -p ludus-anim-cooker`).
"""

import argparse
import base64
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FX = os.environ.get("LUDUS_SHARED_FIXTURES", os.path.join(ROOT, "..", "shared", "fixtures"))

# Mocap sources (BVH and MotionBuilder FBX) and every fixture humanoid
# (MANIFEST.tsv: a body with legs, named or not).
SOURCES = [
    "bvh/cmu_01_01.bvh",
    "bvh/cmu_12_01_walk.bvh",
    "bvh/makehuman_zombieWalk1.bvh",
    "fbx/pab_locomotions.fbx",
    "fbx/pab_crackhead.fbx",
]
TARGETS = [
    "gltf/quaternius_KnightCharacter.glb",
    "fbx/quaternius_KnightCharacter.fbx",
    "fbx/quaternius_Skeleton.fbx",
    "fbx/ufbx_blender_293_barbarian_7400.fbx",
    "fbx/pab_locomotions.fbx",
    "bvh/makehuman_tpose.bvh",
    "bvh/cmu_12_01_walk.bvh",
    "bvh/makehuman_zombieWalk1.bvh",
]


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def slug(path):
    return os.path.splitext(os.path.basename(path))[0]


def decode(poses):
    """Sidecar poses -> list of frames, each a list of (x, y, z)."""
    o, s = poses["origin_m"], poses["step_m"]
    raw = base64.b64decode(poses["q"])
    q = struct.unpack(f"<{len(raw) // 2}H", raw)
    frames = poses["frames"]
    n = len(q) // 3 // max(frames, 1)
    out = []
    for f in range(frames):
        fr = []
        for j in range(n):
            k = (f * n + j) * 3
            fr.append(tuple(o[a] + q[k + a] * s[a] for a in range(3)))
        out.append(fr)
    return out, n


def identity_error(out_dir, report):
    """Worst distance between result and source positions over every clip
    (joints matched by name), and the largest codec bound."""
    side = json.load(open(os.path.join(out_dir, "report-sidecar.json")))
    worst, bound = 0.0, 0.0
    for clip in report["assets"][0]["clips"]:
        bound = max(bound, clip.get("threshold_m") or 0.0)
    for c in side["clips"]:
        if "poses" not in c or "source_poses" not in c:
            continue
        names = c["joints"]
        res, _ = decode(c["poses"])
        sp = c["source_poses"]
        src, _ = decode(sp["poses"])
        src_names = sp["joints"]
        idx = {n: i for i, n in enumerate(src_names)}
        pairs = [(i, idx[n]) for i, n in enumerate(names) if n in idx]
        if not pairs:
            return None, bound
        for fr_r, fr_s in zip(res, src):
            for i, k in pairs:
                if i < len(fr_r) and k < len(fr_s):
                    worst = max(worst, math.dist(fr_r[i], fr_s[k]))
    return worst, bound


def pair(binary, work, src, tgt):
    name = f"{slug(src)}__{slug(tgt)}_{tgt.rsplit('.', 1)[-1]}"
    prof = os.path.join("profiles", name + ".toml")
    s_rc, s_log = run([binary, "retarget", "suggest", os.path.join(FX, src), os.path.join(FX, tgt), "-o", prof], work)
    row = {"source": src, "target": tgt, "suggest_rc": s_rc}
    if not os.path.exists(os.path.join(work, prof)):
        row["cook_rc"] = None
        row["errors"] = [l for l in s_log.splitlines() if "error" in l][:3]
        return row
    out = os.path.join("out", name)
    c_rc, c_log = run([binary, "cook", "--json", os.path.join(FX, src), "--retarget", prof, "-o", out, "--cache", "cache"], work)
    row["cook_rc"] = c_rc
    codes = set()
    for line in c_log.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        d = e.get("diagnostic") or e
        if isinstance(d, dict) and d.get("severity") == "error" and d.get("code"):
            codes.add(d["code"])
    row["errors"] = sorted(codes)
    rp = os.path.join(work, out, "report.json")
    if not os.path.exists(rp):
        return row
    report = json.load(open(rp))
    if not report.get("assets"):
        return row
    for a in report["assets"]:
        for d in a.get("diagnostics", []) or []:
            if d.get("severity") == "error":
                codes.add(d.get("code"))
    row["errors"] = sorted(c for c in codes if c)
    if c_rc != 0 and any(c.startswith("retarget_") for c in codes):
        # A budget breach writes no package: the figures are measured on
        # a copy of the profile with `on_breach = "warn"` (the only
        # change), so the table says by how much each budget is missed.
        text = open(os.path.join(work, prof)).read()
        warn = prof.replace(".toml", ".warn.toml")
        open(os.path.join(work, warn), "w").write(text.replace('on_breach = "fail"', 'on_breach = "warn"'))
        out = out + ".warn"
        run([binary, "cook", "--json", os.path.join(FX, src), "--retarget", warn, "-o", out, "--cache", "cache"], work)
        rp = os.path.join(work, out, "report.json")
        if not os.path.exists(rp):
            return row
        report = json.load(open(rp))
        row["measured_in_warn_mode"] = True
    facing, pop, pop_at, floor, floor_src, floor_at = None, 0.0, "", 0.0, 0.0, ""
    clips = 0
    for clip in report["assets"][0].get("clips", []):
        m = (clip.get("retarget") or {}).get("metrics")
        if not m:
            continue
        clips += 1
        a = (m.get("facing") or {}).get("agreement")
        if a is not None:
            facing = a if facing is None else min(facing, a)
        for f in m.get("foot_speeds", []):
            if f["peak_ratio"] > pop:
                pop = f["peak_ratio"]
                pop_at = f"{clip['name']} {f['joint']} {f['peak_time_s']:.2f}s"
        p = m.get("floor_penetration") or {}
        if p.get("target_m", 0.0) > floor:
            floor = p["target_m"]
            floor_at = f"{clip['name']} {p.get('joint')} {p.get('time_s', 0):.2f}s"
        floor_src = max(floor_src, p.get("source_m", 0.0))
    if clips == 0:
        # Nothing measured (the asset failed before its clips).
        pop = floor = floor_src = None
    row.update(clips=clips, facing=facing, pop=pop, pop_at=pop_at, floor=floor, floor_src=floor_src, floor_at=floor_at)
    if src == tgt:
        row["identity_m"], row["bound_m"] = identity_error(os.path.join(work, out), report)
    return row


def verdict(r):
    ok = r["suggest_rc"] == 0 and r.get("cook_rc") == 0
    # Facing must be measured (a target whose legs map to nothing has no
    # facing figure and does not move below the hips: not a success).
    ok = ok and r.get("facing") is not None and r["facing"] >= 0.0
    # Floor: beyond the source's own (scaled) penetration, as the
    # cook's `retarget_floor` budget reads it (a rig onto itself keeps its
    # source's toe under the floor).
    ok = ok and (r.get("pop") or 0.0) <= 1.0 and (r.get("floor") or 0.0) - (r.get("floor_src") or 0.0) <= 0.01
    if "identity_m" in r:
        ok = ok and r["identity_m"] is not None and r["identity_m"] <= 2 * max(r["bound_m"], 1e-4)
    return "yes" if ok else "NO"


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def markdown(rows):
    out = [
        "| source | target | suggest | cook | facing | foot pop (ratio, where) | floor target (m, where) / source | identity (m / bound) | errors | all met |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ident = "-"
        if "identity_m" in r:
            ident = f"{fmt(r['identity_m'], '.5f')} / {fmt(r['bound_m'], '.5f')}"
        out.append(
            "| {} | {} | {} | {} | {} | {} {} | {} {} / {} | {} | {} | {} |".format(
                os.path.basename(r["source"]),
                os.path.basename(r["target"]),
                "fits" if r["suggest_rc"] == 0 else f"exit {r['suggest_rc']}",
                "-" if r.get("cook_rc") is None else ("ok" if r["cook_rc"] == 0 else f"exit {r['cook_rc']}"),
                fmt(r.get("facing"), ".2f"),
                fmt(r.get("pop"), ".2f"),
                r.get("pop_at", ""),
                fmt(r.get("floor"), ".3f"),
                r.get("floor_at", ""),
                fmt(r.get("floor_src"), ".3f"),
                ident,
                (", ".join(r.get("errors", [])) or "-") + (" (figures: warn mode)" if r.get("measured_in_warn_mode") else ""),
                verdict(r),
            )
        )
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "ci", "ludus-anim"))
    ap.add_argument("--work")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--only", help="substring a pair's name must contain")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="ludus-retarget-matrix.")
    os.makedirs(os.path.join(work, "profiles"), exist_ok=True)
    rows = []
    for s in SOURCES:
        for t in TARGETS + ([s] if s not in TARGETS else []):
            if a.only and a.only not in f"{slug(s)}__{slug(t)}":
                continue
            r = pair(os.path.abspath(a.bin), work, s, t)
            rows.append(r)
            print(json.dumps(r), file=sys.stderr)
    if a.markdown:
        print(markdown(rows))
    else:
        json.dump(rows, sys.stdout, indent=1)
    met = sum(verdict(r) == "yes" for r in rows)
    print(f"{met}/{len(rows)} pairs meet every condition; work dir {work}", file=sys.stderr)


if __name__ == "__main__":
    main()
