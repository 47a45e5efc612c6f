#!/usr/bin/env python3
"""Median ns per request and ours/ACL ratios from a phase_b_decode.py CSV whose ours1 runs include `cached`
(the playing request; see harness-cached.sh). usage: decode_table.py RUNS.csv"""
import csv,statistics as st,collections,math,sys
rows=list(csv.DictReader(open(sys.argv[1])))
d=collections.defaultdict(list); names={}
for r in rows:
    key=(r['clip'],r['run'],r['func'])
    if r['func']=='one':
        # mid/last by order of appearance per clip/run
        names.setdefault((r['clip'],r['run']),[])
        if r['joint_name'] not in names[(r['clip'],r['run'])]: names[(r['clip'],r['run'])].append(r['joint_name'])
        key=(r['clip'],r['run'],'one:'+r['joint_name'])
    d[key].append(float(r['ns']))
m={k:st.median(v) for k,v in d.items()}
clips=[]
for r in rows:
    if r['clip'] not in clips: clips.append(r['clip'])
print("| clip | ACL pose | ours one-shot | ratio | ours playing | ratio | joint mid: ACL / ours | ratio | joint last: ACL / ours | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|")
g=collections.defaultdict(list)
for c in clips:
    a=m[(c,'acl','pose')]; p=m[(c,'ours1','pose')]; q=m[(c,'ours1','cached')]
    js=names.get((c,'ours1'),[])
    cells=[]
    for tag,j in zip(('mid','last'),js):
        aj=m.get((c,'acl1','one:'+j)); oj=m[(c,'ours1','one:'+j)]
        cells.append(f"{j}: {aj:.0f} / {oj:.0f} | {oj/aj:.2f}")
        g[tag].append(oj/aj)
    g['pose'].append(p/a); g['cached'].append(q/a)
    print(f"| {c} | {a:.0f} | {p:.0f} | {p/a:.2f} | {q:.0f} | {q/a:.2f} | "+" | ".join(cells)+" |")
gm=lambda v: math.exp(sum(map(math.log,v))/len(v))
print(f"| geomean | | | **{gm(g['pose']):.2f}** | | **{gm(g['cached']):.2f}** | | **{gm(g['mid']):.2f}** | | **{gm(g['last']):.2f}** |")
print("clips above 1.0 playing:", sum(x>1 for x in g['cached']), "one-shot:", sum(x>1 for x in g['pose']))
