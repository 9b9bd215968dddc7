# SPDX-License-Identifier: GPL-2.0
"""The kernel sources keep their layering (docs/architecture.md): no two
files of a module call each other in a circle, no file grows past ~800
lines without saying why at its top, and the shared code really is shared
(one library module, common/smr-common.ko).
Read from the sources, so it needs no kernel build."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = ["dm-smr", "dm-caveat"]
MAX_LINES = 800

DEF = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(\w+)\([^;]*$", re.M)
EXTERN = re.compile(r"^(?:const )?struct \w+ (\w+)(?:\[\])? = \{", re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def read(path):
    with open(path) as f:
        return f.read()


def sources(mod):
    d = os.path.join(ROOT, mod)
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if f.endswith(".c") and not f.endswith(".mod.c"))


def strip(text):
    return STRING.sub('""', COMMENT.sub(" ", text))


def graph(mod):
    files = sources(mod)
    text = {f: strip(read(f)) for f in files}
    defs = {f: set(DEF.findall(t)) | set(EXTERN.findall(t)) for f, t in text.items()}
    edges = {f: set() for f in files}
    for f in files:
        words = set(re.findall(r"\b\w+\b", text[f]))
        for g in files:
            if g != f and (defs[g] - defs[f]) & words:
                edges[f].add(g)
    return edges


def cycles(edges):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
                comp.append(os.path.basename(w))
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


class LayeringTest(unittest.TestCase):
    def test_no_call_cycles(self):
        for mod in MODULES + ["common"]:
            with self.subTest(module=mod):
                self.assertEqual(cycles(graph(mod)), [])

    def test_cycle_finder_finds_one(self):
        a, b, c = "a.c", "b.c", "c.c"
        self.assertEqual(cycles({a: {b}, b: {c}, c: {a}}), [[a, b, c]])
        self.assertEqual(cycles({a: {b}, b: set(), c: {a}}), [])

    def test_graph_sees_calls(self):
        edges = graph("dm-smr")
        target = os.path.join(ROOT, "dm-smr", "dm-smr-target.c")
        md = os.path.join(ROOT, "dm-smr", "dm-smr-metadata.c")
        self.assertIn(md, edges[target])

    def test_file_sizes(self):
        for mod in MODULES + ["common"]:
            d = os.path.join(ROOT, mod)
            for f in sorted(os.listdir(d)):
                if not f.endswith((".c", ".h")) or f.endswith(".mod.c"):
                    continue
                text = read(os.path.join(d, f))
                n = text.count("\n")
                if n > MAX_LINES:
                    self.assertIn("Why this file is long:", text[:3000],
                                  "%s/%s has %d lines" % (mod, f, n))

    def test_common_is_one_library_module(self):
        # common/ builds smr-common.ko from every one of its .c files; no
        # target compiles or includes them again (one copy, one claim
        # registry), and the top Kbuild builds the library.
        kbuild = read(os.path.join(ROOT, "common", "Kbuild"))
        self.assertIn("obj-m += smr-common.o", kbuild)
        for src in sources("common"):
            self.assertIn(os.path.basename(src).replace(".c", ".o"), kbuild)
        self.assertIn("obj-m += common/", read(os.path.join(ROOT, "Kbuild")))
        for mod in MODULES:
            self.assertNotIn("smr-", read(os.path.join(ROOT, mod, "Kbuild"))
                             .split(":=", 1)[1].replace(mod + "-", ""))
            for src in sources(mod):
                self.assertIsNone(re.search(r'#include "smr-\w+\.c"', read(src)), src)


if __name__ == "__main__":
    unittest.main()
