#!/usr/bin/env python3
"""Measures whether the rest of a question (its entity's words taken out), embedded
alone, separates answerable entity questions from near-miss unanswerable ones
(BENCHMARKS.md, "Session 13", mechanism 2). Uses the NumPy MiniLM of
embed_reference.py over the installed model's weights; needs numpy, scipy,
safetensors, tokenizers and pyyaml:

    /tmp/ref/bin/python scripts/anchor_rest.py probe-teacher probe-nurse probe-sre probe

For every query naming an entity of the store (a word of three letters or more of an
entity's name), prints the best cosine of the rest against the cues, title and body
of the memories naming it: for an unanswerable query over all of them, for an
answerable one over its gold memories. Persona folders are read from
$GITLOOM_SHARED/data (default ../shared/data beside this checkout).
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from embed_reference import MiniLm, model_dir
m = MiniLm(model_dir())
DATA = os.path.join(
    os.environ.get('GITLOOM_SHARED', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared')),
    'data')
STOP=set("the a an of to in on at for and or my me i is was are what who whats what's when where how did do does with his her he she it its".split())
def fm(path):
    t=open(path).read()
    parts=t.split('---',2)
    import yaml
    d=yaml.safe_load(parts[1]); body=parts[2].strip()
    return d, body
def words(s): return re.findall(r"[a-zà-ÿ0-9]+", s.lower())
res=[]
for persona in sys.argv[1:]:
    root=os.path.join(DATA, persona)
    mems={}
    for p in glob.glob(root+'/memories/**/*.md', recursive=True):
        d,b=fm(p); rel=os.path.relpath(p,root+'/memories')
        ents=[]
        for e in d.get('entities') or []:
            n=e['name'] if isinstance(e,dict) else re.sub(r'\s*\([^)]*\)\s*$','',e)
            ents.append(n)
        mems[rel]=dict(title=d.get('title',''),cues=d.get('cues') or [],ents=ents,body=b)
    # entity token -> memories
    tok2mem={}
    for rel,mm in mems.items():
        for n in mm['ents']:
            for w in words(n):
                if len(w)>=3 and w not in STOP: tok2mem.setdefault(w,set()).add(rel)
    for line in open(root+'/queries.jsonl'):
        q=json.loads(line)
        qw=words(q['query'])
        hit=[w for w in qw if w in tok2mem]
        if not hit: continue
        cands=set().union(*[tok2mem[w] for w in hit])
        resid=' '.join(w for w in re.findall(r"[a-zà-ÿ0-9']+", q['query'].lower()) if re.sub(r"'s$","",w) not in hit and w not in ("'s",))
        texts=[q['query'],resid]
        cl=sorted(cands)
        unit=[]
        for c in cl:
            for cue in mems[c]['cues']: unit.append((c,'cue',cue))
            unit.append((c,'title',mems[c]['title']))
            unit.append((c,'body',mems[c]['body'][:1000]))
        V,_=m.embed(texts+[u[2] for u in unit])
        qv,rv=V[0],V[1]; U=V[2:]
        best={}
        for (c,k,t),u in zip(unit,U):
            s_full=float(qv@u); s_res=float(rv@u)
            b=best.setdefault(c,{'full':-1,'res':-1,'rescue':-1,'fullcue':-1})
            b['full']=max(b['full'],s_full); b['res']=max(b['res'],s_res)
            if k=='cue': b['rescue']=max(b['rescue'],s_res); b['fullcue']=max(b['fullcue'],s_full)
        gold=set(q['gold'])
        if q['abstain']:
            top=max(best.items(), key=lambda kv: kv[1]['res'])
            res.append((persona,q['id'],'UNANS',q['query'],resid,top[0],top[1]))
        else:
            g=[(c,best[c]) for c in cl if c in gold]
            if not g: res.append((persona,q['id'],'ANS-nogold-cand',q['query'],resid,None,None)); continue
            res.append((persona,q['id'],'ANS',q['query'],resid,g[0][0],max((x[1] for x in g), key=lambda b:b['res'])))
for r in res:
    b=r[6]
    print(r[2], r[0][-7:], r[1], repr(r[3])[:55].ljust(55), '|', repr(r[4])[:35].ljust(35), '' if b is None else ' '.join(f"{k}={v:.2f}" for k,v in b.items()), r[5])
