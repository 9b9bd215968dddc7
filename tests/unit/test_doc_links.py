# SPDX-License-Identifier: GPL-2.0
"""Links between the markdown docs resolve: every [text](file.md#anchor)
and [text](#anchor) in README.md and docs/*.md names a file that exists
and, for a markdown file, a heading whose GitHub anchor is the one given.
Sections move (docs/benchmarks.md became a reference and a log); a link
left pointing at the old heading fails here, not in a reader's browser."""
import glob
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"\]\(([^)\s]*)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def slug(title):
    """GitHub's anchor for a heading, for the headings these docs use."""
    t = re.sub(r"`([^`]*)`", r"\1", title)
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"[*_]{1,2}([^*_]+)[*_]{1,2}", r"\1", t)
    t = re.sub(r"[^\w\- ]", "", t.strip().lower())
    return t.replace(" ", "-")


def anchors(path):
    seen, out, fence = {}, set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
            m = None if fence else HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def broken_links(sources):
    bad, cache = [], {}
    for src in sources:
        with open(src, encoding="utf-8") as f:
            lines = f.read().split("\n")
        fence = False
        for no, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
            if fence or line.startswith("    "):
                continue	# code, not links
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target):
                    continue	# a URL
                name, _, frag = target.partition("#")
                path = os.path.normpath(os.path.join(os.path.dirname(src), name)) if name else src
                where = "%s:%d: %s" % (os.path.relpath(src, ROOT), no, target)
                if not os.path.exists(path):
                    bad.append(where + " (no such file)")
                elif frag and path.endswith(".md"):
                    if path not in cache:
                        cache[path] = anchors(path)
                    if frag not in cache[path]:
                        bad.append(where + " (no such heading)")
    return bad


class DocLinksTest(unittest.TestCase):
    def test_links_resolve(self):
        docs = [os.path.join(ROOT, "README.md")] + \
            sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
        self.assertEqual(broken_links(docs), [])

    def test_slugs(self):
        self.assertEqual(slug("Exact figures (instruction counting)"),
                         "exact-figures-instruction-counting")
        self.assertEqual(slug("bench/run-dm --scale: a 64 TiB device"),
                         "benchrun-dm---scale-a-64-tib-device")
        self.assertEqual(slug("The `smr` target"), "the-smr-target")

    def test_finds_a_broken_one(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            a = os.path.join(d, "a.md")
            with open(a, "w") as f:
                f.write("# Top\n\n## Part two\n\n[ok](#part-two) [bad](#part-three) [none](b.md)\n")
            self.assertEqual(len(broken_links([a])), 2)


if __name__ == "__main__":
    unittest.main()
