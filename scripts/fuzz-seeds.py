#!/usr/bin/env python3
"""Writes the fuzz seed corpus (fuzz/corpus/<target>/): the test fixtures, the first
kilobytes of each shared real trace (decompressed; never committed), gzip versions, and a
few share-link payloads. Usage: scripts/fuzz-seeds.py [TRACES_DIR]"""
import gzip, hashlib, os, pathlib, sys

root = pathlib.Path(__file__).resolve().parent.parent
traces = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "traces"
out = root / "fuzz" / "corpus"
HEAD = 4096

def put(target, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)

seeds = []
for f in sorted((root / "tests" / "fixtures").glob("*.json")):
    seeds.append(f.read_bytes())
if traces.is_dir():
    for f in sorted(traces.rglob("*.json*")):
        opener = gzip.open if f.name.endswith(".gz") else open
        try:
            with opener(f, "rb") as fh:
                seeds.append(fh.read(HEAD))
        except OSError as e:
            print(f"skip {f.name}: {e}", file=sys.stderr)
else:
    print(f"{traces} is absent: seeding from the fixtures only", file=sys.stderr)

for s in seeds:
    small = s[:HEAD]
    put("report", small)
    put("report", gzip.compress(small))
    put("report_gzip", small)
    put("split", small)
    # Single events for the scanner: the text between the first '{' after traceEvents and
    # the next line break is usually one event.
    i = small.find(b'"traceEvents"')
    for line in small[max(i, 0):].split(b"\n")[1:40]:
        line = line.strip().rstrip(b",")
        if line.startswith(b"{"):
            put("scanner", line)
            # The structural scan: the first byte picks the bracket kind, the rest follows it.
            put("structural", b"\x01" + line[1:])
put("share", b"")
put("share", b"eJyrVkrLz1eyUkpKLFKqBQAdegQ0")
print(f"seeds in {out}: " + ", ".join(f"{d.name} {len(list(d.iterdir()))}" for d in sorted(out.iterdir())))
