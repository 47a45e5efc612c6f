#!/usr/bin/env python3
"""The end-to-end error bound over the shared fixtures (#44 "done when"):
cook every file of ../shared/fixtures/MANIFEST.tsv under each profile
(fresh cache, one job) and check that every clip is within its profile's
threshold against the authored curves, or carries a warning naming the
figure. Prints one markdown table per profile and a summary; exits 1 if a
clip is over without a warning.

usage: tools/bound-sweep.py LUDUS_BIN [FIXTURES_DIR] [--profiles standard,hero,crowd]
"""
import csv, json, os, re, subprocess, sys, tempfile

def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    profiles = 'standard,hero,crowd'
    for a in sys.argv[1:]:
        if a.startswith('--profiles='):
            profiles = a.split('=', 1)[1]
    ludus = os.path.abspath(args[0])
    fx = os.path.abspath(args[1] if len(args) > 1 else '../shared/fixtures')
    with open(os.path.join(fx, 'MANIFEST.tsv')) as f:
        files = [r['local_path'] for r in csv.DictReader(f, delimiter='\t')]
    bad = 0
    for profile in profiles.split(','):
        rows, within, warned = [], 0, 0
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'out')
            cmd = [ludus, 'cook', '--quiet', '--no-cache', '--jobs', '1', '--profile', profile,
                   '--out', out] + [os.path.join(fx, p) for p in files]
            subprocess.run(cmd, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            report = json.load(open(os.path.join(out, 'report.json')))
        for a in report['assets']:
            for c in a['clips']:
                e = c.get('end_to_end') or {}
                err, thr = e.get('error_m', c['max_error_m']), e.get('threshold_m', c['threshold_m'])
                ok = e.get('within', err <= thr)
                # The warning's figure, as printed (4 decimals of a mm).
                told = any(abs(float(m) - err * 1000) < 2e-4
                           for w in c.get('warnings', [])
                           for m in re.findall(r'is (\d+\.\d+) mm from the authored curves', w))
                within += ok
                warned += (not ok) and told
                if not ok and not told:
                    bad += 1
                rows.append((os.path.basename(a['source']), c['name'], err * 1000, thr * 1000,
                             'within' if ok else ('warned: ' + (e.get('cause') or '?') if told else 'OVER, NOT WARNED')))
        print(f"\n### {profile}: {len(rows)} clips, {within} within, {warned} over and warned, "
              f"{len(rows) - within - warned} over without a warning\n")
        print('| file | clip | end-to-end mm | threshold mm | result |')
        print('|---|---|---|---|---|')
        for r in rows:
            print(f"| {r[0]} | {r[1][:32]} | {r[2]:.4f} | {r[3]:.4f} | {r[4]} |")
    sys.exit(1 if bad else 0)

main()
