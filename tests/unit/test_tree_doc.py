# SPDX-License-Identifier: GPL-2.0
"""docs/tree.md, the newcomer's map, stays true to the tree: every file
it names exists, and its pictures of floors list every .c file of
dm-smr, dm-caveat and common/ on the floor the calls put it (the longest
chain of calls below it, as test_layering.py reads the calls). A file
added, moved or given a new call fails here until the map says so.
Read from the sources, so it needs no kernel build."""
import glob
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_layering  # noqa: E402

ROOT = test_layering.ROOT
DOC = os.path.join(ROOT, "docs", "tree.md")
MODULES = ["dm-smr", "dm-caveat", "common"]
FLOOR = re.compile(r"^\s*(\d+)\s")
CFILE = re.compile(r"(?<![\w/-])([\w-]+\.c)\b")
TICKED = re.compile(r"`([^`\s]+)`")
EXTS = (".c", ".h", ".py", ".sh", ".md", ".rst", ".fio", ".ini", ".in", ".8")


def code_blocks(text):
    return re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)


def drawn_floors(text):
    """{file: floor} from the code blocks whose lines start with a floor
    number; a line without one continues the floor above it."""
    out = {}
    for block in code_blocks(text):
        floor = None
        for line in block.split("\n"):
            m = FLOOR.match(line)
            if m:
                floor = int(m.group(1))
            if floor is None:
                continue
            for name in CFILE.findall(line):
                out.setdefault(name, []).append(floor)
    return out


def true_floors(mod):
    edges = test_layering.graph(mod)
    memo = {}

    def floor(f):
        if f not in memo:
            memo[f] = 1 + max((floor(g) for g in edges[f]), default=-1)
        return memo[f]
    return {os.path.basename(f): floor(f) for f in edges}


def named_files(text):
    """The file and folder names in backquotes (a.[ch] is a.c and a.h)."""
    names = set()
    for tok in TICKED.findall(text):
        tok = tok.rstrip(",.;:")
        if tok.endswith("/") or tok.endswith(EXTS) or tok.endswith(".[ch]"):
            if tok.endswith(".[ch]"):
                names |= {tok[:-4] + "c", tok[:-4] + "h"}
            else:
                names.add(tok)
    return names


def exists(name):
    """Anywhere in the tree: from the top, or under a top folder, or as a
    file's or folder's last path parts."""
    name = name.rstrip("/")
    if glob.glob(os.path.join(ROOT, name)) or glob.glob(os.path.join(ROOT, "*", name)):
        return True
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for n in dirs + files:
            if os.path.join(d, n).endswith(os.sep + name):
                return True
    return False


class TreeDocTest(unittest.TestCase):
    def setUp(self):
        with open(DOC, encoding="utf-8") as f:
            self.text = f.read()

    def test_floors_match_the_calls(self):
        drawn = drawn_floors(self.text)
        want = {}
        for mod in MODULES:
            want.update(true_floors(mod))
        self.assertEqual({f: n for f, n in drawn.items() if len(n) > 1}, {},
                         "drawn more than once")
        self.assertEqual(sorted(set(want) - set(drawn)), [], "not drawn")
        self.assertEqual(sorted(set(drawn) - set(want)), [], "drawn, not in the tree")
        wrong = {f: (drawn[f][0], n) for f, n in want.items() if drawn[f][0] != n}
        self.assertEqual(wrong, {}, "file: (floor drawn, floor of its calls)")

    def test_named_files_exist(self):
        names = named_files(self.text)
        self.assertGreater(len(names), 40)
        self.assertEqual(sorted(n for n in names if not exists(n)), [])

    def test_finders(self):
        text = "```\n 1  a.c  b.c\n    c.c\n 0  d.c\n```\n`x.[ch]` `lib/` `make`\n"
        self.assertEqual(drawn_floors(text), {"a.c": [1], "b.c": [1], "c.c": [1], "d.c": [0]})
        self.assertEqual(named_files(text), {"x.c", "x.h", "lib/"})


if __name__ == "__main__":
    unittest.main()
