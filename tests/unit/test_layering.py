# SPDX-License-Identifier: GPL-2.0
"""The kernel sources keep their layering (docs/architecture.md): no two
files of a module call each other in a circle, no file grows past ~800
lines without saying why at its top, and the shared code really is shared
(one library module, common/smr-common.ko). The userspace programs keep
theirs: each program's folder over userspace/lib/, the library including
no program's file, no program another's.
Read from the sources, so it needs no kernel build."""
import os
import re
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = ["dm-smr", "dm-caveat"]
MAX_LINES = 800

DEF = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(\w+)\([^;]*$", re.M)
EXTERN = re.compile(r"^(?:const )?struct \w+ (\w+)(?:\[\])? = \{", re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')

USERSPACE = os.path.join(ROOT, "userspace")
# Where a quoted #include is looked for, after the including file's own
# folder: userspace/Makefile's -I directories.
INCLUDE_PATH = ["lib", "../dm-smr/uapi", "../dm-caveat/uapi"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


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


def userspace_includes(top=USERSPACE):
    """(file, folder it includes from) for every quoted #include in a C
    file under top, both relative to top; the folder is None when the
    header is found nowhere."""
    out = []
    for d, _, names in os.walk(top):
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            path = os.path.join(d, n)
            for inc in INCLUDE.findall(read(path)):
                found = None
                for where in [os.path.relpath(d, top)] + INCLUDE_PATH:
                    cand = os.path.normpath(os.path.join(top, where, inc))
                    if os.path.isfile(cand):
                        found = os.path.relpath(os.path.dirname(cand), top)
                        break
                out.append((os.path.relpath(path, top), found))
    return out


def floor_breaks(includes):
    """The includes that break the floors: a file may include from its own
    folder, lib/ or the uapi headers, so lib/ from nothing above it and a
    program from no other program."""
    uapi = {os.path.normpath(p) for p in INCLUDE_PATH if "uapi" in p}
    return ["%s from %s" % (f, found) for f, found in includes
            if found not in {f.split(os.sep)[0], "lib"} | uapi]


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

    def test_userspace_floors(self):
        includes = userspace_includes()
        self.assertGreater(len(includes), 10)
        self.assertEqual(floor_breaks(includes), [])

    def test_userspace_include_path(self):
        # Only the library is on the include path: a program's headers are
        # its own (found beside the file that includes them).
        mk = read(os.path.join(USERSPACE, "Makefile"))
        flags = re.search(r"^SMR_CPPFLAGS :=(.*)$", mk, re.M).group(1).split()
        self.assertEqual([f[2:] for f in flags if f.startswith("-I")], INCLUDE_PATH)

    def test_floor_finder_finds_breaks(self):
        with tempfile.TemporaryDirectory() as top:
            files = {"lib/a.h": '#include "../p/x.h"\n',
                     "lib/b.c": '#include "a.h"\n',
                     "p/x.h": "",
                     "p/x.c": '#include "x.h"\n#include "a.h"\n',
                     "q/y.c": '#include "../p/x.h"\n#include "b.h"\n'}
            for f, text in files.items():
                os.makedirs(os.path.join(top, os.path.dirname(f)), exist_ok=True)
                with open(os.path.join(top, f), "w") as fp:
                    fp.write(text)
            self.assertEqual(sorted(floor_breaks(userspace_includes(top))),
                             ["lib/a.h from p", "q/y.c from None", "q/y.c from p"])


if __name__ == "__main__":
    unittest.main()
