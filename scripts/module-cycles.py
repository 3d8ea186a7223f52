#!/usr/bin/env python3
"""Finds import circles between the source files of each crate in the workspace.

Usage: scripts/module-cycles.py [--verbose] [--strict] [CRATE_DIR ...]   (default: every workspace crate)

A file imports another when it names an item of the other's module through a path that starts
with `crate::`, `super::` or `self::` (in a `use` declaration, `pub use` re-exports included, or
inline in code). A file naming its own child modules (`mod x;`, and `use x::Y` / `pub use x::Y`
by the child's bare name) is not an import: a parent declaring and re-exporting its children is
how a crate is laid out. `--strict` counts those bare child paths too, which also shows the
parent-child pairs where a child uses an item its parent defines while the parent re-exports
the child. Each path resolves to the deepest module file it names
(`crate::a::b::C` -> `a/b.rs` or `a/b/mod.rs`, else `a.rs` / `a/mod.rs`). The circles are the
strongly connected components of that graph with more than one file (Tarjan's algorithm).

Inline `mod name { ... }` blocks (tests) are skipped together with their contents, so test-only
imports do not count. Exit status 1 when any crate has a circle.
"""

import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def workspace_crates():
    text = open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read()
    members = re.search(r"members\s*=\s*\[([^\]]*)\]", text)
    return [os.path.join(ROOT, m) for m in re.findall(r'"([^"]+)"', members.group(1))]


def strip_comments_and_strings(src):
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r'r#*"(?:.|\n)*?"#*', '""', src)
    src = re.sub(r'"(?:\\.|[^"\\])*"', '""', src)
    src = re.sub(r"'(?:\\.|[^'\\])'", "' '", src)
    return src


def drop_inline_modules(src):
    """Removes `#[cfg(test)] mod x { ... }` and any other inline `mod x { ... }` bodies."""
    out, i = [], 0
    pattern = re.compile(r"\bmod\s+\w+\s*\{")
    while True:
        m = pattern.search(src, i)
        if not m:
            out.append(src[i:])
            return "".join(out)
        out.append(src[i : m.start()])
        depth, j = 1, m.end()
        while j < len(src) and depth:
            depth += {"{": 1, "}": -1}.get(src[j], 0)
            j += 1
        i = j


def expand_use_tree(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        return [re.sub(r"\bas\w+$", "", tree)]
    prefix, body = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(body):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(body[start:k])
            start = k + 1
    parts.append(body[start:])
    paths = []
    for part in filter(None, parts):
        paths += [prefix + p for p in expand_use_tree(part)]
    return paths


class Crate:
    def __init__(self, crate_dir):
        self.src = os.path.join(crate_dir, "src")
        self.files = {}
        for dirpath, _, names in os.walk(self.src):
            for name in names:
                if name.endswith(".rs"):
                    path = os.path.join(dirpath, name)
                    self.files[self.module_of(path)] = path

    def module_of(self, path):
        rel = os.path.relpath(path, self.src)[: -len(".rs")].split(os.sep)
        if rel[-1] in ("mod", "lib", "main"):
            rel = rel[:-1]
        return tuple(rel)

    def resolve(self, path_segments):
        """The deepest module file a path names, or None."""
        for k in range(len(path_segments), -1, -1):
            module = tuple(path_segments[:k])
            if module in self.files:
                return module
        return None

    def imports(self, module, path):
        src = drop_inline_modules(strip_comments_and_strings(open(path, encoding="utf-8").read()))
        paths = []
        for tree in re.findall(r"\buse\s+([^;]+);", src):
            paths += expand_use_tree(tree)
        paths += re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", src)
        targets = set()
        for p in paths:
            segs = [s for s in p.split("::") if s]
            if STRICT and segs and tuple(module) + (segs[0],) in self.files:
                # A path that starts at one of this file's own child modules (`use child::X;`,
                # `pub use child::X;`, 2018-edition relative paths).
                segs = ["self"] + segs
            if not segs or segs[0] not in ("crate", "super", "self"):
                continue
            base = list(module)
            if segs[0] == "crate":
                base, segs = [], segs[1:]
            else:
                # `self` is this file's module; each `super` climbs one level.
                while segs and segs[0] in ("self", "super"):
                    if segs[0] == "super":
                        base = base[:-1]
                    segs = segs[1:]
            target = self.resolve(base + segs)
            if target is not None and target != module:
                targets.add(target)
        return targets

    def cycles(self):
        graph = {m: self.imports(m, p) for m, p in self.files.items()}
        index, low, stack, on_stack, sccs = {}, {}, [], set(), []
        counter = [0]

        def strongconnect(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on_stack.add(v)
            for w in graph[v]:
                if w not in index:
                    strongconnect(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1:
                    sccs.append(sorted(scc))

        sys.setrecursionlimit(10_000)
        for v in sorted(graph):
            if v not in index:
                strongconnect(v)
        return graph, sccs


STRICT = False


def main(argv):
    global STRICT
    STRICT = "--strict" in argv
    verbose = "--verbose" in argv
    dirs = [a for a in argv if not a.startswith("--")] or workspace_crates()
    found = False
    for crate_dir in dirs:
        crate = Crate(os.path.abspath(crate_dir))
        graph, sccs = crate.cycles()
        name = os.path.basename(os.path.abspath(crate_dir))
        print(f"{name}: {len(graph)} files, {sum(len(t) for t in graph.values())} imports, "
              f"{len(sccs)} circle(s)")
        for scc in sccs:
            found = True
            files = [os.path.relpath(crate.files[m], ROOT) for m in scc]
            print(f"  circle of {len(scc)} files: " + ", ".join(files))
            if verbose:
                members = set(scc)
                for m in scc:
                    inside = sorted(os.path.relpath(crate.files[t], ROOT)
                                    for t in graph[m] if t in members)
                    print(f"    {os.path.relpath(crate.files[m], ROOT)} -> {', '.join(inside)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
