#!/usr/bin/env python3
"""FeatureBench's top-object classification emulated over fbkit's traces (issue 68's probe).

FeatureBench (featurebench/classification/llm_top_classifier.py, p2p_chooser.py,
code_classifier.py) walks the objects a test file's run reaches layer by layer from its test
functions (5 deep; objects in test folders, conftests and __init__.py skipped), asks a model
of each object "tested or not" and does not descend below a chosen one; it then drops the
most used chosen objects until enough other test files touch none, draws up to 5 such files
as P2P files, and promotes the chosen objects' callees outside those files that were
candidates too. Here the model is a stand-in: every candidate ("all", its prompt's default)
or exactly the objects FeatureBench's statement shows ("oracle").

usage: featurebench_top_emulation.py DATASET --work DIR [--min-p2p 1,3,5,10]
  DATASET: bench/top_objects_dataset.py's output (the cases and FeatureBench's keys);
  DIR/OWNER__NAME/{trace,graph}.json as featurebench_repro.py prepares them.
Prints precision and recall against FeatureBench's interfaces, overall and per repository.
"""
import json, sys, os, random, collections, re
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import featurebench_repro as fr
from top_objects_dataset import key_of

def load(repo_dir):
    g=json.load(open(os.path.join(repo_dir,'graph.json')))
    t=json.load(open(os.path.join(repo_dir,'trace.json')))
    by=collections.defaultdict(list)
    for n in g['nodes']:
        if n['kind'] in ('function','method','class'):
            by[n['path']].append(n)
    return g,t,by

def resolve(by, path, line, name, cache):
    k=(path,line,name)
    if k in cache: return cache[k]
    best=None
    for n in by.get(path,()):
        q=n['qualname'].split('#')[0]
        if q.split('.')[-1] != name:
            continue
        if n['start_line'] <= line <= n['end_line'] or 0 <= n['start_line'] - line <= 8:
            if best is None or abs(n['start_line']-line)<abs(best['start_line']-line): best=n
    cache[k]=best['id'] if best else f"{path}::?{name}@{line}"
    return cache[k]

def file_objects(f, by, cache):
    adj=collections.defaultdict(set); objs={}
    for a,b,_ in f['edges']:
        if b is None: continue
        bid=resolve(by,*b,cache); objs[bid]=b
        if a is not None:
            aid=resolve(by,*a,cache); objs[aid]=a; adj[aid].add(bid)
    return objs, adj

def rule_ok(oid, info):
    path,line,name=info
    p='/'+path
    if '/test/' in p or '/tests/' in p or 'conftest.py' in p or not p.endswith('.py') or name.startswith('<') or '__init__.py' in p: return False
    return True

def emulate(case_file, t, by, cache, llm, seed=0, min_p2p=1, max_p2p=5, max_depth=5):
    files={f['file']:f for f in t['files']}
    f=files[case_file]
    objs,adj=file_objects(f,by,cache)
    tps={re.sub(r'\[.*$','',n.split('::')[-1]) for n in f['nodeids']}
    start=[o for o,i in objs.items() if i[2] in tps]
    visited=set(start); layer=list(start); tops=set(); cands=set(); depth=0
    while layer and depth<max_depth:
        nxt=[]
        for o in layer:
            for c in sorted(adj.get(o,())):
                if c in visited: continue
                visited.add(c); nxt.append(c)
        if not nxt: break
        filt=[c for c in nxt if rule_ok(c,objs[c])]
        cands.update(filt)
        chosen={c for c in filt if llm(c, depth+1)}
        tops|=chosen
        layer=[c for c in nxt if c not in chosen]; depth+=1
    # P2P pruning
    others={}
    for name,g in files.items():
        if name==case_file or g.get('status')!='ok': continue
        o2,_=file_objects(g,by,cache); others[name]=set(o2)
    usage={o:sum(1 for s in others.values() if o in s) for o in tops}
    work=set(tops)
    while work:
        valid=[n for n,s in others.items() if not (work & s)]
        if len(valid)>=min_p2p: break
        work.remove(max(sorted(work), key=lambda o: usage[o]))
    valid=sorted(n for n,s in others.items() if not (work & s))
    rnd=random.Random(seed)
    p2p=rnd.sample(valid, min(len(valid),max_p2p)) if valid else []
    p2pset=set().union(*[others[n] for n in p2p]) if p2p else set()
    final={o for o in work if o not in p2pset}
    # specific BFS + promotion
    q=collections.deque(sorted(work)); seen=set(work)
    while q:
        o=q.popleft()
        for c in sorted(adj.get(o,())):
            if c in seen: continue
            seen.add(c)
            if c in p2pset: q.append(c); continue
            info=objs[c]; p='/'+info[0]
            if info[2]=='<module>' or '/tests/' in p or os.path.basename(info[0]) in (os.path.basename(case_file),'conftest.py','__init__.py'): continue
            q.append(c)
            if c in cands: final.add(c)
    return final, cands, tops, work

def keys_of(ids):
    return {key_of(i) for i in ids if '::?' not in i}


def prf(v):
    return (round(v[0] / max(1, v[0] + v[1]), 3), round(v[0] / max(1, v[0] + v[2]), 3))


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--work", required=True)
    ap.add_argument("--min-p2p", default="1")
    args = ap.parse_args()
    ds = json.load(open(args.dataset))
    byrepo = collections.defaultdict(list)
    for c in ds["cases"]:
        byrepo[c["repo"]].append(c)
    runs = [("oracle", 1)] + [("all", int(m)) for m in args.min_p2p.split(",")]
    tot = {r: [0, 0, 0] for r in runs}
    per = {r: collections.defaultdict(lambda: [0, 0, 0]) for r in runs}
    cand = [0, 0]
    for repo in sorted(byrepo):
        g, t, by = load(os.path.join(args.work, repo.replace("/", "__")))
        cache = {}
        for c in byrepo[repo]:
            keys = set(c["keys"])
            for run in runs:
                llm = (lambda o, d: key_of(o) in keys) if run[0] == "oracle" else (lambda o, d: True)
                final, cands, _, _ = emulate(c["f2p"], t, by, cache, llm, min_p2p=run[1])
                fk = keys_of(final)
                v = (len(fk & keys), len(fk - keys), len(keys - fk))
                for i in range(3):
                    tot[run][i] += v[i]
                    per[run][repo][i] += v[i]
                if run[0] == "oracle":
                    cand[0] += len(keys_of(cands) & keys)
                    cand[1] += len(keys)
    print(f"candidates hold {cand[0]} of {cand[1]} interfaces")
    for run in runs:
        print(f"{run[0]:6} min_p2p {run[1]:2}: P/R {prf(tot[run])}  " +
              " ".join(f"{r.split('/')[1]}:{prf(v)}" for r, v in sorted(per[run].items())))


if __name__ == "__main__":
    main()
