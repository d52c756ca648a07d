#!/usr/bin/env python3
"""Fails on an import cycle in src/, between files and between the modules they sit in.

Every `crate::` / `super::` / `self::` path in a file (in `use` trees and in code) is
resolved to the deepest file module it names; test modules (`#[cfg(test)] mod x;` and
`#[cfg(test)] mod tests { .. }`) are left out. An edge parent -> child from a `mod child;`
declaration alone does not count, but a child naming an item of its parent's mod.rs does.
Besides the file graph, each directory level is checked on its own: analysis/passes/attention.rs
naming report.rs is an edge analysis -> report among the crate's top modules.

Also checks the sizes the redesign set: no source file over 600 lines, at most five over 400
(test modules aside), and no function over FN_LINES lines outside tests (LONG_FNS: the ones
that were longer when that check came in, which may only shrink). The files that were larger when the check came in are listed in
OVERSIZED with their size then: they may shrink, not grow, and leave the list once under 400.

Usage: scripts/check_layers.py [--graph] [--src DIR] [--self-test]
  --graph      prints the file edges
  --self-test  checks that small trees with a cycle (files; a mod.rs and its child) fail
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
if "--src" in sys.argv:
    ROOT = sys.argv[sys.argv.index("--src") + 1]
# Entry points: the binaries are crates of their own that use the library from outside.
BINARIES = {"main.rs", os.path.join("bin", "app.rs"), os.path.join("bin", "worker.rs")}
MAX_LINES, SOFT_LINES, MAX_SOFT = 600, 400, 5
# Files over 400 lines when this check came in, at their size then (lines). Split them; never
# raise a figure.
OVERSIZED = {
    "report/mod.rs": 437,
}
# Functions (outside tests) longer than this many lines, signature to closing brace, fail;
# those longer when the check came in are listed in LONG_FNS ("file:name": lines then). They
# may shrink, not grow, and leave the list once under the limit.
FN_LINES = 80
LONG_FNS = {}


IDENT = re.compile(r"[A-Za-z0-9_]")


def blank(text):
    """Comments, strings and char literals blanked (newlines kept), so braces match and lines count."""
    out, i, n = [], 0, len(text)
    keep = lambda s: re.sub(r"[^\n]", " ", s)
    while i < n:
        c = text[i]
        prev_ident = i > 0 and IDENT.match(text[i - 1])
        end = None
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            depth, end = 0, i
            while end < n:
                if text.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif text.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                    if not depth:
                        break
                else:
                    end += 1
        elif not prev_ident and (m := re.match(r'b?r(#*)"', text[i:i + 300])):
            close = text.find('"' + m.group(1), i + m.end())
            end = n if close < 0 else close + 1 + len(m.group(1))
        elif c == '"' or (c == "b" and not prev_ident and text.startswith('b"', i)):
            end = i + (2 if c == "b" else 1)
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            end += 1
        elif c == "'" or (c == "b" and not prev_ident and text.startswith("b'", i)):
            m = re.match(r"b?'(?:\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'", text[i:i + 16])
            end = i + m.end() if m else None
        if end is None:
            out.append(c)
            i += 1
        else:
            out.append(keep(text[i:end]))
            i = end
    return "".join(out)

def match_brace(code, k):
    depth = 0
    for j in range(k, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if not depth:
                return j
    return len(code) - 1

def cut_tests(code):
    """Inline `#[cfg(test)] mod x { .. }` blanked, lines kept."""
    for m in list(re.finditer(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+\w+\s*\{", code)):
        j = match_brace(code, m.end() - 1)
        code = code[:m.start()] + re.sub(r"[^\n]", " ", code[m.start():j + 1]) + code[j + 1:]
    return code

def functions(text):
    """(name, first line, lines) of every fn with a body, the signature's line to the closing brace."""
    code = cut_tests(blank(text))
    out = []
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        k, depth = m.end(), 0
        while k < len(code):
            ch = code[k]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch in "{;":
                break
            k += 1
        if k >= len(code) or code[k] == ";":
            continue
        end = match_brace(code, k)
        first = code.count("\n", 0, m.start()) + 1
        out.append((m.group(1), first, code.count("\n", m.start(), end) + 1))
    return out


def module_of(rel):
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def strip(text):
    """Source without comments and string literals (paths in docs and strings are not imports)."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def test_modules(text):
    """Names of `#[cfg(test)] mod x;` declarations, and the text with inline test modules cut."""
    declared = set(re.findall(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+(\w+)\s*;", text))
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return declared, "".join(out)


def use_paths(tree, prefix=""):
    """Expands a use tree (`a::{b, c::{d, e}}`) into full paths."""
    tree = tree.strip()
    depth = 0
    for k, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                head = prefix + tree[:k]
                inner = tree[k + 1:tree.rindex("}")]
                items, d, start = [], 0, 0
                for n, c in enumerate(inner):
                    d += {"{": 1, "}": -1}.get(c, 0)
                    if c == "," and d == 0:
                        items.append(inner[start:n])
                        start = n + 1
                items.append(inner[start:])
                return [p for it in items if it.strip() for p in use_paths(it, head)]
            depth += 1
    path = (prefix + tree).split(" as ")[0].strip()
    return [re.sub(r"::self$", "", path)]


def main():
    files, sources = {}, {}
    for dirpath, _, names in os.walk(ROOT):
        for n in names:
            if n.endswith(".rs"):
                rel = os.path.relpath(os.path.join(dirpath, n), ROOT)
                sources[rel] = open(os.path.join(dirpath, n), encoding="utf-8").read()
                if rel not in BINARIES:
                    files[rel] = sources[rel]
    modules = {module_of(rel): rel for rel in files}
    tests = set()
    for rel, text in files.items():
        declared, _ = test_modules(strip(text))
        for name in declared:
            tests.add(module_of(rel) + (name,))
    edges = {}
    for rel, text in files.items():
        me = module_of(rel)
        if me in tests:
            continue
        _, code = test_modules(strip(text))
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", code):
            paths += use_paths(m.group(1).replace("\n", " "))
        # Paths in code, with the use trees (already expanded above) left out.
        code = re.sub(r"\buse\s+[^;]+;", "", code)
        paths += re.findall(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)", code)
        # A path may also start at one of this module's own children (`build::build()` in a
        # mod.rs, `use build::Built;`).
        children = {m[-1] for m in modules if len(m) == len(me) + 1 and m[:len(me)] == me}
        for m in re.finditer(r"(?<![\w:])(\w+)((?:::\w+)+)", code):
            if m.group(1) in children:
                paths.append("self::" + m.group(1) + m.group(2))
        for p in paths:
            seg = [s for s in p.replace(" ", "").split("::") if s]
            if seg and seg[0] in children:
                seg = ["self"] + seg
            if not seg or seg[0] not in ("crate", "super", "self"):
                continue
            base = list(me)
            if seg[0] == "crate":
                base, seg = [], seg[1:]
            while seg and seg[0] in ("super", "self"):
                if seg[0] == "super":
                    base = base[:-1] if base else base
                seg = seg[1:]
            target = tuple(base)
            for s in seg:
                if target + (s,) in modules:
                    target = target + (s,)
                else:
                    break
            if target != me and target in modules and target not in tests:
                edges.setdefault(me, set()).add(target)

    problems = []
    if "--graph" in sys.argv:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f"{'::'.join(a) or 'crate'} -> {'::'.join(b) or 'crate'}")

    def cycles(graph):
        index, low, stack, on, out = {}, {}, [], set(), []

        def visit(v):
            index[v] = low[v] = len(index)
            stack.append(v)
            on.add(v)
            for w in graph.get(v, ()):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

        sys.setrecursionlimit(10000)
        for v in list(graph):
            if v not in index:
                visit(v)
        return out

    name = lambda m: "::".join(m) or "crate"
    for comp in cycles(edges):
        problems.append("file cycle: " + ", ".join(name(m) for m in comp))
    # Each directory level: an edge between two files is an edge between the children of their
    # deepest common module that contain them.
    levels = {}
    for a, bs in edges.items():
        for b in bs:
            k = 0
            while k < min(len(a), len(b)) and a[k] == b[k]:
                k += 1
            if k < len(a) and k < len(b):
                levels.setdefault(a[:k], {}).setdefault(a[:k + 1], set()).add(b[:k + 1])
    for parent, graph in sorted(levels.items()):
        for comp in cycles(graph):
            problems.append(f"module cycle in {name(parent)}: " + ", ".join(name(m) for m in comp))

    sizes = []
    for rel, text in files.items():
        if module_of(rel) not in tests:
            sizes.append((text.count("\n"), rel))
    sizes.sort(reverse=True)
    over = []
    for n, rel in sizes:
        ceiling = OVERSIZED.get(rel)
        if ceiling is not None:
            if n > ceiling:
                problems.append(f"size: src/{rel} grew to {n} lines (it may only shrink from {ceiling})")
            if n > SOFT_LINES:
                over.append(f"{rel} ({n})")
        elif n > MAX_LINES:
            problems.append(f"size: src/{rel} has {n} lines (at most {MAX_LINES})")
        elif n > SOFT_LINES:
            over.append(f"{rel} ({n})")
            problems.append(f"size: src/{rel} has {n} lines; a new file over {SOFT_LINES} must be split")
    stale = [] if "--src" in sys.argv else [rel for rel in OVERSIZED if rel not in files]
    for rel in stale:
        problems.append(f"size: OVERSIZED lists src/{rel}, which is gone: take it off the list")
    problems += long_functions(sources, tests)
    if len(over) > MAX_SOFT:
        print(f"not yet at the target of at most {MAX_SOFT} files over {SOFT_LINES} lines: {len(over)}: " + ", ".join(over))
    n_edges = sum(len(v) for v in edges.values())
    for p in problems:
        print(p)
    print(f"check_layers: {len(modules)} files, {n_edges} imports between them, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


def long_functions(files, tests):
    """Functions over FN_LINES lines that LONG_FNS does not allow (or allows fewer lines)."""
    problems, seen = [], {}
    for rel, text in files.items():
        if module_of(rel) in tests:
            continue
        for name, first, n in functions(text):
            key = f"{rel}:{name}"
            seen[key] = max(seen.get(key, 0), n)
            ceiling = LONG_FNS.get(key, FN_LINES)
            if n > ceiling:
                was = f"it may only shrink from {ceiling}" if key in LONG_FNS else f"at most {FN_LINES}"
                problems.append(f"size: fn {name} (src/{rel}:{first}) has {n} lines ({was}); split it into named steps")
    if "--src" not in sys.argv:
        for key, ceiling in LONG_FNS.items():
            if seen.get(key, 0) <= FN_LINES:
                problems.append(f"size: LONG_FNS lists {key}, now {seen.get(key, 0)} lines: take it off the list")
    return problems


def self_test():
    import subprocess
    import tempfile
    trees = {
        "two files": ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "use crate::b::B;\npub struct A;\n",
                       "b.rs": "pub struct B(crate::a::A);\n"}, 1),
        "a mod.rs and its child": ({"lib.rs": "mod m;\n", "m/mod.rs": "mod c;\npub struct O;\nuse c::C;\n",
                                    "m/c.rs": "use super::O;\npub struct C;\n"}, 1),
        "a test module": ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "pub struct A;\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n",
                           "b.rs": "pub struct B(crate::a::A);\n"}, 0),
        "a long function": ({"lib.rs": "fn f() {\n" + "    g();\n" * 80 + "}\n"}, 1),
        "a long test": ({"lib.rs": "#[cfg(test)]\nmod tests {\n    fn f() {\n" + "        g();\n" * 90 + "    }\n}\n"}, 0),
        "downward only": ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "pub struct A; // crate::b::B\n",
                           "b.rs": "pub struct B(crate::a::A);\n"}, 0),
    }
    failed = 0
    for name, (tree, want) in trees.items():
        with tempfile.TemporaryDirectory() as d:
            for rel, text in tree.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                open(os.path.join(d, rel), "w").write(text)
            rc = subprocess.run([sys.executable, __file__, "--src", d], capture_output=True).returncode
            if rc != want:
                print(f"self-test: {name}: exit {rc}, expected {want}")
                failed += 1
    print(f"check_layers self-test: {len(trees) - failed} of {len(trees)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(self_test() if "--self-test" in sys.argv else main())
