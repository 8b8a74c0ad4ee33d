"""Writes DIR/queries.lua for wrk: 100 retrieve requests on namespace NS, each the
first cue of a memory of DIR/corpus picked with a fixed seed.
Usage: python3 scripts/bench_queries.py DIR NS"""
import glob, random, re, sys, urllib.parse

w, ns = sys.argv[1], sys.argv[2]
random.seed(7)
files = sorted(glob.glob(f"{w}/corpus/**/*.md", recursive=True))
qs = []
for f in random.sample(files, 200):
    m = re.search(r"cues:\n  - (.*)\n", open(f).read())
    if m:
        qs.append(m.group(1))
qs = qs[:100]
open(f"{w}/queries.lua", "w").write(
    "local qs = {" + ",".join('"%s"' % urllib.parse.quote(q) for q in qs) + "}\n"
    "local i = 0\nrequest = function()\n  i = i % #qs + 1\n"
    f'  return wrk.format("GET", "/v1/namespaces/{ns}/retrieve?limit=10&q=" .. qs[i])\nend\n')
